#pragma once
// The training-step closed form and its inputs: per-layer compute times from the GPU model, DDP
// gradient buckets in PyTorch's order, and the overlap of bucket all-reduces with backward.
//
//   T_step = T_fwd + max(T_bwd, T_sync - T_tail) + T_tail + T_opt
//
// T_sync is the all-reduce time of every bucket on the one communication stream; T_tail is the last
// bucket's, which cannot start before backward ends. The form assumes the first bucket is ready as
// backward starts (PyTorch's small first bucket makes that nearly true); the event-driven step
// (models/step_sim.hpp) checks it.
#include <cstdint>
#include <functional>
#include <vector>

#include "models/attention_kernels.hpp"
#include "models/gpu.hpp"
#include "models/memory_bound_kernels.hpp"
#include "models/transformer.hpp"
#include "sim/core/units.hpp"

namespace syncsim::models {

// PyTorch DDP defaults (torch/csrc/distributed/c10d/reducer.hpp): 1 MiB first bucket, 25 MiB cap.
struct DdpParams {
  Bytes first_bucket{1 << 20};
  Bytes bucket_cap{25 << 20};
  int64_t gradient_bytes_per_param = 2;  // bf16 gradients
  // false (default): buckets in the order gradients become ready, which is what PyTorch's
  // rebuild_buckets() produces after the first iteration (the steady state every later step runs
  // with). true: the first iteration's buckets, in reverse model.parameters() order, where each
  // block's norms (registered after attention and MLP in Hugging Face's Llama and GPT blocks) come
  // first in reverse, so the bucket holding them waits for the end of the block's backward.
  bool parameter_order = false;
};

struct GradientBucket {
  Bytes size{0};
  // Fraction of backward done when the bucket's last gradient is ready (0 = start, 1 = end).
  // Non-decreasing over buckets in ready order; not necessarily with parameter_order.
  double ready_at = 0;
};

// Gradients become ready in reverse order of the forward pass (PyTorch buckets parameters in
// reverse order of model.parameters(), approximating exactly that). Tensors are never split: one
// larger than the cap gets a bucket of its own, as in DDP. Per block, the tensors in backward order
// are the MLP down, gate/up, then the attention output, value, key and query projections and the
// two norms.
std::vector<GradientBucket> ddp_buckets(const TransformerShape& model, const DdpParams& ddp);

// The part of the model one data-parallel replica's rank holds under tensor and pipeline
// parallelism: blocks [first_layer, first_layer + layers) (layers = 0: all), the input embedding on
// the first stage, the output head and final norm on the last, every linear layer's weight (and
// the vocabulary-parallel embedding and head) split over `tensor_parallel` ranks (Megatron); norms
// are replicated. The default scope is the whole model, where this equals ddp_buckets above.
// Mixture of experts: a MoE block's tensors in backward order are its routed experts (1 /
// expert_parallel of them on this rank, ready once the block's MLP backward is done, work taken
// proportional to the activated parameters: the top-k experts), the shared experts' down and up
// projections and the router, then attention and norms as in a dense block; `gradients` picks the
// dense tensors (reduced over data parallel x context parallel) or the routed experts' (over the
// expert-data-parallel group, models/expert_parallel.hpp).
enum class GradientSet : uint8_t { All, Dense, Experts };
struct BucketScope {
  uint32_t first_layer = 0;
  uint32_t layers = 0;
  bool input_embedding = true;
  bool output_head = true;
  uint32_t tensor_parallel = 1;
  uint32_t expert_parallel = 1;
  GradientSet gradients = GradientSet::All;
};
std::vector<GradientBucket> ddp_buckets(const TransformerShape& model, const DdpParams& ddp,
                                        const BucketScope& scope);

enum class Recompute : uint8_t { None, Selective, Full };

struct ComputeParams {
  int64_t micro_batch = 1;  // sequences per GPU per micro-batch
  DType dtype = DType::Bf16;
  Recompute recompute = Recompute::None;
  // The framework's kernels: how its pointwise work is fused (models/memory_bound_kernels.hpp)
  // and which attention kernel it runs (models/attention_kernels.hpp). Megatron-Core with
  // Transformer Engine by default; scenario files of PyTorch recipes say eager or compiled.
  KernelFusion kernels = KernelFusion::Fused;
  AttentionKernel attention_kernel = AttentionKernel::Cudnn;
};

// How one GPU's share of a block shrinks under tensor and context parallelism (Megatron-LM):
// - tensor parallel t: every GEMM's output (column-parallel QKV and MLP up) or input (row-parallel
//   attention output and MLP down) dimension is divided by t, attention heads are divided by t,
//   the logits GEMM is vocabulary-parallel (vocab / t). Elementwise work (norms, residuals,
//   dropout) is replicated on every TP rank unless sequence_parallel, which divides it by t.
// - context parallel c: each rank holds s / c of the tokens: GEMMs see b*s/c rows, attention
// computes
//   its s/c queries against all s keys (so attention work is divided by c as well).
// Smaller GEMMs lose efficiency through the GEMM model (wave quantization or the calibrated curve),
// so t*c GPUs are not exactly t*c times faster.
struct ComputeSplit {
  uint32_t tensor = 1;
  uint32_t context = 1;
  bool sequence_parallel = false;
};

// Seconds per micro-batch on one GPU.
struct LayerCompute {
  double layer_forward = 0;       // one block
  double layer_backward = 0;      // one block, including recomputation
  double attention_forward = 0;   // the scores and weighted-values part of layer_forward
  double attention_backward = 0;  // ... and of layer_backward
  double head_forward = 0;        // the logits GEMM
  double head_backward = 0;
  // The block's four linear layers in forward, each one GEMM (part of layer_forward): what tensor
  // parallelism's communication can overlap with (models/parallelism.hpp, tp_comm_overlap).
  double qkv_forward = 0;
  double attention_out_forward = 0;
  double mlp_up_forward = 0;  // with SwiGLU the gate and up projections as one GEMM
  double mlp_down_forward = 0;
  double elementwise_forward = 0;   // norms, residuals, activations, casts at HBM bandwidth
  double elementwise_backward = 0;  // ... their backward (part of layer_backward)
};

// One block's compute by op class (seconds on one GPU per micro-batch): the four linear layers,
// the attention core, the elementwise work, and in backward the recomputed forward work
// (selective: the attention core; full: the whole block). Each direction sums to the block's
// layer_forward / layer_backward.
struct BlockOpClasses {
  double qkv = 0;
  double attention = 0;
  double attention_out = 0;
  double mlp_up = 0;
  double mlp_down = 0;
  double elementwise = 0;
  double recompute = 0;
  double total() const {
    return qkv + attention + attention_out + mlp_up + mlp_down + elementwise + recompute;
  }
};
BlockOpClasses block_forward_classes(const LayerCompute& lc);
// Backward: each linear layer's input and weight gradients (twice its forward GEMM), the attention
// core's backward, the pointwise ops' backward.
BlockOpClasses block_backward_classes(const LayerCompute& lc);

LayerCompute layer_compute(const TransformerShape& model, const GpuSpec& gpu,
                           const ComputeParams& p, const ComputeSplit& split = {});

struct ComputeTimes {
  Time forward = Time::zero();   // one micro-batch
  Time backward = Time::zero();  // one micro-batch, including recomputation
};

// Per-block GEMMs (QKV, attention output, MLP) through gemm_seconds, attention through its fused
// kernel's published rate (or two batched GEMMs per head when unfused), the logits GEMM, and the
// memory-bound ops op by op at HBM bandwidth with a launch each. Backward is twice the forward
// GEMMs (input and weight gradients), attention's backward, the pointwise ops' backward, plus the
// recomputed forward when asked.
// Equals layers x layer_compute(...).layer_* + head_* (one GPU, no model parallelism).
ComputeTimes compute_times(const TransformerShape& model, const GpuSpec& gpu,
                           const ComputeParams& p);

struct StepInputs {
  Time forward = Time::zero();
  Time backward = Time::zero();
  Time optimizer = Time::zero();
  std::vector<Time> bucket_sync;  // all-reduce time of each bucket, in launch order
};

struct StepBreakdown {
  Time step = Time::zero();
  Time forward = Time::zero();
  Time backward = Time::zero();
  Time optimizer = Time::zero();
  Time sync_total = Time::zero();
  Time tail = Time::zero();
  Time exposed_comm = Time::zero();  // step time not covered by compute
  double mfu = 0;
};

// `model_flops` is the work of one step across all GPUs (training_flops_per_token x tokens).
StepBreakdown closed_form_step(const StepInputs& in, double model_flops, int64_t gpus,
                               double peak_flops_per_gpu);

// A bucket all-reduce at the bandwidth bound takes 2 (n-1)/n S / B, B a node's bus bandwidth (its
// NICs, over which NCCL spreads its channels). NCCL's trees (a chain inside each node, a double
// binary tree between nodes, one per channel) reach it for the large buckets of a DDP step: on
// scenarios/ddp-70b-16k.yaml at 1k GPUs (fabric.fat_tree.pods=1) the closed-form step at factor
// 1.0 is 6.744 s against 6.747 s simulated. (It was 1.15 while trees were rank-level and ran on
// one channel, and 1.58 while tree plans wrongly used PXN.) tests/run/test_tree_step_factor.cpp
// re-checks it against the simulated step. Only expected times use it (the run estimate and its
// progress display); the simulated step is the answer.
inline constexpr double kTreeAllReduceTimeOverBandwidthBound = 1.0;

}  // namespace syncsim::models
