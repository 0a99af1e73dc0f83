#include "models/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace syncsim::models {

namespace {
Time seconds(double s) { return Time::from_seconds(s); }
}  // namespace

std::vector<GradientBucket> ddp_buckets(const TransformerShape& m, const DdpParams& ddp) {
  const int64_t h = m.hidden;
  const int64_t kv = static_cast<int64_t>(m.kv_heads) * (h / m.heads);
  const int64_t ffn = m.ffn;
  const int64_t b = m.biases ? 1 : 0;
  // One block's tensors in the order backward produces their gradients.
  std::vector<int64_t> block = {
      ffn * h + b * h,                                        // MLP down
      (m.mlp == MlpKind::SwiGlu ? 2 : 1) * (h * ffn + b * ffn),  // MLP up (+ gate)
      h * h + b * h,                                          // attention output
      h * kv + b * kv,                                        // value
      h * kv + b * kv,                                        // key
      h * h + b * h,                                          // query
      (1 + b) * h * 2,                                        // the two norms
  };
  struct Tensor {
    int64_t params;
    double ready_at;
  };
  std::vector<Tensor> order;
  const double layers = m.layers;
  if (!m.tied_embeddings) order.push_back({static_cast<int64_t>(m.vocab) * h, 0.0});
  order.push_back({(1 + b) * h, 0.0});  // final norm
  const double block_params = static_cast<double>(std::accumulate(block.begin(), block.end(), int64_t{0}));
  for (uint32_t l = 0; l < m.layers; ++l) {
    // Block l (counting from the output) runs its backward during [l, l + 1) / layers; within it a
    // tensor's gradient is ready once the work for the tensors before it, and its own, is done
    // (work taken proportional to parameters).
    int64_t cumulative = 0;
    for (int64_t p : block) {
      cumulative += p;
      order.push_back({p, (l + static_cast<double>(cumulative) / block_params) / layers});
    }
  }
  int64_t input_side = static_cast<int64_t>(m.vocab) * h;  // embedding (and the tied head)
  if (m.learned_positions) input_side += static_cast<int64_t>(m.sequence) * h;
  order.push_back({input_side, 1.0});

  std::vector<GradientBucket> buckets;
  int64_t filled = 0;
  double ready = 0;
  for (const Tensor& t : order) {
    const int64_t bytes = t.params * ddp.gradient_bytes_per_param;
    const int64_t cap = buckets.empty() ? ddp.first_bucket.count() : ddp.bucket_cap.count();
    if (filled > 0 && filled + bytes > cap) {
      buckets.push_back({Bytes{filled}, ready});
      filled = 0;
    }
    filled += bytes;
    ready = t.ready_at;
  }
  if (filled > 0) buckets.push_back({Bytes{filled}, ready});
  return buckets;
}

ComputeTimes compute_times(const TransformerShape& m, const GpuSpec& gpu, const ComputeParams& p) {
  const double tokens = static_cast<double>(p.micro_batch) * m.sequence;
  const double h = m.hidden;
  const double kv = static_cast<double>(m.kv_heads) * (h / m.heads);
  const double ffn = m.ffn;
  const double head_dim = h / m.heads;
  const double batch_heads = static_cast<double>(p.micro_batch) * m.heads;

  double block_gemms = gemm_seconds(gpu, p.dtype, tokens, h + 2 * kv, h)  // QKV
                       + gemm_seconds(gpu, p.dtype, tokens, h, h);       // output
  block_gemms += m.mlp == MlpKind::SwiGlu ? gemm_seconds(gpu, p.dtype, tokens, 2 * ffn, h)
                                          : gemm_seconds(gpu, p.dtype, tokens, ffn, h);
  block_gemms += gemm_seconds(gpu, p.dtype, tokens, h, ffn);  // MLP down
  // Scores (s x s per head) and the weighted sum of values, batched over micro-batch x heads.
  const double attention =
      batch_heads * (gemm_seconds(gpu, p.dtype, m.sequence, m.sequence, head_dim) +
                     gemm_seconds(gpu, p.dtype, m.sequence, head_dim, m.sequence)) -
      2 * (batch_heads - 1) * gpu.kernel_launch_s;  // batched: one launch each
  const double elementwise =
      p.elementwise_passes_per_layer * tokens * h * 2.0 / gpu.hbm_bytes_per_s;
  const double block = block_gemms + attention + elementwise;
  const double logits = gemm_seconds(gpu, p.dtype, tokens, m.vocab, h);

  const double forward = m.layers * block + logits;
  double backward = 2.0 * (m.layers * (block_gemms + attention) + logits) + m.layers * elementwise;
  if (p.recompute == Recompute::Full) backward += m.layers * block;
  if (p.recompute == Recompute::Selective) backward += m.layers * attention;
  return ComputeTimes{seconds(forward), seconds(backward)};
}

StepBreakdown closed_form_step(const StepInputs& in, double model_flops, int64_t gpus,
                               double peak_flops_per_gpu) {
  StepBreakdown b;
  b.forward = in.forward;
  b.backward = in.backward;
  b.optimizer = in.optimizer;
  for (Time t : in.bucket_sync) b.sync_total += t;
  b.tail = in.bucket_sync.empty() ? Time::zero() : in.bucket_sync.back();
  b.step = in.forward + std::max(in.backward, b.sync_total - b.tail) + b.tail + in.optimizer;
  b.exposed_comm = b.step - (in.forward + in.backward + in.optimizer);
  const double denominator = b.step.seconds() * static_cast<double>(gpus) * peak_flops_per_gpu;
  b.mfu = denominator > 0 ? model_flops / denominator : 0.0;
  return b;
}

}  // namespace syncsim::models
