#include "models/expert_parallel.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/parallelism.hpp"

namespace syncsim::models {

uint32_t expert_data_parallel(const ParallelLayout& l, uint32_t data_parallel) {
  const uint32_t replicas = std::max<uint32_t>(1, data_parallel) * std::max<uint32_t>(1, l.context);
  return replicas / std::max<uint32_t>(1, l.expert);
}

void check_expert_layout(const TransformerShape& m, const ParallelLayout& l,
                         uint32_t data_parallel) {
  const uint32_t ep = std::max<uint32_t>(1, l.expert);
  if (ep == 1) return;
  if (!is_moe(m)) {
    throw std::invalid_argument(
        "expected a mixture-of-experts model (model.experts > 0) for "
        "expert_parallel " +
        std::to_string(ep) + ", got the dense model " + m.name);
  }
  if (m.experts % ep != 0) {
    throw std::invalid_argument("expected an expert-parallel degree dividing the " +
                                std::to_string(m.experts) + " routed experts, got " +
                                std::to_string(ep));
  }
  const uint32_t replicas = std::max<uint32_t>(1, data_parallel) * std::max<uint32_t>(1, l.context);
  if (replicas % ep != 0) {
    throw std::invalid_argument(
        "expected an expert-parallel degree dividing data_parallel x context_parallel (" +
        std::to_string(data_parallel) + " x " + std::to_string(std::max<uint32_t>(1, l.context)) +
        " = " + std::to_string(replicas) + "), got " + std::to_string(ep));
  }
  // Megatron-Core refuses to train MoE layers under tensor parallelism without sequence
  // parallelism (MoELayer.forward, megatron/core/transformer/moe/moe_layer.py): the all-to-all
  // dispatcher splits the tokens over TP and gathers them back after the all-to-all.
  if (l.tensor > 1 && !l.sequence_parallel) {
    throw std::invalid_argument(
        "expected sequence_parallel: true with tensor_parallel " + std::to_string(l.tensor) +
        " and expert_parallel " + std::to_string(ep) +
        " (Megatron-Core trains MoE layers under tensor parallelism only with sequence "
        "parallelism), got sequence_parallel: false");
  }
}

namespace {

// Rank of the j-th DP x CP rank (j = d * CP + c) of stage p at tensor rank t.
uint32_t replica_rank(const ParallelLayout& l, uint32_t data_parallel, uint32_t t, uint32_t p,
                      uint32_t j) {
  const uint32_t cp = std::max<uint32_t>(1, l.context);
  const ParallelLayout dense{std::max<uint32_t>(1, l.tensor), cp,
                             std::max<uint32_t>(1, l.pipeline)};
  return megatron_rank(dense, data_parallel, t, j % cp, p, j / cp);
}

}  // namespace

std::vector<std::vector<uint32_t>> expert_parallel_rank_groups(const ParallelLayout& l,
                                                               uint32_t data_parallel) {
  const uint32_t ep = std::max<uint32_t>(1, l.expert);
  const uint32_t replicas = data_parallel * std::max<uint32_t>(1, l.context);
  std::vector<std::vector<uint32_t>> groups;
  for (uint32_t p = 0; p < std::max<uint32_t>(1, l.pipeline); ++p)
    for (uint32_t t = 0; t < std::max<uint32_t>(1, l.tensor); ++t)
      for (uint32_t g = 0; g < replicas / ep; ++g) {
        groups.emplace_back();
        for (uint32_t e = 0; e < ep; ++e)
          groups.back().push_back(replica_rank(l, data_parallel, t, p, g * ep + e));
      }
  return groups;
}

std::vector<std::vector<uint32_t>> expert_data_parallel_rank_groups(const ParallelLayout& l,
                                                                    uint32_t data_parallel,
                                                                    uint32_t stage) {
  const uint32_t ep = std::max<uint32_t>(1, l.expert);
  const uint32_t replicas = data_parallel * std::max<uint32_t>(1, l.context);
  std::vector<std::vector<uint32_t>> groups;
  for (uint32_t t = 0; t < std::max<uint32_t>(1, l.tensor); ++t)
    for (uint32_t e = 0; e < ep; ++e) {
      groups.emplace_back();
      for (uint32_t g = 0; g < replicas / ep; ++g)
        groups.back().push_back(replica_rank(l, data_parallel, t, stage, g * ep + e));
    }
  return groups;
}

namespace {

// T k h 2 f: the routed copies of T tokens, in bf16, padded to capacity.
int64_t routed_token_bytes(int64_t tokens, const TransformerShape& m,
                           std::optional<double> capacity_factor) {
  const int64_t bytes = tokens * m.experts_per_token * m.hidden * 2;
  if (!capacity_factor) return bytes;
  return static_cast<int64_t>(static_cast<double>(bytes) * *capacity_factor);
}

int64_t context_tokens(const TransformerShape& m, const ComputeParams& c, const ParallelLayout& l) {
  return c.micro_batch * static_cast<int64_t>(m.sequence / std::max<uint32_t>(1, l.context));
}

}  // namespace

int64_t ep_all_to_all_bytes(const TransformerShape& m, const ComputeParams& c,
                            const ParallelLayout& l, std::optional<double> capacity_factor) {
  // With TP > 1 (sequence parallel, which check_expert_layout requires) each TP rank dispatches
  // its own T / TP tokens (MoEAlltoAllTokenDispatcher.token_dispatch: all_to_all over ep_group of
  // the tokens permuted on this rank).
  return routed_token_bytes(context_tokens(m, c, l) / std::max<uint32_t>(1, l.tensor), m,
                            capacity_factor);
}

int64_t ep_tensor_gather_bytes(const TransformerShape& m, const ComputeParams& c,
                               const ParallelLayout& l, std::optional<double> capacity_factor) {
  if (std::max<uint32_t>(1, l.tensor) == 1 || std::max<uint32_t>(1, l.expert) == 1) return 0;
  // MoEAlltoAllTokenDispatcher.dispatch_postprocess: gather_from_sequence_parallel_region over
  // tp_group of the tokens the all-to-all brought; each of the TP ranks contributes its
  // T / TP k h 2 f (balanced routing), so the gathered buffer is T k h 2 f.
  return routed_token_bytes(context_tokens(m, c, l), m, capacity_factor);
}

std::pair<int, int> ep_all_to_alls_per_layer(const ComputeParams& c) {
  // Dispatch + combine in forward, their gradients in backward; full recomputation reruns the
  // forward pair before the backward (Megatron recomputes the whole layer, its all-to-alls too).
  return {2, c.recompute == Recompute::Full ? 4 : 2};
}

LayerCompute moe_layer_compute(const TransformerShape& m, const GpuSpec& gpu,
                               const ComputeParams& p, const ComputeSplit& split,
                               uint32_t expert_parallel, std::optional<double> capacity_factor) {
  LayerCompute lc = layer_compute(m, gpu, p, split);
  const double t = std::max<uint32_t>(1, split.tensor);
  const double c = std::max<uint32_t>(1, split.context);
  const double ep = std::max<uint32_t>(1, expert_parallel);
  const double tokens = static_cast<double>(p.micro_batch) * m.sequence / c;
  const double h = m.hidden;
  const double k = m.experts_per_token;
  const double f = capacity_factor.value_or(1.0);
  const double width = m.moe_ffn;
  const double up_width = m.mlp == MlpKind::SwiGlu ? 2 * width : width;
  const DType dtype = p.dtype;
  const DType other = p.dtype == DType::Fp8 ? DType::Bf16 : p.dtype;

  // EP x TP (sequence parallel): the router and the first permutation see this TP rank's T / TP
  // tokens (the hidden states stay sequence-split until the dispatcher's all-gather over TP after
  // the all-to-all); the routed experts then get every token of the TP group, so their rows are
  // as without TP and their width is moe_ffn / TP. EP 1 keeps the model it had (the router on T).
  const double local_tokens = ep > 1 && t > 1 ? tokens / t : tokens;
  const double router = gemm_seconds(gpu, other, local_tokens, m.experts, h);
  double up = 0;
  double down = 0;
  if (m.shared_experts > 0) {
    // Shared experts are a TP-sharded MLP on the gathered T tokens (SharedExpertMLP).
    up += gemm_seconds(gpu, dtype, tokens, m.shared_experts * up_width / t, h);
    down += gemm_seconds(gpu, dtype, tokens, h, m.shared_experts * width / t);
  }
  // Balanced routing: the EP group's EP T k token-expert pairs spread over its E experts.
  const double local = m.experts / ep;
  const double rows = tokens * k * ep / m.experts * f;
  const double grouped_launches = (local - 1) * gpu.kernel_launch_s;  // one grouped GEMM each
  up += local * gemm_seconds(gpu, dtype, rows, up_width / t, h) - grouped_launches;
  down += local * gemm_seconds(gpu, dtype, rows, h, width / t) - grouped_launches;
  // Permutation before dispatch and unpermutation after combine: each reads and writes the
  // routed copies of the rank's tokens (T k f, or T / TP k f under EP x TP). Sorting the gathered
  // tokens by local expert (sort_chunks_by_idxs) is not counted, as without TP.
  const double permute = 2 * 2.0 * local_tokens * k * f * h * 2.0 / gpu.hbm_bytes_per_s;

  const double dense_mlp = lc.mlp_up_forward + lc.mlp_down_forward;
  const double moe_gemms = router + up + down;
  lc.layer_forward += moe_gemms + permute - dense_mlp;
  lc.layer_backward += 2.0 * (moe_gemms - dense_mlp) + permute;
  if (p.recompute == Recompute::Full) lc.layer_backward += moe_gemms + permute - dense_mlp;
  lc.mlp_up_forward = up;
  lc.mlp_down_forward = down;
  return lc;
}

std::vector<StageBucket> stage_gradient_buckets(const TransformerShape& m, const DdpParams& ddp,
                                                BucketScope scope) {
  std::vector<StageBucket> out;
  if (!is_moe(m)) {
    for (const GradientBucket& b : ddp_buckets(m, ddp, scope)) out.push_back({b, false});
    return out;
  }
  scope.gradients = GradientSet::Dense;
  const std::vector<GradientBucket> dense = ddp_buckets(m, ddp, scope);
  scope.gradients = GradientSet::Experts;
  const std::vector<GradientBucket> experts = ddp_buckets(m, ddp, scope);
  std::size_t e = 0;
  for (const GradientBucket& b : dense) {
    while (e < experts.size() && experts[e].ready_at < b.ready_at)
      out.push_back({experts[e++], true});
    out.push_back({b, false});
  }
  for (; e < experts.size(); ++e) out.push_back({experts[e], true});
  return out;
}

std::vector<uint32_t> virtual_stage_moe_layers(const ParallelLayout& l, const TransformerShape& m) {
  const std::vector<uint32_t> split = pipeline_stage_layers(l, m.layers);
  std::vector<uint32_t> moe(split.size(), 0);
  uint32_t first = 0;
  for (std::size_t j = 0; j < split.size(); ++j) {
    for (uint32_t layer = first; layer < first + split[j]; ++layer) {
      if (is_moe_layer(m, layer)) ++moe[j];
    }
    first += split[j];
  }
  return moe;
}

std::vector<uint32_t> pipeline_rank_moe_layers(const ParallelLayout& l, const TransformerShape& m) {
  const uint32_t pp = std::max<uint32_t>(1, l.pipeline);
  const std::vector<uint32_t> per_stage = virtual_stage_moe_layers(l, m);
  std::vector<uint32_t> per_rank(pp, 0);
  for (std::size_t j = 0; j < per_stage.size(); ++j) per_rank[j % pp] += per_stage[j];
  return per_rank;
}

}  // namespace syncsim::models
