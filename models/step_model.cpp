#include "models/step_model.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace syncsim::models {

namespace {
Time seconds(double s) { return Time::from_seconds(s); }
}  // namespace

std::vector<GradientBucket> ddp_buckets(const TransformerShape& m, const DdpParams& ddp) {
  return ddp_buckets(m, ddp, BucketScope{});
}

std::vector<GradientBucket> ddp_buckets(const TransformerShape& m, const DdpParams& ddp,
                                        const BucketScope& scope) {
  const int64_t h = m.hidden;
  const int64_t kv = static_cast<int64_t>(m.kv_heads) * (h / m.heads);
  const int64_t ffn = m.ffn;
  const int64_t b = m.biases ? 1 : 0;
  const int64_t t = std::max<int64_t>(1, scope.tensor_parallel);
  // A block's tensors in the order backward produces their gradients, with the work of their
  // backward (the parameters a token runs through: all but the routed experts not in its top-k).
  struct BlockTensor {
    int64_t params;
    int64_t work;
    bool expert;
  };
  // Under tensor parallelism the weights are split t ways; the biases of the row-parallel layers
  // (MLP down, attention output), the norms, MLA's down-projections and the router are replicated.
  std::vector<BlockTensor> attention;
  if (is_mla(m)) {
    const int64_t heads = m.heads;
    const int64_t qk = int64_t{m.qk_nope_head_dim} + m.qk_rope_head_dim;
    const int64_t q_rank = m.q_lora_rank;
    const int64_t kv_rank = m.kv_lora_rank;
    const std::vector<int64_t> mla = {
        heads * m.v_head_dim * h / t,                                        // output
        kv_rank * heads * (int64_t{m.qk_nope_head_dim} + m.v_head_dim) / t,  // kv up
        h * (kv_rank + m.qk_rope_head_dim) + kv_rank,                        // kv down + norm
        q_rank > 0 ? q_rank * heads * qk / t : h * heads * qk / t,           // q up (or q)
        q_rank > 0 ? h * q_rank + q_rank : 0,                                // q down + norm
        (1 + b) * h * 2,                                                     // the two norms
    };
    for (int64_t p : mla) attention.push_back({p, p, false});
  } else {
    for (int64_t p : {h * h / t + b * h,      // attention output
                      (h * kv + b * kv) / t,  // value
                      (h * kv + b * kv) / t,  // key
                      (h * h + b * h) / t,    // query
                      (1 + b) * h * 2}) {     // the two norms
      attention.push_back({p, p, false});
    }
  }
  std::vector<BlockTensor> dense_block = {
      {ffn * h / t + b * h, ffn * h / t + b * h, false},  // MLP down
      {(m.mlp == MlpKind::SwiGlu ? 2 : 1) * (h * ffn + b * ffn) / t,
       (m.mlp == MlpKind::SwiGlu ? 2 : 1) * (h * ffn + b * ffn) / t, false},  // MLP up (+ gate)
  };
  dense_block.insert(dense_block.end(), attention.begin(), attention.end());
  std::vector<BlockTensor> moe_block;
  if (is_moe(m)) {
    const int64_t ep = std::max<int64_t>(1, scope.expert_parallel);
    const int64_t expert = expert_parameters(m) / t;
    moe_block = {
        {m.experts / ep * expert, m.experts_per_token * expert, true},  // routed experts
        {m.shared_experts * expert, m.shared_experts * expert, false},  // shared experts
        {router_parameters(m), router_parameters(m), false},            // router
    };
    moe_block.insert(moe_block.end(), attention.begin(), attention.end());
  }
  auto selected = [&](const BlockTensor& x) {
    return scope.gradients == GradientSet::All ||
           x.expert == (scope.gradients == GradientSet::Experts);
  };
  const bool dense_side = scope.gradients != GradientSet::Experts;
  struct Tensor {
    int64_t params;
    double ready_at;
  };
  std::vector<Tensor> order;
  const uint32_t layers =
      scope.layers == 0 ? m.layers - std::min(m.layers, scope.first_layer) : scope.layers;
  const int64_t vocab_share = static_cast<int64_t>(m.vocab) * h / t;
  if (scope.output_head && dense_side) {
    // Untied: the output projection. Tied, on a last pipeline stage without the input embedding:
    // Megatron keeps a copy of the word embeddings there for the head.
    if (!m.tied_embeddings || !scope.input_embedding) order.push_back({vocab_share, 0.0});
    order.push_back({(1 + b) * h, 0.0});  // final norm
  }
  for (uint32_t l = 0; l < layers; ++l) {
    // Block l (counting from the output) runs its backward during [l, l + 1) / layers; within it a
    // tensor's gradient is ready once the work for the tensors before it, and its own, is done.
    const uint32_t layer = scope.first_layer + layers - 1 - l;  // in model order
    const std::vector<BlockTensor>& block = is_moe_layer(m, layer) ? moe_block : dense_block;
    int64_t block_work = 0;
    for (const BlockTensor& x : block) block_work += x.work;
    const auto block_params = static_cast<double>(block_work);
    int64_t cumulative = 0;
    const std::size_t first = order.size();
    for (const BlockTensor& x : block) {
      cumulative += x.work;
      if (!selected(x) || x.params == 0) continue;
      order.push_back({x.params, (l + static_cast<double>(cumulative) / block_params) / layers});
    }
    // First iteration: reverse parameter order puts the block's norms (the last tensor in ready
    // order) first.
    if (ddp.parameter_order && order.size() > first)
      std::rotate(order.begin() + static_cast<std::ptrdiff_t>(first), order.end() - 1, order.end());
  }
  if (scope.input_embedding && dense_side) {
    int64_t input_side = vocab_share;  // embedding (and the tied head)
    if (m.learned_positions) input_side += static_cast<int64_t>(m.sequence) * h;
    order.push_back({input_side, 1.0});
  }

  std::vector<GradientBucket> buckets;
  int64_t filled = 0;
  double ready = 0;
  for (const Tensor& tensor : order) {
    const int64_t bytes = tensor.params * ddp.gradient_bytes_per_param;
    const int64_t cap = buckets.empty() ? ddp.first_bucket.count() : ddp.bucket_cap.count();
    if (filled > 0 && filled + bytes > cap) {
      buckets.push_back({Bytes{filled}, ready});
      filled = 0;
      ready = 0;
    }
    filled += bytes;
    ready = std::max(ready, tensor.ready_at);  // a bucket is ready when its last gradient is
  }
  if (filled > 0) buckets.push_back({Bytes{filled}, ready});
  return buckets;
}

LayerCompute layer_compute(const TransformerShape& m, const GpuSpec& gpu, const ComputeParams& p,
                           const ComputeSplit& split) {
  const double t = std::max<uint32_t>(1, split.tensor);
  const double c = std::max<uint32_t>(1, split.context);
  const double tokens = static_cast<double>(p.micro_batch) * m.sequence / c;
  const double queries = m.sequence / c;
  const double h = m.hidden;
  const double kv = static_cast<double>(m.kv_heads) * (h / m.heads);
  const double ffn = m.ffn;
  const double head_dim = h / m.heads;
  const double batch_heads = static_cast<double>(p.micro_batch) * m.heads / t;
  // FP8 training runs only the transformer blocks' linear layers in FP8: Transformer Engine leaves
  // dot-product attention in BF16 unless asked (DelayedScaling's fp8_dpa defaults to false,
  // Megatron's --fp8-dot-product-attention is off by default), and Megatron's output layer is a
  // plain ColumnParallelLinear outside TE's fp8_autocast. Those run at the BF16 peak.
  const DType linear_dtype = p.dtype;
  const DType other_dtype = p.dtype == DType::Fp8 ? DType::Bf16 : p.dtype;

  // Megatron fuses the Q, K, V projections into one GEMM and SwiGLU's gate and up projections
  // into another; PyTorch models (torchtitan's Llama) run them as separate linear layers.
  const bool separate_projections = p.kernels != KernelFusion::Fused;
  double qkv = 0;
  double attention_out = 0;
  if (is_mla(m)) {
    // MLA's projections (their down-projections replicated under TP, the up-projections split by
    // heads) and an output projection from heads x v_head_dim.
    const double heads = m.heads;
    const double q_rank = m.q_lora_rank;
    const double kv_rank = m.kv_lora_rank;
    const double qk_dim = qk_head_dim(m);
    qkv = (q_rank > 0 ? gemm_seconds(gpu, linear_dtype, tokens, q_rank, h) +
                            gemm_seconds(gpu, linear_dtype, tokens, heads * qk_dim / t, q_rank)
                      : gemm_seconds(gpu, linear_dtype, tokens, heads * qk_dim / t, h)) +
          gemm_seconds(gpu, linear_dtype, tokens, kv_rank + m.qk_rope_head_dim, h) +
          gemm_seconds(gpu, linear_dtype, tokens, heads * (m.qk_nope_head_dim + m.v_head_dim) / t,
                       kv_rank);
    attention_out = gemm_seconds(gpu, linear_dtype, tokens, h, heads * m.v_head_dim / t);
  } else {
    qkv = separate_projections ? gemm_seconds(gpu, linear_dtype, tokens, h / t, h) +
                                     2 * gemm_seconds(gpu, linear_dtype, tokens, kv / t, h)
                               : gemm_seconds(gpu, linear_dtype, tokens, (h + 2 * kv) / t, h);
    attention_out = gemm_seconds(gpu, linear_dtype, tokens, h, h / t);
  }
  const double mlp_up =
      m.mlp != MlpKind::SwiGlu ? gemm_seconds(gpu, linear_dtype, tokens, ffn / t, h)
      : separate_projections   ? 2 * gemm_seconds(gpu, linear_dtype, tokens, ffn / t, h)
                               : gemm_seconds(gpu, linear_dtype, tokens, 2 * ffn / t, h);
  const double mlp_down = gemm_seconds(gpu, linear_dtype, tokens, h, ffn / t);
  const double block_gemms = qkv + attention_out + mlp_up + mlp_down;
  // Every shape here is a decoder-only language model with a causal mask. FlashAttention's FLOP
  // count: 4 b h s_q s_k d forward, halved under the mask (MLA: the query/key and value widths
  // differ, 2 b h s_q s_k (d_qk + d_v)), 2.5 times that backward (benchmarks/
  // benchmark_flash_attention.py in Dao-AILab/flash-attention). Context parallelism splits the
  // sequence into 2 CP chunks and gives rank i chunks i and 2 CP - 1 - i (Transformer Engine's
  // load balancing), so each rank keeps 1/CP of that work: its s / CP queries against all s keys.
  const double forward_flops =
      is_mla(m) ? 2.0 * batch_heads * queries * m.sequence * (qk_head_dim(m) + v_head_dim(m)) / 2.0
                : 4.0 * batch_heads * queries * m.sequence * head_dim / 2.0;
  double attention = 0;
  double attention_backward = 0;
  if (gpu.attention_tflops > 0) {
    // A measured flash-attention rate (a profiler trace's calls with shapes), one kernel each way.
    attention = forward_flops / (gpu.attention_tflops * 1e12) + gpu.kernel_launch_s;
    attention_backward = 2.5 * forward_flops / (gpu.attention_tflops * 1e12) + gpu.kernel_launch_s;
  } else if (p.attention_kernel != AttentionKernel::Unfused) {
    const double keys = m.sequence;
    attention = forward_flops / attention_flops_per_s(gpu, p.attention_kernel, false, keys) +
                gpu.kernel_launch_s;
    attention_backward =
        2.5 * forward_flops / attention_flops_per_s(gpu, p.attention_kernel, true, keys) +
        gpu.kernel_launch_s;
  } else {
    // Unfused: the scores (queries x s per head) and the weighted sum of values as batched GEMMs
    // over micro-batch x heads, over the causal mask's lower triangle plus its 128-wide diagonal
    // tiles, (1 + tile / s) / 2 of the s x s scores.
    constexpr double kAttentionKeyTile = 128.0;
    const double causal_share = std::min(
        1.0, (1.0 + kAttentionKeyTile / std::max(1.0, static_cast<double>(m.sequence))) / 2.0);
    const double qk_dim = is_mla(m) ? qk_head_dim(m) : head_dim;
    const double v_dim = is_mla(m) ? v_head_dim(m) : head_dim;
    attention =
        causal_share * (batch_heads * (gemm_seconds(gpu, other_dtype, queries, m.sequence, qk_dim) +
                                       gemm_seconds(gpu, other_dtype, queries, v_dim, m.sequence)) -
                        2 * (batch_heads - 1) * gpu.kernel_launch_s);  // batched: one launch each
    attention_backward = 2.0 * attention;                              // two GEMMs per forward one
  }
  const MemoryBoundPass pointwise =
      block_memory_bound(m, p.kernels, p.dtype == DType::Fp8, tokens, t, split.sequence_parallel);
  const double elementwise = pointwise.forward.seconds(gpu);
  const double elementwise_backward = pointwise.backward.seconds(gpu);
  const double block = block_gemms + attention + elementwise;
  const MemoryBoundPass head_pointwise =
      head_memory_bound(m, p.kernels, tokens, t, split.sequence_parallel);
  const double logits = gemm_seconds(gpu, other_dtype, tokens, m.vocab / t, h);

  LayerCompute lc;
  lc.layer_forward = block;
  lc.attention_forward = attention;
  lc.layer_backward = 2.0 * block_gemms + attention_backward + elementwise_backward;
  lc.attention_backward = attention_backward;
  if (p.recompute == Recompute::Full) lc.layer_backward += block;
  if (p.recompute == Recompute::Selective) lc.layer_backward += attention;
  lc.head_forward = logits + head_pointwise.forward.seconds(gpu);
  lc.head_backward = 2.0 * logits + head_pointwise.backward.seconds(gpu);
  lc.qkv_forward = qkv;
  lc.attention_out_forward = attention_out;
  lc.mlp_up_forward = mlp_up;
  lc.mlp_down_forward = mlp_down;
  lc.elementwise_forward = elementwise;
  lc.elementwise_backward = elementwise_backward;
  return lc;
}

BlockOpClasses block_forward_classes(const LayerCompute& lc) {
  BlockOpClasses c;
  c.qkv = lc.qkv_forward;
  c.attention = lc.attention_forward;
  c.attention_out = lc.attention_out_forward;
  c.mlp_up = lc.mlp_up_forward;
  c.mlp_down = lc.mlp_down_forward;
  c.elementwise = lc.elementwise_forward;
  return c;
}

BlockOpClasses block_backward_classes(const LayerCompute& lc) {
  BlockOpClasses c;
  c.qkv = 2.0 * lc.qkv_forward;
  c.attention = lc.attention_backward;
  c.attention_out = 2.0 * lc.attention_out_forward;
  c.mlp_up = 2.0 * lc.mlp_up_forward;
  c.mlp_down = 2.0 * lc.mlp_down_forward;
  c.elementwise = lc.elementwise_backward;
  // What layer_backward holds beyond these: the recomputed forward work.
  c.recompute = std::max(0.0, lc.layer_backward - c.total());
  return c;
}

ComputeTimes compute_times(const TransformerShape& m, const GpuSpec& gpu, const ComputeParams& p) {
  const LayerCompute lc = layer_compute(m, gpu, p);
  return ComputeTimes{seconds(m.layers * lc.layer_forward + lc.head_forward),
                      seconds(m.layers * lc.layer_backward + lc.head_backward)};
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
