#include "models/parallelism.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/closed_form_step.hpp"
#include "models/expert_parallel.hpp"

namespace syncsim::models {

Time overlapped_exposure(Time comm, Time gemm, uint32_t chunks) {
  const auto n = static_cast<int64_t>(std::max<uint32_t>(1, chunks));
  const Time c = comm / n;
  const Time g = gemm / n;
  return c + std::max(Time::zero(), c - g) * (n - 1);
}

int64_t tp_activation_bytes(const TransformerShape& m, const ComputeParams& c,
                            const ParallelLayout& l) {
  return c.micro_batch * static_cast<int64_t>(m.sequence / std::max<uint32_t>(1, l.context)) *
         m.hidden * 2;
}

std::pair<int, int> tp_collectives_per_layer(const ComputeParams& c) {
  // Megatron: f/g conjugate operators, one after attention and one after the MLP, in each
  // direction; full recomputation repeats the forward ones during backward.
  return {2, c.recompute == Recompute::Full ? 4 : 2};
}

uint32_t megatron_rank(const ParallelLayout& l, uint32_t data_parallel, uint32_t t, uint32_t c,
                       uint32_t p, uint32_t d) {
  return ((p * data_parallel + d) * l.context + c) * l.tensor + t;
}

namespace closed_form {

ClosedFormStep::ClosedFormStep(const StepConfig& config, ParallelStepParts* parts,
                               IdleCollectiveTimer& timer)
    : config_(config), parts_(parts), lay_(config.layout), model_(config.model), timer_(timer) {
  tp_ = std::max<uint32_t>(1, lay_.tensor);
  cp_ = std::max<uint32_t>(1, lay_.context);
  pp_ = std::max<uint32_t>(1, lay_.pipeline);
  const uint32_t model_parallel = tp_ * cp_ * pp_;
  total_ = static_cast<uint32_t>(config.rank_to_gpu.size());
  if (total_ == 0 || total_ % model_parallel != 0) {
    throw std::invalid_argument(
        "the ranks must be a multiple of tensor x context x pipeline parallel");
  }
  vp_ = std::max<uint32_t>(1, lay_.virtual_pipeline);
  if (vp_ > 1 && pp_ == 1) {
    throw std::invalid_argument("virtual pipeline stages need pipeline parallelism");
  }
  rank_layers_ = pipeline_rank_layers(lay_, model_.layers);
  dp_ = total_ / model_parallel;
  m_ = std::max<uint32_t>(1, config.grad_accumulation);
  mb_ = static_cast<int64_t>(m_);
  vpi_ = static_cast<int64_t>(vp_);
  layers_ = *std::max_element(rank_layers_.begin(), rank_layers_.end());

  r_.engine = "closed_form";
  r_.parallelism = config.parallelism;
  r_.layout = lay_;
  r_.layout.tensor = tp_;
  r_.layout.context = cp_;
  r_.layout.pipeline = pp_;
  r_.layout.virtual_pipeline = vp_;
  r_.data_parallel = dp_;
  // Mixture of experts (models/expert_parallel.hpp): EP carved out of DP x CP.
  ep_ = std::max<uint32_t>(1, lay_.expert);
  check_expert_layout(model_, lay_, dp_);
  if (is_moe(model_) && config.parallelism == DataParallelism::Fsdp) {
    throw std::invalid_argument("FSDP with a mixture-of-experts model is not modelled");
  }
  r_.layout.expert = ep_;
  const ComputeSplit split{tp_, cp_, lay_.sequence_parallel};
  lc_ = layer_compute(model_, config.gpu, config.compute, split);
  lc_moe_ = is_moe(model_) ? moe_layer_compute(model_, config.gpu, config.compute, split, ep_,
                                               config.capacity_factor)
                           : lc_;
  if (config.zero_compute) lc_ = lc_moe_ = LayerCompute{};
  rank_moe_layers_ = pipeline_rank_moe_layers(lay_, model_);
  for (double x : rank_compute_multipliers(config, total_)) slowest_ = std::max(slowest_, x);
  if (parts_ != nullptr) {
    parts_->data_parallel = dp_;
    parts_->virtual_stage_layers = pipeline_stage_layers(lay_, model_.layers);
    parts_->virtual_stage_moe_layers = virtual_stage_moe_layers(lay_, model_);
    parts_->dense_forward = seconds(lc_.layer_forward);
    parts_->dense_backward = seconds(lc_.layer_backward);
    parts_->moe_forward = seconds(lc_moe_.layer_forward);
    parts_->moe_backward = seconds(lc_moe_.layer_backward);
    parts_->head_forward = seconds(lc_.head_forward);
    parts_->head_backward = seconds(lc_.head_backward);
    parts_->slowest_multiplier = slowest_;
  }
  dp_algo_ = config.algorithm;
  if (dp_algo_ == CollectiveAlgo::Hierarchical && model_parallel > 1) {
    dp_algo_ = CollectiveAlgo::Ring;
    r_.warnings.push_back(
        "hierarchical all-reduce assumes a data-parallel group of whole hosts; "
        "with model parallelism the gradient all-reduce uses a ring");
  }
  moe_layers_ = *std::max_element(rank_moe_layers_.begin(), rank_moe_layers_.end());
}

StepResult ClosedFormStep::run() {
  time_tensor_parallel();
  time_context_parallel();
  if (parts_ != nullptr) {
    parts_->attention_forward = seconds(lc_.attention_forward);
    parts_->attention_backward = seconds(lc_.attention_backward);
    parts_->tp_forward = tp_fwd_;
    parts_->tp_backward = tp_bwd_;
    parts_->tp_moe_forward = tp_fwd_ - tp_moe_saved_fwd_;
    parts_->tp_moe_backward = tp_bwd_ - tp_moe_saved_bwd_;
    parts_->moe_block_mlp_tp = moe_block_mlp_tp_;
    parts_->cp_forward = cp_fwd_exposed_;
    parts_->cp_backward = cp_bwd_exposed_;
  }
  time_pipeline_sends();
  time_expert_parallel();
  time_fsdp();
  const PipelineTime pipe = time_stages();
  r_.pipeline_bubble = pipe.bubble;
  r_.bubble_fraction = pipe.bubble_fraction;
  time_gradient_sync(pipe.total);
  compose_step();
  estimate_memory();
  return std::move(r_);
}

Groups ClosedFormStep::tp_groups() const {
  Groups groups;
  for (uint32_t d = 0; d < dp_; ++d)
    for (uint32_t p = 0; p < pp_; ++p)
      for (uint32_t c = 0; c < cp_; ++c) {
        groups.emplace_back();
        for (uint32_t t = 0; t < tp_; ++t) groups.back().push_back(gpu_of(t, c, p, d));
      }
  return groups;
}

Groups ClosedFormStep::dp_groups(uint32_t stage) const {
  Groups groups;
  for (uint32_t t = 0; t < tp_; ++t) {
    groups.emplace_back();
    for (uint32_t d = 0; d < dp_; ++d)
      for (uint32_t c = 0; c < cp_; ++c) groups.back().push_back(gpu_of(t, c, stage, d));
  }
  return groups;
}

// HSDP (fsdp.shard_degree): the DP x CP ranks j = d CP + c of a TP rank split into shard groups of
// `shard` consecutive ranks, and replicate groups of the ranks `shard` apart (torchtitan's
// dp_replicate x dp_shard mesh, PyTorch's HYBRID_SHARD): gathers and reduce-scatters run over a
// shard group, and each reduce-scattered shard is all-reduced over its replicate group right behind
// its reduce-scatter.
Groups ClosedFormStep::fsdp_groups(uint32_t stage, bool replicate) const {
  Groups groups;
  for (uint32_t t = 0; t < tp_; ++t) {
    const uint32_t count = replicate ? shard_ : replicas_;
    for (uint32_t g = 0; g < count; ++g) {
      groups.emplace_back();
      for (uint32_t k = 0; k < (replicate ? replicas_ : shard_); ++k) {
        const uint32_t j = replicate ? k * shard_ + g : g * shard_ + k;
        groups.back().push_back(gpu_of(t, j % cp_, stage, j / cp_));
      }
    }
  }
  return groups;
}

// The root unit (input embedding on the first stage, output head and final norm on the last; one
// stage holds both without pipelining), gathered once per step and reduced once.
double ClosedFormStep::root_shard_params(uint32_t stage) const {
  const double embedding = static_cast<double>(embedding_parameters(model_)) / tp_;
  if (pp_ == 1) return embedding;
  return stage == 0 || stage + 1 == pp_ ? embedding / 2 : 0.0;
}

// Tensor parallel: every TP group at once.
void ClosedFormStep::time_tensor_parallel() {
  // EP x TP: an MoE block without shared experts runs the attention's TP all-gather and
  // reduce-scatter only; its MLP's pair is replaced by the dispatched tokens' gather and scatter
  // over TP (the router sees the sequence-split tokens; MoELayer.forward,
  // megatron/core/transformer/moe/moe_layer.py). With shared experts their TP-sharded MLP keeps
  // the pair (SharedExpertMLP gathers its input and reduce-scatters its output over TP). EP 1
  // keeps the dense block's collectives, as it did.
  moe_block_mlp_tp_ = !(ep_ > 1 && tp_ > 1 && model_.shared_experts == 0);
  if (tp_ <= 1) return;
  const int64_t act = tp_activation_bytes(model_, config_.compute, lay_);
  const auto [tp_fwd_count, tp_bwd_count] = tp_collectives_per_layer(config_.compute);
  const Groups groups = tp_groups();
  const int64_t per_layer = tp_fwd_count + tp_bwd_count;
  if (!lay_.sequence_parallel) {
    const auto ar = timer_.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, groups, act);
    tp_fwd_ = ar.duration * tp_fwd_count;
    tp_bwd_ = ar.duration * tp_bwd_count;
    tp_bytes_per_gpu_ = ar.bytes_per_gpu * per_layer;
    add_row("tp_all_reduce", act, ar.duration, per_layer * layers_ * mb_, ar.protocol);
    return;
  }
  const auto ag = timer_.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups, act);
  const auto rs = timer_.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups, act);
  tp_fwd_ = (ag.duration + rs.duration) * tp_fwd_count;
  tp_bwd_ = (ag.duration + rs.duration) * tp_bwd_count;
  auto left = [&](Time comm, double gemm_s) {
    return overlapped_exposure(comm, scaled(seconds(gemm_s), slowest_), tp_);
  };
  if (lay_.tp_comm_overlap) {
    tp_fwd_ = left(ag.duration, lc_.qkv_forward) + left(rs.duration, lc_.attention_out_forward) +
              left(ag.duration, lc_.mlp_up_forward) + left(rs.duration, lc_.mlp_down_forward);
    tp_bwd_ = left(ag.duration, lc_.attention_out_forward) + left(rs.duration, lc_.qkv_forward) +
              left(ag.duration, lc_.mlp_down_forward) + left(rs.duration, lc_.mlp_up_forward);
    if (config_.compute.recompute == Recompute::Full) tp_bwd_ += tp_fwd_;
  }
  tp_bytes_per_gpu_ = (ag.bytes_per_gpu + rs.bytes_per_gpu) * per_layer;
  int64_t moe_saved_count = 0;  // collectives of each kind
  if (!moe_block_mlp_tp_) {
    // The MLP's all-gather (with the MLP up) and reduce-scatter (with the MLP down), in forward
    // and their conjugates in backward: half of each direction's pairs.
    tp_moe_saved_fwd_ = (ag.duration + rs.duration) * (tp_fwd_count / 2);
    tp_moe_saved_bwd_ = (ag.duration + rs.duration) * (tp_bwd_count / 2);
    if (lay_.tp_comm_overlap) {
      tp_moe_saved_fwd_ =
          left(ag.duration, lc_.mlp_up_forward) + left(rs.duration, lc_.mlp_down_forward);
      tp_moe_saved_bwd_ =
          left(ag.duration, lc_.mlp_down_forward) + left(rs.duration, lc_.mlp_up_forward);
      if (config_.compute.recompute == Recompute::Full) tp_moe_saved_bwd_ += tp_moe_saved_fwd_;
    }
    tp_moe_saved_bytes_ = tp_bytes_per_gpu_ / 2;
    moe_saved_count = per_layer / 2 * moe_layers_ * mb_;
  }
  add_row("tp_all_gather", act, ag.duration, per_layer * layers_ * mb_ - moe_saved_count,
          ag.protocol);
  add_row("tp_reduce_scatter", act, rs.duration, per_layer * layers_ * mb_ - moe_saved_count,
          rs.protocol);
}

// Context parallel: the K/V ring, overlapped with attention.
void ClosedFormStep::time_context_parallel() {
  if (cp_ <= 1) return;
  Groups groups;
  for (uint32_t d = 0; d < dp_; ++d)
    for (uint32_t p = 0; p < pp_; ++p)
      for (uint32_t t = 0; t < tp_; ++t) {
        groups.emplace_back();
        for (uint32_t c = 0; c < cp_; ++c) groups.back().push_back(gpu_of(t, c, p, d));
      }
  const int64_t head_dim = model_.hidden / model_.heads;
  const int64_t kv_heads =
      std::max<int64_t>(1, model_.kv_heads / tp_);  // replicated when fewer than TP
  // K and V per KV head: 2 x head_dim, or MLA's d_qk + d_v (K and V after the up-projection).
  const int64_t kv_width = is_mla(model_)
                               ? static_cast<int64_t>(qk_head_dim(model_) + v_head_dim(model_))
                               : 2 * head_dim;
  const int64_t shard =
      config_.compute.micro_batch * (model_.sequence / cp_) * kv_heads * kv_width * 2;
  const auto ag = timer_.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups, shard * cp_);
  const auto rs =
      timer_.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups, shard * cp_);
  const Time attention_fwd = scaled(seconds(lc_.attention_forward), slowest_);
  const Time attention_bwd = scaled(seconds(lc_.attention_backward), slowest_);
  cp_fwd_exposed_ = std::max(Time::zero(), ag.duration - attention_fwd);
  cp_bwd_exposed_ = std::max(Time::zero(), ag.duration + rs.duration - attention_bwd);
  cp_bytes_per_gpu_ = 2 * ag.bytes_per_gpu + rs.bytes_per_gpu;
  if (parts_ != nullptr) parts_->cp_ring_bytes = shard * cp_;
  add_row("cp_all_gather", shard * cp_, ag.duration, 2 * layers_ * mb_, ag.protocol);
  add_row("cp_reduce_scatter", shard * cp_, rs.duration, layers_ * mb_, rs.protocol);
}

// Pipeline: activations to the next stage, gradients back.
void ClosedFormStep::time_pipeline_sends() {
  if (pp_ <= 1) return;
  const int64_t act = tp_activation_bytes(model_, config_.compute, lay_);
  const int64_t p2p_bytes = act / (lay_.sequence_parallel ? tp_ : 1);
  Groups pairs;
  for (uint32_t d = 0; d < dp_; ++d)
    for (uint32_t c = 0; c < cp_; ++c)
      for (uint32_t t = 0; t < tp_; ++t) pairs.push_back({gpu_of(t, c, 0, d), gpu_of(t, c, 1, d)});
  const auto s = timer_.time(CollectiveOp::SendRecv, CollectiveAlgo::Pairwise, pairs, p2p_bytes);
  p2p_ = s.duration;
  // A middle stage sends activations and gradients once per chunk and micro-batch.
  p2p_bytes_per_gpu_ = 2 * p2p_bytes * mb_ * vpi_;
  add_row("pp_send_recv", p2p_bytes, p2p_, 2 * mb_ * (int64_t{pp_} * vpi_ - 1));
  if (parts_ != nullptr) parts_->p2p_bytes = p2p_bytes;
}

// Expert parallelism: dispatch and combine all-to-alls over every EP group at once, exposed.
void ClosedFormStep::time_expert_parallel() {
  if (ep_ <= 1) return;
  Groups groups = expert_parallel_rank_groups(lay_, dp_);
  for (auto& g : groups)
    for (uint32_t& rank : g) rank = config_.rank_to_gpu[rank];
  const int64_t bytes = ep_all_to_all_bytes(model_, config_.compute, lay_, config_.capacity_factor);
  const auto a2a = timer_.time(CollectiveOp::AllToAll, CollectiveAlgo::Pairwise, groups, bytes);
  const auto [fwd_count, bwd_count] = ep_all_to_alls_per_layer(config_.compute);
  ep_fwd_ = a2a.duration * fwd_count;
  ep_bwd_ = a2a.duration * bwd_count;
  ep_bytes_per_gpu_ = a2a.bytes_per_gpu * (fwd_count + bwd_count);
  add_row("ep_all_to_all", bytes, a2a.duration, int64_t{fwd_count + bwd_count} * moe_layers_ * mb_);
  if (parts_ != nullptr) {
    parts_->ep_bytes = bytes;
    parts_->ep_forward_count = fwd_count;
    parts_->ep_backward_count = bwd_count;
    parts_->ep_groups = groups;
  }
  // EP x TP: each all-to-all has its all-gather (dispatch) or reduce-scatter (combine) of the
  // dispatched tokens over the TP group (models/expert_parallel.hpp), every TP group at once.
  const int64_t gathered =
      ep_tensor_gather_bytes(model_, config_.compute, lay_, config_.capacity_factor);
  if (gathered <= 0) return;
  const Groups groups_tp = tp_groups();
  const auto ag = timer_.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups_tp, gathered);
  const auto rs =
      timer_.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups_tp, gathered);
  // One all-gather and one reduce-scatter per dispatch + combine pair.
  const int fwd_pairs = fwd_count / 2;
  const int bwd_pairs = bwd_count / 2;
  ep_tp_fwd_ = (ag.duration + rs.duration) * fwd_pairs;
  ep_tp_bwd_ = (ag.duration + rs.duration) * bwd_pairs;
  ep_tp_bytes_per_gpu_ = (ag.bytes_per_gpu + rs.bytes_per_gpu) * (fwd_pairs + bwd_pairs);
  const int64_t rows = int64_t{fwd_pairs + bwd_pairs} * moe_layers_ * mb_;
  add_row("ep_tp_all_gather", gathered, ag.duration, rows, ag.protocol);
  add_row("ep_tp_reduce_scatter", gathered, rs.duration, rows, rs.protocol);
  if (parts_ != nullptr) {
    parts_->ep_tp_bytes = gathered;
    parts_->ep_tp_forward = ep_tp_fwd_;
    parts_->ep_tp_backward = ep_tp_bwd_;
  }
}

}  // namespace closed_form

StepResult simulate_parallel_step(const net::NetworkSpec& spec, Fidelity fidelity,
                                  const StepConfig& config, ParallelStepParts* parts) {
  IdleCollectiveTimer timer(spec, fidelity, config);
  if (config.threads > 1) {
    // A first pass notes every collective the step times; the timer then runs them all at once.
    timer.start_recording();
    closed_form::ClosedFormStep(config, nullptr, timer).run();
    timer.run_recorded(config.threads);
  }
  return closed_form::ClosedFormStep(config, parts, timer).run();
}

}  // namespace syncsim::models
