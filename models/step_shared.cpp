// What the training-step engines share (models/step_sim.hpp "Shared by the step engines"): per-rank
// compute multipliers, activation memory, Adam's time, utilization, and the CollNet plan options.
#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/step_sim.hpp"
#include "sim/core/rng.hpp"

namespace syncsim::models {

namespace {

// Mixed-precision Adam touches fp32 master weights, both moments and the bf16 gradient and weights:
// about 28 bytes per parameter, at HBM bandwidth.
constexpr double kAdamBytesPerParam = 28.0;

double standard_normal(RngStream& rng) {
  // Box-Muller from our own uniforms, so results do not depend on the standard library.
  const double u1 = 1.0 - rng.uniform();
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
}

}  // namespace

std::string_view to_string(DataParallelism p) {
  return p == DataParallelism::Fsdp ? "fsdp" : "ddp";
}

Time scaled(Time t, double factor) {
  return Time::ps(
      static_cast<int64_t>(std::llround(static_cast<double>(t.picoseconds()) * factor)));
}

double activation_bytes(const TransformerShape& m, const ComputeParams& p) {
  // Korthikanti et al. 2022 (no tensor parallelism) with FlashAttention, which never stores the
  // s x s score matrix (their 5*a*s/h term): 34*s*b*h bytes per layer without recomputation,
  // 2*s*b*h with full recomputation (only each layer's input is kept).
  const double sbh =
      static_cast<double>(m.sequence) * static_cast<double>(p.micro_batch) * m.hidden;
  const double per_layer = p.recompute == Recompute::Full ? 2.0 * sbh : 34.0 * sbh;
  return per_layer * m.layers;
}

Time adam_time(double params, const GpuSpec& gpu) {
  return Time::from_seconds(params * kAdamBytesPerParam / gpu.hbm_bytes_per_s);
}

std::vector<double> rank_compute_multipliers(const StepConfig& config, uint32_t n) {
  std::vector<double> multiplier(n, 1.0);
  for (uint32_t rank = 0; rank < n; ++rank) {
    if (config.perturbations.compute_noise_cv > 0) {
      RngStream rng(config.seed, mix64(static_cast<uint64_t>(RngStreamKind::Compute), rank));
      multiplier[rank] =
          std::max(0.5, 1.0 + config.perturbations.compute_noise_cv * standard_normal(rng));
    }
    if (config.perturbations.straggler == rank) {
      multiplier[rank] *= 1.0 + config.perturbations.straggler_slowdown;
    }
  }
  return multiplier;
}

double fill_utilization(StepResult& r, const StepConfig& config, uint32_t ranks) {
  const double tokens =
      static_cast<double>(ranks) * static_cast<double>(config.compute.micro_batch) *
      static_cast<double>(std::max<uint32_t>(1, config.grad_accumulation)) * config.model.sequence;
  const double model_flops = training_flops_per_token(config.model) * tokens;
  double hardware_flops = model_flops;
  const double forward_flops_per_token = training_flops_per_token(config.model) / 3.0;
  if (config.compute.recompute == Recompute::Full)
    hardware_flops += forward_flops_per_token * tokens;
  if (config.compute.recompute == Recompute::Selective) {
    hardware_flops += 4.0 * config.model.layers * static_cast<double>(config.model.hidden) *
                      config.model.sequence * tokens;
  }
  const double peak = peak_flops(config.gpu, config.compute.dtype) * ranks;
  r.mfu = model_flops / (r.step.seconds() * peak);
  r.hfu = hardware_flops / (r.step.seconds() * peak);
  r.tokens_per_s = tokens / r.step.seconds();
  r.grad_accumulation = std::max<uint32_t>(1, config.grad_accumulation);
  r.global_batch =
      uint64_t{ranks} * static_cast<uint64_t>(config.compute.micro_batch) * r.grad_accumulation;
  r.tokens_per_step = tokens;
  return model_flops;
}

void set_step_collnet_options(PlanOptions& o, const StepConfig& config, int64_t bytes) {
  const uint32_t g = std::max(1u, config.gpus_per_host);
  const uint32_t nics = config.nics_per_host == 0 ? g : std::min(config.nics_per_host, g);
  o.chunk_bytes = nccl_collnet_chunk_bytes(o.algo == CollectiveAlgo::CollnetDirect, bytes,
                                           config.channels, std::min(nics, 8u), g);
  o.collnet_trees = config.collnet_trees;
  if (config.collnet_outstanding > 0) {
    o.connection_depth = std::min(std::max(1u, o.connection_depth), config.collnet_outstanding);
  }
}

}  // namespace syncsim::models
