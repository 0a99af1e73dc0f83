#include "models/parallelism.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/communication_memory.hpp"
#include "models/expert_parallel.hpp"
#include "models/idle_collective_timer.hpp"
#include "models/memory_warning.hpp"

namespace syncsim::models {

namespace {

Time seconds(double s) { return Time::from_seconds(s); }

using Groups = std::vector<std::vector<uint32_t>>;

// The closed-form step of a TP x CP x PP x DP (x EP, FSDP) layout, one section per kind of
// parallelism: each section times its collectives on the idle fabric, adds its rows to the result
// and keeps the per-block or per-stage times the stage and step sections compose. Sections run in
// the order of simulate_parallel_step (later ones read earlier ones' times).
class ClosedFormStep {
 public:
  // `timer` times the collectives (it may be recording: idle_collective_timer.hpp).
  ClosedFormStep(const StepConfig& config, ParallelStepParts* parts, IdleCollectiveTimer& timer);
  StepResult run();

 private:
  uint32_t gpu_of(uint32_t t, uint32_t c, uint32_t p, uint32_t d) const {
    return config_.rank_to_gpu[megatron_rank(ParallelLayout{tp_, cp_, pp_, lay_.sequence_parallel},
                                             dp_, t, c, p, d)];
  }
  void add_row(const char* kind, int64_t bytes, Time duration, int64_t count,
               NcclProtocol protocol = NcclProtocol::Simple) {
    r_.collectives.push_back(
        CollectiveTiming{kind, -1, bytes, Time::zero(), Time::zero(), duration, count, protocol});
  }
  Groups tp_groups() const;
  Groups dp_groups(uint32_t stage) const;
  // HSDP's shard groups (replicate false) or replicate groups of a stage.
  Groups fsdp_groups(uint32_t stage, bool replicate) const;
  double root_shard_params(uint32_t stage) const;

  void time_tensor_parallel();
  void time_context_parallel();
  void time_pipeline_sends();
  void time_expert_parallel();
  void time_fsdp();
  // Stage times per micro-batch and the 1F1B pipeline over them.
  PipelineTime time_stages();
  // Each stage's gradient sync overlapped with its last backward; picks the critical stage.
  void time_gradient_sync(Time pipeline_total);
  void compose_step();
  void estimate_memory();

  const StepConfig& config_;
  ParallelStepParts* parts_;
  const ParallelLayout& lay_;
  const TransformerShape& model_;
  uint32_t tp_;
  uint32_t cp_;
  uint32_t pp_;
  uint32_t total_;
  uint32_t vp_;
  std::vector<uint32_t> rank_layers_;
  uint32_t dp_;
  uint32_t m_;
  int64_t mb_;
  int64_t vpi_;
  uint32_t layers_;  // the busiest pipeline rank's: per-step counts are reported for it
  uint32_t ep_ = 1;
  IdleCollectiveTimer& timer_;
  LayerCompute lc_;
  LayerCompute lc_moe_;
  std::vector<uint32_t> rank_moe_layers_;
  uint32_t moe_layers_ = 0;  // the busiest pipeline rank's
  double slowest_ = 1.0;
  CollectiveAlgo dp_algo_;
  StepResult r_;

  // Tensor parallel, per block and micro-batch.
  bool moe_block_mlp_tp_ = true;
  Time tp_fwd_ = Time::zero();
  Time tp_bwd_ = Time::zero();
  int64_t tp_bytes_per_gpu_ = 0;
  // What an MoE block's TP collectives take less than a dense block's (its MLP pair, when it has
  // none), per micro-batch.
  Time tp_moe_saved_fwd_ = Time::zero();
  Time tp_moe_saved_bwd_ = Time::zero();
  int64_t tp_moe_saved_bytes_ = 0;
  // Context parallel, per block and micro-batch.
  Time cp_fwd_exposed_ = Time::zero();
  Time cp_bwd_exposed_ = Time::zero();
  int64_t cp_bytes_per_gpu_ = 0;
  // Pipeline sends.
  Time p2p_ = Time::zero();
  int64_t p2p_bytes_per_gpu_ = 0;
  // Expert parallel, per MoE block and micro-batch.
  Time ep_fwd_ = Time::zero();
  Time ep_bwd_ = Time::zero();
  int64_t ep_bytes_per_gpu_ = 0;
  Time ep_tp_fwd_ = Time::zero();  // EP x TP: the dispatched tokens' gathers and scatters
  Time ep_tp_bwd_ = Time::zero();
  int64_t ep_tp_bytes_per_gpu_ = 0;
  // FSDP, per stage.
  bool fsdp_ = false;
  uint32_t shard_ = 1;
  uint32_t replicas_ = 1;
  double layer_shard_params_ = 0;
  double lpu_ = 1;
  std::vector<Time> fsdp_fwd_extra_;    // per micro-batch
  std::vector<Time> fsdp_bwd_extra_;    // per micro-batch
  std::vector<Time> fsdp_tail_;         // reduce-scatters after the last backward
  std::vector<Time> fsdp_root_gather_;  // once per step, before the first forward
  std::vector<int64_t> fsdp_bytes_;     // per GPU per step
  std::vector<Time> fsdp_busy_;         // the collectives' time per step
  // Stages, per micro-batch.
  std::vector<Time> stage_fwd_;
  std::vector<Time> stage_bwd_;
  // Gradient sync and its critical stage.
  bool sharded_optimizer_ = false;
  double tokens_ = 0;
  double model_flops_ = 0;
  double peak_ = 0;
  std::size_t critical_ = 0;
  std::vector<std::vector<GradientBucket>> stage_buckets_;
  std::vector<std::vector<Time>> stage_sync_;
  std::vector<std::vector<NcclProtocol>> stage_protocols_;  // per bucket (StepProtocols)
  std::vector<StepBreakdown> stage_step_;
  std::vector<Time> stage_gather_exposed_;
  double params_gpu_ = 0;
  std::vector<double> stage_dense_params_;   // MoE: the dense part of each stage
  std::vector<double> stage_expert_params_;  // ... and its routed experts
  int64_t dp_bytes_per_gpu_ = 0;
  double moe_state_bytes_ = 0;
};

}  // namespace

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

namespace {

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

}  // namespace

StepResult simulate_parallel_step(const net::NetworkSpec& spec, Fidelity fidelity,
                                  const StepConfig& config, ParallelStepParts* parts) {
  IdleCollectiveTimer timer(spec, fidelity, config);
  if (config.threads > 1) {
    // A first pass notes every collective the step times; the timer then runs them all at once.
    timer.start_recording();
    ClosedFormStep(config, nullptr, timer).run();
    timer.run_recorded(config.threads);
  }
  return ClosedFormStep(config, parts, timer).run();
}

}  // namespace syncsim::models
