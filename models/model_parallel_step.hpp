#pragma once
// The event-driven model-parallel step: TP x CP x PP x DP (DDP buckets or Megatron's distributed
// optimizer) and expert parallelism, run operation by operation on the scenario's fabric, so that
// pipeline sends, expert all-to-alls and data-parallel gradient collectives share links as placed
// and feel whatever else runs there (other jobs, background traffic, faults).
//
// What runs where:
//   - Each pipeline rank runs its operations in the order of the pipeline schedule
//     (models/pipeline_schedule.hpp: 1F1B, or interleaved with virtual stages). An operation's
//     compute is its virtual stage's blocks (dense or MoE, the head on the last virtual stage) at
//     the closed form's per-block times, scaled by the slowest rank's compute multiplier among
//     the ranks the operation stands for (and timed stragglers).
//   - Tensor-parallel collectives and the context-parallel K/V ring stay inside the compute stream
//     at the closed form's exposed time per block, timed on an idle fabric (every group at once).
//     With TP and CP groups inside a host (NVLink) nothing else crosses their links, so this is
//     exact there. TP groups that span hosts run their collectives live instead, per block, as
//     barriers inside the operation (every TP group of the stage at once; all-gather then
//     reduce-scatter with sequence parallelism; with FSDP inside each unit's compute), unless
//     tp_comm_overlap is on. CP groups that span hosts run each block's K/V ring live beside its
//     attention core (all-gather forward, then the gradients' reduce-scatter backward; with FSDP
//     inside each unit's compute), unless expert parallelism or TP across hosts is on. In those
//     cases they do not load the shared fabric, and the step warns.
//   - Collective timing (StepConfig::model_parallel_idle_fabric_timing): live by default; or each
//     collective's idle-fabric duration shared among those that overlap on the same groups
//     (models/model_parallel_timing.cpp), the rule that makes 16k GPUs tractable.
//   - Pipeline sends (activations forward, gradients back, p2p_bytes per micro-batch and GPU pair)
//     run live once the sending operation ends; the receiving operation starts once its input
//     has arrived and its rank is free.
//   - Expert-parallel dispatch and combine all-to-alls run live inside the operation: a MoE
//     block's compute is cut into equal pieces around its all-to-alls, each all-to-all a barrier
//     over the stage's EP groups. With TP > 1 (EP x TP, models/expert_parallel.hpp) each
//     all-to-all has its all-gather or reduce-scatter of the dispatched tokens over the TP
//     groups: live barriers beside the TP collectives when TP groups span hosts, else inside the
//     compute stream at the closed form's idle-fabric time, as the TP collectives are.
//   - Data-parallel gradients: the rank's buckets become ready during its last micro-batch's
//     backward (the closed form's ready fractions, spread over the last micro-batch's chunks with
//     virtual stages) and run one at a time on the stage's communication stream, every group of
//     the stage at once: an all-reduce, or with the distributed optimizer a reduce-scatter. The
//     distributed optimizer's parameter all-gathers (overlap_param_gather) run live at the step's
//     start, and the stage's first forward ends no earlier than they do (the closed form's
//     max(0, gather - first forward)).
//   - The step ends when every stage's backward and gradient collectives are done, plus the
//     optimizer.
//
// Representative ranks (StepConfig::model_parallel_lockstep): the ranks of one pipeline stage
// differ only in which replica (DP x CP index) and TP index they hold, and their compute is the
// same up to perturbations. By default a stage's replicas advance together: one operation stream
// per pipeline rank stands for all its ranks, its sends are issued for every GPU pair at once,
// and its operation ends when the slowest of them has its input. Off, each replica (one TP group
// of one stage) has its own stream and waits only for its own sends; the two agree exactly on an
// idle symmetric fabric and differ where replicas feel different contention (measured in
// tests/models/test_model_parallel_step.cpp and docs/training-step.md).
//
//   - FSDP (FULL_SHARD) composed with model parallelism, as torchtitan and Llama 3 run it: an
//     operation runs its virtual stage's FSDP units in turn (backward in reverse), each once its
//     all-gather over the stage's DP x CP groups has finished; the operation's first unit is
//     gathered when the operation starts (exposed, as the closed form has it), each later one
//     while the unit before it computes; after each backward unit its reduce-scatter runs on a
//     second stream. The root unit (embedding, head) is gathered before the stage's first forward
//     and reduce-scattered after its last backward. The stage's replicas always advance together
//     here (its collectives span them).
//
// Not run by this engine (make_step_engine keeps the closed form): HSDP with model parallelism,
// which the closed form refuses too.
#include <memory>
#include <optional>
#include <string>

#include "models/step_engine.hpp"

namespace syncsim::models {

// Why the event-driven engine cannot run `config` (nullopt when it can).
std::optional<std::string> model_parallel_step_refusal(const StepConfig& config);

std::unique_ptr<StepEngine> make_model_parallel_step_engine(TransferBackend& backend,
                                                            const net::NetworkSpec& spec,
                                                            Fidelity fidelity,
                                                            const StepConfig& config);

// One step begun at time zero on `backend` and run to the end of its queue.
StepResult simulate_model_parallel_step(TransferBackend& backend, const net::NetworkSpec& spec,
                                        Fidelity fidelity, const StepConfig& config);

}  // namespace syncsim::models
