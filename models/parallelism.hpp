#pragma once
// Tensor, context and pipeline parallelism composed with data parallelism (TP x CP x PP x DP), as
// a closed form (the step is not simulated event by event; StepResult::engine says "closed_form").
//
// Rank placement (Megatron-LM order, megatron/core/parallel_state.py: order "tp-cp-ep-dp-pp", the
// first innermost; torchtitan's device mesh ["pp", "dp_replicate", "dp_shard", "cp", "tp"] is the
// same): tensor-parallel ranks innermost, then context, then data parallel, pipeline outermost:
// rank = ((p * DP + d) * CP + c) * TP + t, and rank r runs on the r-th GPU of the fabric. With
// TP <= GPUs per host a tensor-parallel group is inside one host (NVLink); a data-parallel group's
// ranks are TP x CP apart, on neighbouring hosts with the same local GPU index (one rail on a
// rail-optimized fabric), and the pipeline stages are a whole DP x CP x TP block apart. Every
// collective below is timed once on an idle copy of the fabric at the scenario's fidelity with ALL
// groups of its kind running it at the same time, so groups that share links as placed slow each
// other.
//
// Per GPU and micro-batch (layer_compute with ComputeSplit{TP, CP, sequence_parallel}): the GEMMs
// of L/PP blocks with their weights split TP ways on b*s/CP tokens; attention on s/CP queries
// against s keys and heads/TP heads; elementwise work replicated over TP unless sequence parallel.
// So a GPU does about 1/(TP*CP*PP) of a replica's work, less efficiently for the smaller GEMMs.
//
// Communication per block and micro-batch:
//   TP (Megatron): 2 all-reduces of the activations (b * s/CP * h * 2 bytes) in forward and 2 in
//     backward (2 more in backward under full recomputation); with sequence parallelism each
//     becomes an all-gather + a reduce-scatter of the same buffer. Exposed: Megatron runs them on
//     the compute stream (no TP-communication overlap).
//   CP: ring exchange of K/V: an all-gather over the CP group of the K and V shards
//     (2 * b * s/CP * kv_heads/TP * head_dim * 2 bytes each) in forward; in backward the K/V again
//     and a reduce-scatter of their gradients. It overlaps the attention compute; only what exceeds
//     it is exposed (per block: max(0, comm - attention)).
//   PP: one send of the activations (b * s/CP * h * 2 bytes, / TP with sequence parallelism) to the
//     next stage per micro-batch in forward, the same size of gradients back in backward, on the
//     critical path (1F1B waits for its receive).
//   DP: gradients of the stage's parameters / TP in DDP buckets (bucket_cap_mb), all-reduced over
//   the
//     data x context group (context-parallel ranks hold the same weights), overlapped with the last
//     micro-batch's backward as in the DDP closed form.
//
// Pipeline (1F1B with m = grad_accumulation micro-batches, p stages of time t_i = t_fwd,i +
// t_bwd,i, each stage's work on one micro-batch):
//   T_pipe = (m - 1) * max_i t_i + sum_i t_i,  bubble = T_pipe - m * max_i t_i
//   so the bubble is (p - 1) / m of the ideal time m * t for equal stages (Megatron's definition;
//   (p - 1) / (m + p - 1) of the pipeline time).
// Interleaved 1F1B (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU
// Clusters Using Megatron-LM", section 2.2.2): each rank holds v model chunks of 1/v of its layers,
// so warm-up and cool-down walk p*v virtual stages of t_i / v each:
//   T_pipe = m * max_i t_i + (sum_i t_i - max_i t_i) / v,  bubble (p - 1) / (v m) for equal stages,
// which is the 1F1B form at v = 1. The price is v times the point-to-point sends per micro-batch
// (a rank receives from its neighbour once per chunk, the first rank v - 1 times in forward and
// the last v - 1 times in backward), all counted on the critical path (Megatron's overlap_p2p_comm
// hides part of them; not modelled), and activation memory on the first rank grows by
// 1 + (p - 1) / (p v) (Korthikanti et al. 2022, section 4.2.3).
// Stages: the layers are split evenly over the p*v virtual stages (Megatron requires it); with
// embedding_in_pipeline_split / loss_in_pipeline_split the embedding and the loss count as one
// layer each, so the first and last virtual stages get one transformer layer fewer. The Llama 3
// paper does exactly this for the 126 layers of 405B ("we reduce one Transformer layer each from
// the first and the last stages", Meta 2024, section 3.3.2): 126 + 2 = 128 = 8 x 8 x 2.
// Step: for each stage i, its last backward ends at end_i (stage 0 last; stage i ends
// sum_{j<i} t_bwd,j / v earlier); its gradient sync follows the DDP closed form over its last
// micro-batch's backward, T_i = (end_i - t_bwd,i) + max(t_bwd,i, T_sync,i - T_tail,i) + T_tail,i;
// the step is max_i T_i + T_opt (Adam on the GPU's parameters). With TP = CP = PP = 1 this is the
// DDP closed form.
//
// TP communication overlap (tp_comm_overlap, with sequence parallelism): Transformer Engine
// splits each all-gather / reduce-scatter and its GEMM into TP chunks and runs them as a two-stage
// pipeline (ring exchange), so of a collective c and a GEMM g, c/TP + (TP - 1) max(0, c - g)/TP is
// left exposed (overlapped_exposure). Pairs per block, forward: all-gather with QKV, reduce-scatter
// with the attention output, all-gather with the MLP up (and gate), reduce-scatter with the MLP
// down; backward: their conjugates with the data-gradient GEMMs of the same shapes (all-gather of
// the output gradients with the attention output and MLP down, reduce-scatter with QKV and MLP up);
// full recomputation repeats the forward pairs. The GEMMs are taken as fast as without
// communication beside them (the comm kernels' SMs are not charged).
//
// Distributed optimizer (layout.distributed_optimizer, Megatron's --use-distributed-optimizer):
// each DP bucket is reduce-scattered instead of all-reduced over the DP x CP group (the same
// overlap with the last backward), Adam updates 1/d of the stage's parameters, and the updated
// parameters are all-gathered bucket by bucket while the next step's first forward runs
// (overlap_param_gather, which NeMo's communication-overlap callback turns on): what of the
// all-gathers the stage's first micro-batch forward does not cover is added to the step. Memory:
// 4 + 12/d bytes per parameter instead of 16 (bf16 weights and gradients whole, the fp32 master
// weights and Adam moments sharded). With TP = CP = PP = 1 the step still runs here (the DDP
// closed form with those two changes).
//
// FSDP (parallelism: fsdp, FULL_SHARD) composed with TP/CP/PP, as torchtitan and Llama 3 run it:
// each stage's parameters (their TP shard) are sharded over its DP x CP group in units of
// fsdp.layers_per_unit blocks. Per micro-batch a unit is all-gathered before its forward and again
// before its backward and its gradients reduce-scattered after; the first unit's gathers are
// exposed, every later one is prefetched behind the unit before (max(0, AG - F) and
// max(0, AG - B) exposed per unit, as FSDP's closed form for equal units), the reduce-scatters run
// on their own stream (what they lag behind the gather-paced backward is the tail after the last
// micro-batch), and the root unit (embedding; head on the last stage) is gathered once before the
// step and reduced once after it. Memory: 16/d bytes per parameter, two gathered units and one
// unit's gradients, and the activations. Without model parallelism this agrees with the FSDP
// engine's closed form within 3 % (tested); the event-driven FSDP engine runs that case.
//
// Mixture of experts (models/expert_parallel.hpp): MoE blocks take their own compute time, each
// adds its expert-parallel dispatch and combine all-to-alls (exposed) per micro-batch, with
// TP > 1 also the all-gather and reduce-scatter of the dispatched tokens over the TP group
// (exposed, counted in the TP communication), and the routed experts' gradients reduce over the
// expert-data-parallel group (DP x CP / EP ranks).
//
// Perturbations: the slowest rank's compute multiplier applies to every stage (the step is
// synchronous). Not modelled: the interleaved schedule's point-to-point overlap, CP communication
// overlap beyond attention, the tied-embedding all-reduce between first and last stage, and
// contention between concurrent TP, CP, PP and DP traffic of different kinds.
#include <cstdint>
#include <vector>

#include "models/expert_parallel.hpp"
#include "models/step_sim.hpp"

namespace syncsim::models {

// 1F1B pipeline time and bubble for per-stage times (forward + backward of one micro-batch through
// all of a pipeline rank's layers); `virtual_stages` > 1 is the interleaved schedule.
struct PipelineTime {
  Time total = Time::zero();
  Time bubble = Time::zero();
  double bubble_fraction = 0;  // bubble / (m * max stage time)
};
PipelineTime pipeline_1f1b(const std::vector<Time>& stage_times, uint32_t micro_batches,
                           uint32_t virtual_stages = 1);

// Transformer layers of each virtual pipeline stage in model order: pipeline x virtual_pipeline
// entries, virtual stage j on pipeline rank j mod pipeline (see above). Throws
// std::invalid_argument saying what does not divide.
std::vector<uint32_t> pipeline_stage_layers(const ParallelLayout& layout, uint32_t layers);
// Layers per pipeline rank (the sum over its chunks).
std::vector<uint32_t> pipeline_rank_layers(const ParallelLayout& layout, uint32_t layers);

// Activation bytes one tensor-parallel all-reduce moves per block (nccl-tests' S): b * s/CP * h
// * 2.
int64_t tp_activation_bytes(const TransformerShape& model, const ComputeParams& compute,
                            const ParallelLayout& layout);
// Number of TP collectives per block and micro-batch: {forward, backward} all-reduces (or, with
// sequence parallelism, all-gather + reduce-scatter pairs).
std::pair<int, int> tp_collectives_per_layer(const ComputeParams& compute);

// What is left of a collective `comm` pipelined with a GEMM `gemm` in `chunks` chunks (above).
Time overlapped_exposure(Time comm, Time gemm, uint32_t chunks);

// Rank of (tensor t, context c, pipeline p, data d) in Megatron order, with `data_parallel`
// replicas.
uint32_t megatron_rank(const ParallelLayout& layout, uint32_t data_parallel, uint32_t t, uint32_t c,
                       uint32_t p, uint32_t d);

// What the event-driven model-parallel step (models/model_parallel_step.hpp) takes from the
// closed form: the compute per layer, the communication it keeps as the closed form times it (TP
// and CP, inside the compute stream), and what it runs on the shared fabric instead (PP sends, EP
// all-to-alls, the data-parallel buckets). Times per micro-batch and layer, unperturbed (a rank's
// compute multiplier applies to the compute, not to the communication).
struct ParallelStepParts {
  using Groups = std::vector<std::vector<uint32_t>>;  // GPUs
  uint32_t data_parallel = 1;
  // Transformer layers of each virtual stage (pipeline x virtual_pipeline, virtual stage s on
  // pipeline rank s mod pipeline) and how many of them are MoE layers.
  std::vector<uint32_t> virtual_stage_layers;
  std::vector<uint32_t> virtual_stage_moe_layers;
  Time dense_forward = Time::zero();  // one dense block's compute
  Time dense_backward = Time::zero();
  Time moe_forward = Time::zero();  // one MoE block's compute (experts included)
  Time moe_backward = Time::zero();
  Time head_forward = Time::zero();  // the output head and loss (last virtual stage)
  Time head_backward = Time::zero();
  // Exposed TP collectives and K/V ring per block, timed on the idle fabric (every group at once).
  Time tp_forward = Time::zero();
  Time tp_backward = Time::zero();
  // ... and an MoE block's: the same, less the MLP's pair under EP x TP without shared experts
  // (moe_block_mlp_tp false; models/expert_parallel.hpp).
  Time tp_moe_forward = Time::zero();
  Time tp_moe_backward = Time::zero();
  bool moe_block_mlp_tp = true;
  Time cp_forward = Time::zero();
  Time cp_backward = Time::zero();
  // Context parallel: one block's attention core (what the K/V ring overlaps, unscaled) and the
  // nccl-tests S of the ring's all-gather (and the gradients' reduce-scatter): CP K/V shards.
  Time attention_forward = Time::zero();
  Time attention_backward = Time::zero();
  int64_t cp_ring_bytes = 0;
  // Pipeline sends: bytes per micro-batch and the GPU pairs (sender on stage 0, receiver on stage
  // 1, per (d, c, t)); stage i's pairs are these moved by i stage blocks.
  int64_t p2p_bytes = 0;
  // Expert parallelism: bytes of one dispatch or combine all-to-all, their count per MoE block
  // (forward, backward), and the EP groups of GPUs of every stage.
  int64_t ep_bytes = 0;
  int ep_forward_count = 0;
  int ep_backward_count = 0;
  Groups ep_groups;
  // EP x TP: bytes of the all-gather (or reduce-scatter) over TP of the dispatched tokens, one
  // per all-to-all, and their time per MoE block at idle-fabric pace (forward, backward).
  int64_t ep_tp_bytes = 0;
  Time ep_tp_forward = Time::zero();
  Time ep_tp_backward = Time::zero();
  // Data parallel, per pipeline rank: its gradient buckets in ready order, and the groups their
  // collectives run over (the dense groups, or for experts the expert-data-parallel groups).
  std::vector<std::vector<StageBucket>> stage_buckets;
  std::vector<Groups> stage_dense_groups;
  std::vector<Groups> stage_expert_groups;
  bool sharded_optimizer = false;  // reduce-scatter + parameter all-gather (distributed optimizer)
  CollectiveAlgo dp_algorithm = CollectiveAlgo::Ring;
  double slowest_multiplier = 1.0;  // the closed form's (every stage at the slowest rank's pace)
  // FSDP (FULL_SHARD) composed with model parallelism: units of fsdp_layers_per_unit blocks,
  // gathered before each forward and backward and reduce-scattered after the backward over the
  // stage's dense groups; bytes per block of one GPU's TP shard, and each pipeline rank's root
  // unit (embedding on the first, head on the last), gathered once and reduced once per step.
  bool fsdp = false;
  uint32_t fsdp_layers_per_unit = 1;
  int64_t fsdp_layer_gather_bytes = 0;
  int64_t fsdp_layer_reduce_bytes = 0;
  std::vector<int64_t> fsdp_root_gather_bytes;
  std::vector<int64_t> fsdp_root_reduce_bytes;
  // Per pipeline rank: FSDP's shard groups (its gathers and reduce-scatters; every DP x CP group
  // without HSDP) and HSDP's replicate groups (the shards' all-reduces; empty without HSDP).
  uint32_t fsdp_replicas = 1;
  uint32_t fsdp_shard = 1;  // ranks per shard group
  std::vector<Groups> stage_fsdp_shard_groups;
  std::vector<Groups> stage_fsdp_replica_groups;
};

// The closed-form step (see above). `config.rank_to_gpu` holds TP*CP*PP*DP ranks. `parts`, when
// given, receives what the event-driven step reuses.
StepResult simulate_parallel_step(const net::NetworkSpec& spec, Fidelity fidelity,
                                  const StepConfig& config, ParallelStepParts* parts = nullptr);

}  // namespace syncsim::models
