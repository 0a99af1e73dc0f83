// The closed-form step's data-parallel and composing sections (models/closed_form_step.hpp): FSDP
// composed with TP / CP / PP, the stage times and pipeline, the gradient sync per stage, the step
// of the critical stage and the memory per GPU.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "models/closed_form_step.hpp"
#include "models/communication_memory.hpp"
#include "models/expert_parallel.hpp"
#include "models/memory_warning.hpp"

namespace syncsim::models::closed_form {

// FSDP (FULL_SHARD) composed with TP/CP/PP: each stage's parameters (their TP shard) are sharded
// over its DP x CP group in units of fsdp.layers_per_unit blocks, gathered before each unit's
// forward and again before its backward, and its gradients reduce-scattered after its backward.
void ClosedFormStep::time_fsdp() {
  fsdp_ = config_.parallelism == DataParallelism::Fsdp;
  shard_ = config_.fsdp.shard_degree == 0 ? dp_ * cp_ : config_.fsdp.shard_degree;
  replicas_ = std::max<uint32_t>(1, dp_ * cp_ / std::max<uint32_t>(1, shard_));
  layer_shard_params_ = static_cast<double>(layer_parameters(model_)) / tp_;
  lpu_ = std::max<uint32_t>(1, config_.fsdp.layers_per_unit);
  fsdp_fwd_extra_.assign(pp_, Time::zero());
  fsdp_bwd_extra_.assign(pp_, Time::zero());
  fsdp_tail_.assign(pp_, Time::zero());
  fsdp_root_gather_.assign(pp_, Time::zero());
  fsdp_bytes_.assign(pp_, 0);
  fsdp_busy_.assign(pp_, Time::zero());
  if (!fsdp_) return;
  if (replicas_ > 1) r_.fsdp_shard_degree = shard_;
  const int64_t param_bytes = config_.fsdp.param_bytes;
  const int64_t gradient_bytes = config_.fsdp.gradient_bytes;
  if (parts_ != nullptr) {
    parts_->fsdp = true;
    parts_->fsdp_replicas = replicas_;
    parts_->fsdp_shard = shard_;
    parts_->fsdp_layers_per_unit = static_cast<uint32_t>(lpu_);
    for (uint32_t i = 0; i < pp_; ++i) {
      parts_->stage_fsdp_shard_groups.push_back(fsdp_groups(i, false));
      parts_->stage_fsdp_replica_groups.push_back(replicas_ > 1 ? fsdp_groups(i, true) : Groups{});
    }
    parts_->fsdp_layer_gather_bytes = static_cast<int64_t>(layer_shard_params_) * param_bytes;
    parts_->fsdp_layer_reduce_bytes = static_cast<int64_t>(layer_shard_params_) * gradient_bytes;
    for (uint32_t i = 0; i < pp_; ++i) {
      const auto root = static_cast<int64_t>(root_shard_params(i));
      parts_->fsdp_root_gather_bytes.push_back(root * param_bytes);
      parts_->fsdp_root_reduce_bytes.push_back(root * gradient_bytes);
    }
  }
  const Time f_layer = scaled(seconds(lc_.layer_forward), slowest_) + tp_fwd_ + cp_fwd_exposed_;
  const Time b_layer = scaled(seconds(lc_.layer_backward), slowest_) + tp_bwd_ + cp_bwd_exposed_;
  for (uint32_t i = 0; i < pp_; ++i) {
    const Groups groups = fsdp_groups(i, false);
    const double units = std::ceil(rank_layers_[i] / lpu_);
    const auto unit_params = static_cast<int64_t>(lpu_ * layer_shard_params_);
    const auto ag = timer_.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups,
                                unit_params * param_bytes);
    auto rs = timer_.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups,
                          unit_params * gradient_bytes);
    // HSDP: the shard's all-reduce over the replicas follows each reduce-scatter on its stream.
    IdleCollectiveTimer::Timing ar;
    if (replicas_ > 1) {
      ar = timer_.time(CollectiveOp::AllReduce, dp_algo_, fsdp_groups(i, true),
                       unit_params * gradient_bytes / shard_);
      rs.duration += ar.duration;
      rs.bytes_per_gpu += ar.bytes_per_gpu;
    }
    const Time f_unit = f_layer * static_cast<int64_t>(lpu_);
    const Time b_unit = b_layer * static_cast<int64_t>(lpu_);
    const auto later = static_cast<int64_t>(units) - 1;
    // The first unit's gather is exposed; each later one is prefetched behind the unit before.
    fsdp_fwd_extra_[i] = ag.duration + std::max(Time::zero(), ag.duration - f_unit) * later;
    fsdp_bwd_extra_[i] = ag.duration + std::max(Time::zero(), ag.duration - b_unit) * later;
    // Reduce-scatters run on their own stream behind the next unit's backward, which itself takes
    // max(B, AG) when its gather holds it up; after the last micro-batch what is left of them is
    // the tail.
    const Time b_paced = std::max(b_unit, ag.duration);
    fsdp_tail_[i] = rs.duration + std::max(Time::zero(), rs.duration - b_paced) * later;
    int64_t step_bytes =
        (2 * ag.bytes_per_gpu + rs.bytes_per_gpu) * static_cast<int64_t>(units) * mb_;
    fsdp_busy_[i] = (ag.duration * 2 + rs.duration) * (static_cast<int64_t>(units) * mb_);
    if (const auto root = static_cast<int64_t>(root_shard_params(i)); root > 0) {
      const auto rag =
          timer_.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups, root * param_bytes);
      auto rrs = timer_.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups,
                             root * gradient_bytes);
      if (replicas_ > 1) {
        const auto rar = timer_.time(CollectiveOp::AllReduce, dp_algo_, fsdp_groups(i, true),
                                     root * gradient_bytes / shard_);
        rrs.duration += rar.duration;
        rrs.bytes_per_gpu += rar.bytes_per_gpu;
      }
      fsdp_root_gather_[i] = rag.duration;
      fsdp_tail_[i] += rrs.duration;
      fsdp_busy_[i] += rag.duration + rrs.duration;
      step_bytes += rag.bytes_per_gpu + rrs.bytes_per_gpu;
    }
    fsdp_bytes_[i] = step_bytes;
    if (i == 0) {
      add_row("fsdp_all_gather", unit_params * param_bytes, ag.duration,
              2 * static_cast<int64_t>(units) * mb_, ag.protocol);
      add_row("fsdp_reduce_scatter", unit_params * gradient_bytes, rs.duration - ar.duration,
              static_cast<int64_t>(units) * mb_, rs.protocol);
      if (replicas_ > 1) {
        add_row("fsdp_all_reduce", unit_params * gradient_bytes / shard_, ar.duration,
                static_cast<int64_t>(units) * mb_, ar.protocol);
      }
    }
  }
}

PipelineTime ClosedFormStep::time_stages() {
  stage_fwd_.assign(pp_, Time::zero());
  stage_bwd_.assign(pp_, Time::zero());
  std::vector<Time> stage_total(pp_);
  for (uint32_t i = 0; i < pp_; ++i) {
    const bool last = i + 1 == pp_;
    const uint32_t n = rank_layers_[i];
    const uint32_t nm = rank_moe_layers_[i];
    // Dense blocks, then MoE blocks (none for a dense model, where this is n * layer time).
    double layers_f = (n - nm) * lc_.layer_forward;
    double layers_b = (n - nm) * lc_.layer_backward;
    if (nm > 0) {
      layers_f += nm * lc_moe_.layer_forward;
      layers_b += nm * lc_moe_.layer_backward;
    }
    const Time compute_f = scaled(seconds(layers_f + (last ? lc_.head_forward : 0.0)), slowest_);
    const Time compute_b = scaled(seconds(layers_b + (last ? lc_.head_backward : 0.0)), slowest_);
    // Receives per micro-batch: one per chunk, less the first chunk's input on the first rank
    // (forward) and the loss's gradient on the last (backward).
    const int64_t fwd_receives = vpi_ - (i == 0 ? 1 : 0);
    const int64_t bwd_receives = vpi_ - (last ? 1 : 0);
    stage_fwd_[i] = compute_f + (tp_fwd_ + cp_fwd_exposed_) * n + p2p_ * fwd_receives +
                    fsdp_fwd_extra_[i] + (ep_fwd_ + ep_tp_fwd_ - tp_moe_saved_fwd_) * nm;
    stage_bwd_[i] = compute_b + (tp_bwd_ + cp_bwd_exposed_) * n + p2p_ * bwd_receives +
                    fsdp_bwd_extra_[i] + (ep_bwd_ + ep_tp_bwd_ - tp_moe_saved_bwd_) * nm;
    stage_total[i] = stage_fwd_[i] + stage_bwd_[i];
  }
  const PipelineTime pipe = pipeline_1f1b(stage_total, m_, vp_);
  if (pp_ > 1) {
    // Each chunk of a rank takes 1/v of its time (the closed form's assumption).
    std::vector<Time> virtual_fwd(static_cast<std::size_t>(pp_) * vp_);
    std::vector<Time> virtual_bwd(virtual_fwd.size());
    for (std::size_t s = 0; s < virtual_fwd.size(); ++s) {
      virtual_fwd[s] = stage_fwd_[s % pp_] / vpi_;
      virtual_bwd[s] = stage_bwd_[s % pp_] / vpi_;
    }
    r_.pipeline_schedule = schedule_pipeline(virtual_fwd, virtual_bwd, pp_, m_);
  }
  return pipe;
}

// Gradient sync per stage, overlapped with its last backward (the DDP closed form).
void ClosedFormStep::time_gradient_sync(Time pipeline_total) {
  tokens_ = static_cast<double>(dp_) * static_cast<double>(config_.compute.micro_batch) *
            static_cast<double>(m_) * model_.sequence;
  model_flops_ = training_flops_per_token(model_) * tokens_;
  peak_ = peak_flops(config_.gpu, config_.compute.dtype);
  Time stage_end = pipeline_total;  // stage 0 ends last; stage i ends sum_{j<i} t_bwd,j earlier
  Time best = Time::zero();
  stage_buckets_.assign(pp_, {});
  stage_sync_.assign(pp_, {});
  stage_protocols_.assign(pp_, {});
  stage_step_.assign(pp_, StepBreakdown{});
  stage_gather_exposed_.assign(pp_, Time::zero());
  sharded_optimizer_ = lay_.distributed_optimizer && dp_ * cp_ > 1 && !fsdp_;
  if (parts_ != nullptr) {
    parts_->sharded_optimizer = sharded_optimizer_;
    parts_->dp_algorithm = dp_algo_;
  }
  // Megatron's distributed optimizer runs NCCL reduce-scatter / all-gather (rings).
  const CollectiveAlgo dp_ring = CollectiveAlgo::Ring;
  stage_dense_params_.assign(pp_, 0.0);
  stage_expert_params_.assign(pp_, 0.0);
  uint32_t first_layer = 0;
  for (uint32_t i = 0; i < pp_; ++i) {
    // Cool-down: the last micro-batch's backward walks back one chunk (1/v of a rank) per rank.
    if (i > 0) stage_end -= stage_bwd_[i - 1] / vpi_;
    BucketScope scope{.first_layer = first_layer,
                      .layers = rank_layers_[i],
                      .input_embedding = i == 0,
                      .output_head = i + 1 == pp_,
                      .tensor_parallel = tp_,
                      .expert_parallel = ep_};
    first_layer += rank_layers_[i];
    // Dense and (MoE) expert gradients in ready order; experts reduce over their own groups.
    const std::vector<StageBucket> buckets = stage_gradient_buckets(model_, config_.ddp, scope);
    for (const StageBucket& sb : buckets) stage_buckets_[i].push_back(sb.bucket);
    const Groups dense_groups = dp_groups(i);
    Groups expert_groups;
    if (is_moe(model_)) {
      expert_groups = expert_data_parallel_rank_groups(lay_, dp_, i);
      for (auto& g : expert_groups)
        for (uint32_t& rank : g) rank = config_.rank_to_gpu[rank];
    }
    if (parts_ != nullptr) {
      parts_->stage_buckets.push_back(buckets);
      parts_->stage_dense_groups.push_back(dense_groups);
      parts_->stage_expert_groups.push_back(expert_groups);
    }
    double stage_params = 0;
    int64_t stage_bytes = 0;
    Time param_gather = Time::zero();
    for (const StageBucket& sb : buckets) {
      const GradientBucket& b = sb.bucket;
      const Groups& groups = sb.expert ? expert_groups : dense_groups;
      double& counted = sb.expert ? stage_expert_params_[i] : stage_params;
      if (fsdp_) {
        // The buckets only count the stage's parameters; FSDP's collectives are timed apart.
        counted += static_cast<double>(b.size.count()) /
                   static_cast<double>(config_.ddp.gradient_bytes_per_param);
        continue;
      }
      if (sharded_optimizer_) {
        // Gradients reduce-scattered behind backward; the updated parameters (as many bytes: the
        // buckets are in the gradients' dtype, bf16 like the parameters) all-gathered later.
        const auto rs = timer_.time(CollectiveOp::ReduceScatter, dp_ring, groups, b.size.count());
        const auto ag = timer_.time(CollectiveOp::AllGather, dp_ring, groups, b.size.count());
        stage_sync_[i].push_back(rs.duration);
        stage_protocols_[i].push_back(rs.protocol);
        param_gather += ag.duration;
        stage_bytes += rs.bytes_per_gpu + ag.bytes_per_gpu;
      } else {
        const auto& timing = timer_.time(CollectiveOp::AllReduce, dp_algo_, groups, b.size.count());
        stage_sync_[i].push_back(timing.duration);
        stage_protocols_[i].push_back(timing.protocol);
        stage_bytes += timing.bytes_per_gpu;
      }
      counted += static_cast<double>(b.size.count()) /
                 static_cast<double>(config_.ddp.gradient_bytes_per_param);
    }
    params_gpu_ = std::max(params_gpu_, stage_params);
    stage_dense_params_[i] = stage_params;
    if (fsdp_) {
      // No DDP buckets: one reduce-scatter tail after the last backward.
      stage_buckets_[i].clear();
      stage_sync_[i] = {fsdp_tail_[i]};
      stage_bytes = fsdp_bytes_[i];
    }
    if (i == 0) dp_bytes_per_gpu_ = stage_bytes;
    StepInputs in;
    in.forward = stage_end - stage_bwd_[i];
    in.backward = stage_bwd_[i];
    in.optimizer = Time::zero();
    in.bucket_sync = stage_sync_[i];
    stage_step_[i] = closed_form_step(in, model_flops_, total_, peak_);
    // overlap_param_gather: the next step's first forward on this stage waits for what of the
    // parameter all-gathers its first micro-batch's forward does not cover.
    stage_gather_exposed_[i] = std::max(Time::zero(), param_gather - stage_fwd_[i]);
    // FSDP: the root unit is gathered before the step's first forward (and kept gathered).
    stage_gather_exposed_[i] += fsdp_root_gather_[i];
    if (stage_step_[i].step + stage_gather_exposed_[i] > best) {
      best = stage_step_[i].step + stage_gather_exposed_[i];
      critical_ = i;
    }
  }
}

// The critical stage's step, its optimizer, exposed communication, buckets and MFU.
void ClosedFormStep::compose_step() {
  // Adam on the GPU's parameters, or on its 1/d shard of them with the distributed optimizer.
  double updated_params = sharded_optimizer_ || fsdp_ ? params_gpu_ / (dp_ * cp_) : params_gpu_;
  // MoE: the routed experts' state is sharded over the expert-data-parallel group (DP x CP / EP).
  const double edp = expert_data_parallel(lay_, dp_);
  if (is_moe(model_)) {
    updated_params = 0;
    const double dense_state = sharded_optimizer_ ? 4.0 + 12.0 / (dp_ * cp_) : 16.0;
    const double expert_state = sharded_optimizer_ ? 4.0 + 12.0 / edp : 16.0;
    for (uint32_t i = 0; i < pp_; ++i) {
      const double dense = stage_dense_params_[i] / (sharded_optimizer_ ? dp_ * cp_ : 1.0);
      const double experts = stage_expert_params_[i] / (sharded_optimizer_ ? edp : 1.0);
      updated_params = std::max(updated_params, dense + experts);
      moe_state_bytes_ = std::max(moe_state_bytes_, dense_state * stage_dense_params_[i] +
                                                        expert_state * stage_expert_params_[i]);
    }
  }
  r_.optimizer = config_.optimizer.value_or(adam_time(updated_params, config_.gpu));
  const StepBreakdown& b = stage_step_[critical_];
  r_.step = b.step + stage_gather_exposed_[critical_] + r_.optimizer;
  r_.closed_form_step = r_.step;
  r_.forward = b.forward;
  r_.backward = b.backward;
  r_.sync = fsdp_ ? fsdp_busy_[critical_] : b.sync_total;
  r_.tail = b.tail;
  r_.tensor_parallel_comm =
      (tp_fwd_ + tp_bwd_) * layers_ * mb_ +
      (ep_tp_fwd_ + ep_tp_bwd_ - tp_moe_saved_fwd_ - tp_moe_saved_bwd_) * moe_layers_ * mb_;
  r_.context_parallel_exposed = (cp_fwd_exposed_ + cp_bwd_exposed_) * layers_ * mb_;
  r_.pipeline_p2p = pp_ > 1 ? p2p_ * (2 * mb_ * vpi_) : Time::zero();
  r_.expert_all_to_all = (ep_fwd_ + ep_bwd_) * moe_layers_ * mb_;
  // Communication on the critical path: the gradient sync not hidden by the last backward, plus
  // the TP collectives, the exposed K/V ring and the stage's pipeline receives (the bubble apart).
  r_.exposed_comm = (r_.step - r_.optimizer - b.forward - b.backward) + r_.tensor_parallel_comm +
                    r_.context_parallel_exposed + r_.pipeline_p2p + r_.expert_all_to_all;
  r_.bytes_per_gpu =
      dp_bytes_per_gpu_ + (tp_bytes_per_gpu_ * layers_ + cp_bytes_per_gpu_ * layers_) * mb_ +
      p2p_bytes_per_gpu_ +
      (ep_bytes_per_gpu_ + ep_tp_bytes_per_gpu_ - tp_moe_saved_bytes_) * moe_layers_ * mb_;

  // The critical stage's buckets on its communication stream.
  const Time bwd_start = b.forward;
  Time stream = Time::zero();
  for (std::size_t k = 0; k < stage_buckets_[critical_].size(); ++k) {
    BucketTiming t;
    t.bytes = stage_buckets_[critical_][k].size.count();
    t.protocol = stage_protocols_[critical_][k];
    t.ready = bwd_start + scaled(b.backward, stage_buckets_[critical_][k].ready_at);
    t.start = std::max(t.ready, stream);
    t.end = t.start + stage_sync_[critical_][k];
    stream = t.end;
    r_.buckets.push_back(t);
  }
  r_.rank_backward_start.assign(total_, bwd_start);
  r_.rank_backward_end.assign(total_, bwd_start + b.backward);

  double hardware_flops = model_flops_;
  if (config_.compute.recompute == Recompute::Full)
    hardware_flops += training_flops_per_token(model_) / 3.0 * tokens_;
  if (config_.compute.recompute == Recompute::Selective) {
    hardware_flops +=
        4.0 * model_.layers * static_cast<double>(model_.hidden) * model_.sequence * tokens_;
  }
  const double all_peak = peak_ * total_;
  r_.mfu = model_flops_ / (r_.step.seconds() * all_peak);
  r_.hfu = hardware_flops / (r_.step.seconds() * all_peak);
  r_.tokens_per_s = tokens_ / r_.step.seconds();
  r_.grad_accumulation = m_;
  r_.global_batch = uint64_t{dp_} * static_cast<uint64_t>(config_.compute.micro_batch) * m_;
  r_.tokens_per_step = tokens_;
}

// Memory: weights, gradients and Adam state of the GPU's parameters (16 bytes each), and the
// activations of the micro-batches in flight on stage 0 (min(m, p) under 1F1B, times
// 1 + (p - 1) / (p v) interleaved); Korthikanti et al. 2022 per block: s*b*h*(10 + 24/t) bytes,
// 34/t with sequence parallelism, 2 (/t) with full recomputation, all over CP.
void ClosedFormStep::estimate_memory() {
  const double sbh = static_cast<double>(model_.sequence) *
                     static_cast<double>(config_.compute.micro_batch) * model_.hidden / cp_;
  double per_layer = lay_.sequence_parallel ? 34.0 / tp_ : 10.0 + 24.0 / tp_;
  if (config_.compute.recompute == Recompute::Full)
    per_layer = lay_.sequence_parallel ? 2.0 / tp_ : 2.0;
  const double interleave =
      vp_ > 1 ? 1.0 + static_cast<double>(pp_ - 1) / (static_cast<double>(pp_) * vp_) : 1.0;
  // 16 bytes per parameter: bf16 weights and gradients (2 + 2) and Adam's fp32 master weights,
  // first and second moments (12); the distributed optimizer keeps 1/d of the 12.
  // FSDP shards all 16 over DP x CP (HSDP: over its shard group) and holds two gathered units (the
  // current and the prefetched one) and one unit's unsharded gradients besides.
  const double state_bytes =
      fsdp_ ? 16.0 / shard_ : (sharded_optimizer_ ? 4.0 + 12.0 / (dp_ * cp_) : 16.0);
  const double gathered =
      fsdp_ ? lpu_ * layer_shard_params_ *
                  static_cast<double>(2 * config_.fsdp.param_bytes + config_.fsdp.gradient_bytes)
            : 0.0;
  r_.communication_memory_bytes =
      layout_communication_buffer_bytes(LayoutCommunicators{.tensor = tp_,
                                                            .context = cp_,
                                                            .pipeline = pp_,
                                                            .data = dp_,
                                                            .expert = ep_,
                                                            .fsdp_shard = fsdp_ ? shard_ : 0,
                                                            .fsdp_replicas = fsdp_ ? replicas_ : 1,
                                                            .sharded_optimizer = sharded_optimizer_,
                                                            .data_algorithm = dp_algo_,
                                                            .gpus_per_host = config_.gpus_per_host,
                                                            .channels = config_.channels});
  r_.memory_per_gpu_bytes = (is_moe(model_) ? moe_state_bytes_ : state_bytes * params_gpu_) +
                            gathered + r_.communication_memory_bytes +
                            sbh * per_layer * rank_layers_.front() * std::min(m_, pp_) * interleave;
  warn_if_over_gpu_memory(r_.warnings, "this layout", r_.memory_per_gpu_bytes, config_.gpu);
}

}  // namespace syncsim::models::closed_form
