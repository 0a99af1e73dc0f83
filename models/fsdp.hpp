#pragma once
// The FSDP (ZeRO-3, FULL_SHARD) training step, after PyTorch FSDP v1 with its defaults
// (references §7: BACKWARD_PRE, limit_all_gathers, all-gathers on their own stream).
//
// Units: the root unit (input embedding, output head, final norm, position table) and one unit per
// `layers_per_unit` transformer blocks. Every parameter is sharded over the n data-parallel ranks.
// Per micro-batch (FSDP reduce-scatters every micro-batch unless no_sync is used; syncsim does not
// model no_sync):
//   forward:  all-gather root, all-gather unit 1, forward unit 1 while unit 2 is gathered, ...,
//             forward unit U, the head's logits (the root stays gathered: FSDP does not reshard the
//             root after forward);
//   backward: the head's backward while unit U is gathered again (units are resharded after
//             forward), backward unit U while unit U-1 is gathered, ...; after each unit's backward
//             its gradients are reduce-scattered; the root's gradients last, after the embedding.
// Prefetch depth is one unit: the all-gather for compute task k is issued when task k-1 starts
// (implicit forward prefetch with limit_all_gathers keeps two units gathered; BACKWARD_PRE issues
// the next unit's all-gather as the current unit's backward begins). All-gathers run on one stream
// and reduce-scatters on another (PyTorch's two streams; `FsdpParams::separate_streams = false`
// puts them on one). The optimizer (on the 1/n shard) runs when the last reduce-scatter is done.
//
// Closed form (fsdp_closed_form), with collective times from an idle fabric and unperturbed
// compute: a max-plus recurrence over the compute tasks k,
//   gather_end(k) = max(stream_free, start(k-1)) + AG(k)       (AG issued when task k-1 starts)
//   start(k)      = max(end(k-1), gather_end(k)),  end(k) = start(k) + C(k)
//   reduce_end(k) = max(stream_free, end(k)) + RS(k)
//   T_step        = max(end(last), reduce_end(last)) + T_opt
// which for U equal units on separate streams is
//   T_fwd = AG_root + AG_1 + sum_{i<U} max(F_i, AG_{i+1}) + F_U + F_head
//   T_bwd = max(B_head, AG_U) + sum_{i>1} max(B_i, AG_{i-1}) + B_1,  tail = the reduce-scatters
//   left.
// The event-driven step (simulate_fsdp_step) runs the same dependencies on every rank with the
// collectives on the scenario's backend; it differs from the closed form through perturbations,
// and, when collectives run live, through contention between concurrent all-gathers and
// reduce-scatters (flow and packet fidelities).
#include <cstdint>
#include <vector>

#include "models/step_sim.hpp"

namespace syncsim::models {

struct FsdpUnit {
  int64_t params = 0;
  uint32_t first_layer = 0;
  uint32_t layers = 0;
  bool root = false;
};
// Root first, then the block units in forward order.
std::vector<FsdpUnit> fsdp_units(const TransformerShape& model, const FsdpParams& fsdp);

// One compute task of the step and the collectives it depends on / triggers.
struct FsdpTask {
  std::string name;
  Time duration = Time::zero();
  int32_t gather = -1;  // index into comms of the all-gather this task needs
  int32_t reduce = -1;  // index into comms of the reduce-scatter issued when this task ends
  bool backward = false;
  bool last_micro_batch = false;
};
struct FsdpComm {
  CollectiveOp op = CollectiveOp::AllGather;
  int32_t unit = 0;
  // All-gather / reduce-scatter: the whole unit (nccl-tests' S), within each shard group.
  // All-reduce (HSDP): the unit's gradient shard, across the replicas.
  int64_t bytes = 0;
  // HSDP: the replicas' all-reduce that follows this reduce-scatter on its stream (-1: none).
  int32_t then = -1;
};
struct FsdpSchedule {
  std::vector<FsdpTask> tasks;
  std::vector<FsdpComm> comms;
};
// With `replicas` > 1 (HSDP), every reduce-scatter is followed by an all-reduce of the unit's
// gradient shard (1/shard_ranks of it) across the replicas.
FsdpSchedule fsdp_schedule(const StepConfig& config, uint32_t shard_ranks = 1,
                           uint32_t replicas = 1);

// Per-GPU bytes a ring moves for one micro-batch: (n-1)/n of every unit gathered twice (forward and
// backward; the root once) and reduced once.
double fsdp_ring_bytes_per_gpu(const TransformerShape& model, const FsdpParams& fsdp,
                               uint32_t ranks);

struct FsdpTimeline {
  Time compute_end = Time::zero();
  Time comm_end = Time::zero();
  std::vector<CollectiveTiming> comms;
  std::vector<ComputeSlice> tasks;
};
// The recurrence above with comm durations given per comm index.
FsdpTimeline fsdp_closed_form(const FsdpSchedule& schedule, const std::vector<Time>& comm_duration,
                              bool separate_streams);

// Runs one FSDP step on `backend` (whose simulation must be at time zero); see step_sim.hpp for the
// meaning of reuse_bucket_timings (here: every collective of a given op and size is timed once on
// an idle fabric).
StepResult simulate_fsdp_step(TransferBackend& backend, const net::NetworkSpec& spec,
                              Fidelity fidelity, const StepConfig& config);

// The ranks of one shard group: FsdpParams::shard_degree, or all `ranks` when it is 0 (or not
// below `ranks`). Throws std::invalid_argument when it does not divide `ranks`.
uint32_t fsdp_shard_ranks(const FsdpParams& fsdp, uint32_t ranks);

// The algorithm FSDP's all-gathers and reduce-scatters run for the workload's `algo`.
CollectiveAlgo fsdp_gather_algorithm(CollectiveAlgo algo);

// The FSDP memory estimate (models/fsdp_memory.cpp).
// Bytes of GPU memory per rank (n: the ranks that shard it): the 1/n shard of weights, gradients
// and Adam state (16 bytes per parameter), the root gathered for the whole step, two block units
// gathered (current and prefetched), one unit's unsharded gradients, NCCL's buffers
// (fsdp_communication_memory) and the activations of one micro-batch.
double fsdp_memory_per_gpu(const StepConfig& config, uint32_t ranks);
// NCCL's buffers per GPU for FSDP's communicators: the shard group of `ranks` ranks (all-gathers
// and reduce-scatters) and, under HSDP, the replica group (all-reduces).
double fsdp_communication_memory(const StepConfig& config, uint32_t ranks);

}  // namespace syncsim::models
