#pragma once
// Expert parallelism (EP) for mixture-of-experts models in the closed-form step
// (models/parallelism.hpp) and the event-driven model-parallel step
// (models/model_parallel_step.hpp).
//
// Layout (Megatron-Core, megatron/core/parallel_state.py, order "tp-cp-ep-dp-pp"): the expert
// layers are laid out on the same ranks as the dense ones, with the expert-parallel dimension
// carved out of the data-parallel x context-parallel ranks of each pipeline stage and tensor rank:
// of the stage's DP x CP ranks, numbered j = d * CP + c, EP consecutive ones form an EP group and
// the ranks with the same j mod EP form an expert-data-parallel group of DP x CP / EP ranks. So EP
// must divide DP x CP and the routed experts. Expert tensor parallelism equals TP (Megatron-Core's
// default: --expert-tensor-parallel-size defaults to TP, megatron/training/arguments.py); the
// expert grid's TP groups are the dense ones (TP innermost in both rank generators), and the EP
// groups join ranks of the same TP rank, TP x CP apart.
//
// EP x TP (Megatron-Core's MoEAlltoAllTokenDispatcher, megatron/core/transformer/moe/
// token_dispatcher.py): sequence parallelism is required (MoELayer.forward refuses MoE under TP
// without it in training), so the hidden states reach the MoE layer split over TP, T / TP tokens
// per rank. The router and the first permutation run on those; the all-to-all over the EP group
// dispatches them (token_dispatch), then an all-gather over the TP group of the received tokens
// (dispatch_postprocess: gather_from_sequence_parallel_region with tp_group) gives every TP rank
// all the tokens of its E / EP local experts, whose weights are TP-sharded (moe_ffn / TP wide).
// Combine mirrors it: a reduce-scatter over TP (combine_preprocess:
// reduce_scatter_to_sequence_parallel_region), then the all-to-all back. Backward runs the
// conjugates (the all-gather's gradient is a reduce-scatter and the other way round).
//
// Routing is taken as balanced: each token's top-k experts are spread evenly over the EP ranks and
// over each rank's E / EP local experts (no load imbalance, no DeepSeek node-limited routing or
// token deduplication). Default dropless (no capacity factor), as Megatron-Core runs MoE unless
// --moe-expert-capacity-factor is given and as DeepSeek-V3 trains ("DeepSeek-V3 does not drop any
// tokens during training", arXiv:2412.19437 section 2.1.2). With a capacity factor f, every expert
// buffer is padded to f times its balanced share (GShard/Switch capacity, Megatron's
// --moe-pad-expert-input-to-capacity): dispatch, combine and expert GEMMs all carry f times the
// tokens.
//
// Per MoE layer and micro-batch on each rank (T = micro_batch x sequence / CP tokens, k top-k,
// h hidden, 2 bytes per bf16 element):
//   dispatch all-to-all over the EP group, S = T / TP k h 2 f bytes (S / EP to each peer,
//   nccl-tests' all-to-all S), and a combine all-to-all of the same size, in forward; the same two
//   in backward (their gradients), and again in backward under full recomputation. With TP > 1
//   each all-to-all has its all-gather (after dispatch) or reduce-scatter (before combine) over
//   the TP group, nccl-tests' S = T k h 2 f (the gathered buffer). Timed with the collective
//   runner (pairwise all-to-all, ring all-gather / reduce-scatter) on an idle copy of the fabric
//   with every group at once, and counted as exposed: Megatron runs them on the compute stream by
//   default (DeepSeek-V3's DualPipe overlaps them with compute; not modelled). The dense TP
//   collectives of an MoE block (attention, and the MLP pair, which the shared experts' gather and
//   scatter stand for) are counted as for a dense block. The probabilities sent beside the tokens
//   (k fp32 values per token, against h bf16) are not counted.
//   Compute: the router (T / TP x E x h GEMM under EP x TP, else T x E x h), shared experts (T
//   rows, shared x moe_ffn / TP wide), the local experts as one grouped GEMM of E / EP experts
//   with T k EP / E f rows each, moe_ffn / TP wide, and the token permutation and unpermutation
//   (each reads and writes the rank's T k h 2 bytes, T / TP under EP x TP, at HBM bandwidth).
// Gradients: the dense parameters (attention, norms, router, shared experts, embeddings) are
// reduced over the DP x CP group; the routed experts' over the expert-data-parallel group.
#include <cstdint>
#include <optional>
#include <vector>

#include "models/step_model.hpp"
#include "models/step_sim.hpp"
#include "models/transformer.hpp"

namespace syncsim::models {

// DP x CP / EP: the ranks that hold the same experts of a stage.
uint32_t expert_data_parallel(const ParallelLayout& layout, uint32_t data_parallel);

// Throws std::invalid_argument saying what does not fit (EP dividing DP x CP and the experts,
// EP with TP without sequence parallelism, EP on a dense model).
void check_expert_layout(const TransformerShape& model, const ParallelLayout& layout,
                         uint32_t data_parallel);

// Ranks (indices into rank_to_gpu order) of every EP group and of every expert-data-parallel
// group, over all pipeline stages and tensor ranks.
std::vector<std::vector<uint32_t>> expert_parallel_rank_groups(const ParallelLayout& layout,
                                                               uint32_t data_parallel);
std::vector<std::vector<uint32_t>> expert_data_parallel_rank_groups(const ParallelLayout& layout,
                                                                    uint32_t data_parallel,
                                                                    uint32_t stage);

// nccl-tests' S of one dispatch (or combine) all-to-all on one rank: T / TP k h 2 f bytes.
int64_t ep_all_to_all_bytes(const TransformerShape& model, const ComputeParams& compute,
                            const ParallelLayout& layout, std::optional<double> capacity_factor);
// nccl-tests' S of the all-gather (or reduce-scatter) over TP of the dispatched tokens under
// EP x TP: T k h 2 f bytes; 0 without EP or without TP.
int64_t ep_tensor_gather_bytes(const TransformerShape& model, const ComputeParams& compute,
                               const ParallelLayout& layout, std::optional<double> capacity_factor);
// All-to-alls per MoE layer and micro-batch: {forward, backward}.
std::pair<int, int> ep_all_to_alls_per_layer(const ComputeParams& compute);

// One MoE block on one GPU: the dense block's attention and elementwise work with its MLP replaced
// by the router, shared experts, local routed experts and the token permutations.
LayerCompute moe_layer_compute(const TransformerShape& model, const GpuSpec& gpu,
                               const ComputeParams& compute, const ComputeSplit& split,
                               uint32_t expert_parallel, std::optional<double> capacity_factor);

// A stage's gradient buckets in ready order on the one communication stream: for a dense model
// ddp_buckets(scope); for a MoE model the dense tensors' buckets and the routed experts' (1/EP of
// them, scope.expert_parallel) merged by when they are ready, `expert` marking the latter (Megatron
// keeps expert parameters in a buffer of their own, reduced over the expert-data-parallel group).
struct StageBucket {
  GradientBucket bucket;
  bool expert = false;
};
std::vector<StageBucket> stage_gradient_buckets(const TransformerShape& model, const DdpParams& ddp,
                                                BucketScope scope);

// MoE layers on each virtual stage (pipeline x virtual_pipeline, in model order: the layers of the
// stage that are not among the first model.dense_layers).
std::vector<uint32_t> virtual_stage_moe_layers(const ParallelLayout& layout,
                                               const TransformerShape& model);
// The same per pipeline rank (the sum over its chunks).
std::vector<uint32_t> pipeline_rank_moe_layers(const ParallelLayout& layout,
                                               const TransformerShape& model);

}  // namespace syncsim::models
