#pragma once
// The training-step closed form and its inputs: per-layer compute times from the GPU model, DDP
// gradient buckets in PyTorch's order, and the overlap of bucket all-reduces with backward.
//
//   T_step = T_fwd + max(T_bwd, T_sync - T_tail) + T_tail + T_opt
//
// T_sync is the all-reduce time of every bucket on the one communication stream; T_tail is the last
// bucket's, which cannot start before backward ends. The form assumes the first bucket is ready as
// backward starts (PyTorch's small first bucket makes that nearly true); the event-driven step
// (issue 5) checks it.
#include <cstdint>
#include <functional>
#include <vector>

#include "models/gpu.hpp"
#include "models/transformer.hpp"
#include "sim/core/units.hpp"

namespace syncsim::models {

// PyTorch DDP defaults (torch/csrc/distributed/c10d/reducer.hpp): 1 MiB first bucket, 25 MiB cap.
struct DdpParams {
  Bytes first_bucket{1 << 20};
  Bytes bucket_cap{25 << 20};
  int64_t gradient_bytes_per_param = 2;  // bf16 gradients
};

struct GradientBucket {
  Bytes size{0};
  // Fraction of backward done when the bucket's last gradient is ready (0 = start, 1 = end).
  double ready_at = 0;
};

// Gradients become ready in reverse order of the forward pass (PyTorch buckets parameters in reverse
// order of model.parameters(), approximating exactly that). Tensors are never split: one larger than
// the cap gets a bucket of its own, as in DDP. Per block, the tensors in backward order are the MLP
// down, gate/up, then the attention output, value, key and query projections and the two norms.
std::vector<GradientBucket> ddp_buckets(const TransformerShape& model, const DdpParams& ddp);

enum class Recompute : uint8_t { None, Selective, Full };

struct ComputeParams {
  int64_t micro_batch = 1;           // sequences per GPU per micro-batch
  DType dtype = DType::Bf16;
  Recompute recompute = Recompute::None;
  // Passes over the activations (B x s x h x 2 bytes) per block for norms, residuals, activations
  // and dropout: bandwidth-bound work that the GEMM roofline does not see.
  double elementwise_passes_per_layer = 16;
};

struct ComputeTimes {
  Time forward = Time::zero();   // one micro-batch
  Time backward = Time::zero();  // one micro-batch, including recomputation
};

// Per-block GEMMs (QKV, attention output, MLP) through gemm_seconds, attention scores and values as
// two batched GEMMs per head, the logits GEMM, and elementwise passes at HBM bandwidth. Backward is
// twice the forward GEMMs (input and weight gradients) plus the recomputed forward when asked.
ComputeTimes compute_times(const TransformerShape& model, const GpuSpec& gpu, const ComputeParams& p);

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

}  // namespace syncsim::models
