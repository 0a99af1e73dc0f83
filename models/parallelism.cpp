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

StepResult simulate_parallel_step(const net::NetworkSpec& spec, Fidelity fidelity,
                                  const StepConfig& config, ParallelStepParts* parts) {
  const ParallelLayout& lay = config.layout;
  const uint32_t tp = std::max<uint32_t>(1, lay.tensor);
  const uint32_t cp = std::max<uint32_t>(1, lay.context);
  const uint32_t pp = std::max<uint32_t>(1, lay.pipeline);
  const uint32_t model_parallel = tp * cp * pp;
  const auto total = static_cast<uint32_t>(config.rank_to_gpu.size());
  if (total == 0 || total % model_parallel != 0) {
    throw std::invalid_argument(
        "the ranks must be a multiple of tensor x context x pipeline parallel");
  }
  const uint32_t vp = std::max<uint32_t>(1, lay.virtual_pipeline);
  if (vp > 1 && pp == 1) {
    throw std::invalid_argument("virtual pipeline stages need pipeline parallelism");
  }
  const std::vector<uint32_t> rank_layers = pipeline_rank_layers(lay, config.model.layers);
  const uint32_t dp = total / model_parallel;
  const uint32_t m = std::max<uint32_t>(1, config.grad_accumulation);
  const auto mb = static_cast<int64_t>(m);
  const auto vpi = static_cast<int64_t>(vp);
  const TransformerShape& model = config.model;
  // The busiest pipeline rank's layers: per-step counts and exposed times are reported for it.
  const uint32_t layers = *std::max_element(rank_layers.begin(), rank_layers.end());
  auto gpu_of = [&](uint32_t t, uint32_t c, uint32_t p, uint32_t d) {
    return config.rank_to_gpu[megatron_rank(ParallelLayout{tp, cp, pp, lay.sequence_parallel}, dp,
                                            t, c, p, d)];
  };

  StepResult r;
  r.engine = "closed_form";
  r.parallelism = config.parallelism;
  r.layout = lay;
  r.layout.tensor = tp;
  r.layout.context = cp;
  r.layout.pipeline = pp;
  r.layout.virtual_pipeline = vp;
  r.data_parallel = dp;
  // Mixture of experts (models/expert_parallel.hpp): EP carved out of DP x CP.
  const uint32_t ep = std::max<uint32_t>(1, lay.expert);
  check_expert_layout(model, lay, dp);
  if (is_moe(model) && config.parallelism == DataParallelism::Fsdp) {
    throw std::invalid_argument("FSDP with a mixture-of-experts model is not modelled");
  }
  r.layout.expert = ep;
  IdleCollectiveTimer timer(spec, fidelity, config);
  const ComputeSplit split{tp, cp, lay.sequence_parallel};
  LayerCompute lc = layer_compute(model, config.gpu, config.compute, split);
  LayerCompute lc_moe = is_moe(model) ? moe_layer_compute(model, config.gpu, config.compute, split,
                                                          ep, config.capacity_factor)
                                      : lc;
  if (config.zero_compute) lc = lc_moe = LayerCompute{};
  const std::vector<uint32_t> rank_moe_layers = pipeline_rank_moe_layers(lay, model);
  double slowest = 1.0;
  for (double x : rank_compute_multipliers(config, total)) slowest = std::max(slowest, x);
  if (parts != nullptr) {
    parts->data_parallel = dp;
    parts->virtual_stage_layers = pipeline_stage_layers(lay, model.layers);
    parts->virtual_stage_moe_layers = virtual_stage_moe_layers(lay, model);
    parts->dense_forward = seconds(lc.layer_forward);
    parts->dense_backward = seconds(lc.layer_backward);
    parts->moe_forward = seconds(lc_moe.layer_forward);
    parts->moe_backward = seconds(lc_moe.layer_backward);
    parts->head_forward = seconds(lc.head_forward);
    parts->head_backward = seconds(lc.head_backward);
    parts->slowest_multiplier = slowest;
  }
  CollectiveAlgo dp_algo = config.algorithm;
  if (dp_algo == CollectiveAlgo::Hierarchical && model_parallel > 1) {
    dp_algo = CollectiveAlgo::Ring;
    r.warnings.push_back(
        "hierarchical all-reduce assumes a data-parallel group of whole hosts; "
        "with model parallelism the gradient all-reduce uses a ring");
  }
  auto add_row = [&](const char* kind, int64_t bytes, Time duration, int64_t count,
                     NcclProtocol protocol = NcclProtocol::Simple) {
    r.collectives.push_back(
        CollectiveTiming{kind, -1, bytes, Time::zero(), Time::zero(), duration, count, protocol});
  };

  // The busiest pipeline rank's MoE layers.
  const uint32_t moe_layers = *std::max_element(rank_moe_layers.begin(), rank_moe_layers.end());
  // EP x TP: an MoE block without shared experts runs the attention's TP all-gather and
  // reduce-scatter only; its MLP's pair is replaced by the dispatched tokens' gather and scatter
  // over TP (the router sees the sequence-split tokens; MoELayer.forward,
  // megatron/core/transformer/moe/moe_layer.py). With shared experts their TP-sharded MLP keeps
  // the pair (SharedExpertMLP gathers its input and reduce-scatters its output over TP). EP 1
  // keeps the dense block's collectives, as it did.
  const bool moe_block_mlp_tp = !(ep > 1 && tp > 1 && model.shared_experts == 0);
  // Tensor parallel: every TP group at once.
  const int64_t act = tp_activation_bytes(model, config.compute, lay);
  const auto [tp_fwd_count, tp_bwd_count] = tp_collectives_per_layer(config.compute);
  Time tp_fwd = Time::zero();
  Time tp_bwd = Time::zero();
  int64_t tp_bytes_per_gpu = 0;  // one micro-batch, one block
  // What an MoE block's TP collectives take less than a dense block's (its MLP pair, when it has
  // none: above), per micro-batch.
  Time tp_moe_saved_fwd = Time::zero();
  Time tp_moe_saved_bwd = Time::zero();
  int64_t tp_moe_saved_bytes = 0;
  int64_t tp_moe_saved_count = 0;  // collectives of each kind
  auto tp_groups = [&] {
    Groups groups;
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t p = 0; p < pp; ++p)
        for (uint32_t c = 0; c < cp; ++c) {
          groups.emplace_back();
          for (uint32_t t = 0; t < tp; ++t) groups.back().push_back(gpu_of(t, c, p, d));
        }
    return groups;
  };
  if (tp > 1) {
    const Groups groups = tp_groups();
    const int64_t per_layer = tp_fwd_count + tp_bwd_count;
    if (lay.sequence_parallel) {
      const auto ag = timer.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups, act);
      const auto rs = timer.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups, act);
      tp_fwd = (ag.duration + rs.duration) * tp_fwd_count;
      tp_bwd = (ag.duration + rs.duration) * tp_bwd_count;
      if (lay.tp_comm_overlap) {
        auto left = [&](Time comm, double gemm_s) {
          return overlapped_exposure(comm, scaled(seconds(gemm_s), slowest), tp);
        };
        tp_fwd = left(ag.duration, lc.qkv_forward) + left(rs.duration, lc.attention_out_forward) +
                 left(ag.duration, lc.mlp_up_forward) + left(rs.duration, lc.mlp_down_forward);
        tp_bwd = left(ag.duration, lc.attention_out_forward) + left(rs.duration, lc.qkv_forward) +
                 left(ag.duration, lc.mlp_down_forward) + left(rs.duration, lc.mlp_up_forward);
        if (config.compute.recompute == Recompute::Full) tp_bwd += tp_fwd;
      }
      tp_bytes_per_gpu = (ag.bytes_per_gpu + rs.bytes_per_gpu) * per_layer;
      if (!moe_block_mlp_tp) {
        // The MLP's all-gather (with the MLP up) and reduce-scatter (with the MLP down), in
        // forward and their conjugates in backward: half of each direction's pairs.
        tp_moe_saved_fwd = (ag.duration + rs.duration) * (tp_fwd_count / 2);
        tp_moe_saved_bwd = (ag.duration + rs.duration) * (tp_bwd_count / 2);
        if (lay.tp_comm_overlap) {
          auto left = [&](Time comm, double gemm_s) {
            return overlapped_exposure(comm, scaled(seconds(gemm_s), slowest), tp);
          };
          tp_moe_saved_fwd =
              left(ag.duration, lc.mlp_up_forward) + left(rs.duration, lc.mlp_down_forward);
          tp_moe_saved_bwd =
              left(ag.duration, lc.mlp_down_forward) + left(rs.duration, lc.mlp_up_forward);
          if (config.compute.recompute == Recompute::Full) tp_moe_saved_bwd += tp_moe_saved_fwd;
        }
        tp_moe_saved_bytes = tp_bytes_per_gpu / 2;
        tp_moe_saved_count = per_layer / 2 * moe_layers * mb;
      }
      add_row("tp_all_gather", act, ag.duration, per_layer * layers * mb - tp_moe_saved_count,
              ag.protocol);
      add_row("tp_reduce_scatter", act, rs.duration, per_layer * layers * mb - tp_moe_saved_count,
              rs.protocol);
    } else {
      const auto ar = timer.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, groups, act);
      tp_fwd = ar.duration * tp_fwd_count;
      tp_bwd = ar.duration * tp_bwd_count;
      tp_bytes_per_gpu = ar.bytes_per_gpu * per_layer;
      add_row("tp_all_reduce", act, ar.duration, per_layer * layers * mb, ar.protocol);
    }
  }

  // Context parallel: the K/V ring, overlapped with attention.
  Time cp_fwd_exposed = Time::zero();
  Time cp_bwd_exposed = Time::zero();
  int64_t cp_bytes_per_gpu = 0;
  if (cp > 1) {
    Groups groups;
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t p = 0; p < pp; ++p)
        for (uint32_t t = 0; t < tp; ++t) {
          groups.emplace_back();
          for (uint32_t c = 0; c < cp; ++c) groups.back().push_back(gpu_of(t, c, p, d));
        }
    const int64_t head_dim = model.hidden / model.heads;
    const int64_t kv_heads =
        std::max<int64_t>(1, model.kv_heads / tp);  // replicated when fewer than TP
    // K and V per KV head: 2 x head_dim, or MLA's d_qk + d_v (K and V after the up-projection).
    const int64_t kv_width =
        is_mla(model) ? static_cast<int64_t>(qk_head_dim(model) + v_head_dim(model)) : 2 * head_dim;
    const int64_t shard =
        config.compute.micro_batch * (model.sequence / cp) * kv_heads * kv_width * 2;
    const auto ag = timer.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups, shard * cp);
    const auto rs =
        timer.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups, shard * cp);
    const Time attention_fwd = scaled(seconds(lc.attention_forward), slowest);
    const Time attention_bwd = scaled(seconds(lc.attention_backward), slowest);
    cp_fwd_exposed = std::max(Time::zero(), ag.duration - attention_fwd);
    cp_bwd_exposed = std::max(Time::zero(), ag.duration + rs.duration - attention_bwd);
    cp_bytes_per_gpu = 2 * ag.bytes_per_gpu + rs.bytes_per_gpu;
    if (parts != nullptr) parts->cp_ring_bytes = shard * cp;
    add_row("cp_all_gather", shard * cp, ag.duration, 2 * layers * mb, ag.protocol);
    add_row("cp_reduce_scatter", shard * cp, rs.duration, layers * mb, rs.protocol);
  }

  if (parts != nullptr) {
    parts->attention_forward = seconds(lc.attention_forward);
    parts->attention_backward = seconds(lc.attention_backward);
    parts->tp_forward = tp_fwd;
    parts->tp_backward = tp_bwd;
    parts->tp_moe_forward = tp_fwd - tp_moe_saved_fwd;
    parts->tp_moe_backward = tp_bwd - tp_moe_saved_bwd;
    parts->moe_block_mlp_tp = moe_block_mlp_tp;
    parts->cp_forward = cp_fwd_exposed;
    parts->cp_backward = cp_bwd_exposed;
  }

  // Pipeline: activations to the next stage, gradients back.
  Time p2p = Time::zero();
  const int64_t p2p_bytes = act / (lay.sequence_parallel ? tp : 1);
  int64_t p2p_bytes_per_gpu = 0;
  if (pp > 1) {
    Groups pairs;
    for (uint32_t d = 0; d < dp; ++d)
      for (uint32_t c = 0; c < cp; ++c)
        for (uint32_t t = 0; t < tp; ++t) pairs.push_back({gpu_of(t, c, 0, d), gpu_of(t, c, 1, d)});
    const auto s = timer.time(CollectiveOp::SendRecv, CollectiveAlgo::Pairwise, pairs, p2p_bytes);
    p2p = s.duration;
    // A middle stage sends activations and gradients once per chunk and micro-batch.
    p2p_bytes_per_gpu = 2 * p2p_bytes * mb * vpi;
    add_row("pp_send_recv", p2p_bytes, p2p, 2 * mb * (int64_t{pp} * vpi - 1));
    if (parts != nullptr) parts->p2p_bytes = p2p_bytes;
  }

  // Expert parallelism: dispatch and combine all-to-alls over every EP group at once, exposed.
  Time ep_fwd = Time::zero();
  Time ep_bwd = Time::zero();
  int64_t ep_bytes_per_gpu = 0;   // one micro-batch, one MoE layer
  Time ep_tp_fwd = Time::zero();  // EP x TP: the dispatched tokens' gathers and scatters
  Time ep_tp_bwd = Time::zero();
  int64_t ep_tp_bytes_per_gpu = 0;
  if (ep > 1) {
    Groups groups = expert_parallel_rank_groups(lay, dp);
    for (auto& g : groups)
      for (uint32_t& rank : g) rank = config.rank_to_gpu[rank];
    const int64_t bytes = ep_all_to_all_bytes(model, config.compute, lay, config.capacity_factor);
    const auto a2a = timer.time(CollectiveOp::AllToAll, CollectiveAlgo::Pairwise, groups, bytes);
    const auto [fwd_count, bwd_count] = ep_all_to_alls_per_layer(config.compute);
    ep_fwd = a2a.duration * fwd_count;
    ep_bwd = a2a.duration * bwd_count;
    ep_bytes_per_gpu = a2a.bytes_per_gpu * (fwd_count + bwd_count);
    add_row("ep_all_to_all", bytes, a2a.duration, int64_t{fwd_count + bwd_count} * moe_layers * mb);
    if (parts != nullptr) {
      parts->ep_bytes = bytes;
      parts->ep_forward_count = fwd_count;
      parts->ep_backward_count = bwd_count;
      parts->ep_groups = groups;
    }
    // EP x TP: each all-to-all has its all-gather (dispatch) or reduce-scatter (combine) of the
    // dispatched tokens over the TP group (models/expert_parallel.hpp), every TP group at once.
    if (const int64_t gathered =
            ep_tensor_gather_bytes(model, config.compute, lay, config.capacity_factor);
        gathered > 0) {
      const Groups groups_tp = tp_groups();
      const auto ag =
          timer.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups_tp, gathered);
      const auto rs =
          timer.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups_tp, gathered);
      // One all-gather and one reduce-scatter per dispatch + combine pair.
      const int fwd_pairs = fwd_count / 2;
      const int bwd_pairs = bwd_count / 2;
      ep_tp_fwd = (ag.duration + rs.duration) * fwd_pairs;
      ep_tp_bwd = (ag.duration + rs.duration) * bwd_pairs;
      ep_tp_bytes_per_gpu = (ag.bytes_per_gpu + rs.bytes_per_gpu) * (fwd_pairs + bwd_pairs);
      const int64_t rows = int64_t{fwd_pairs + bwd_pairs} * moe_layers * mb;
      add_row("ep_tp_all_gather", gathered, ag.duration, rows, ag.protocol);
      add_row("ep_tp_reduce_scatter", gathered, rs.duration, rows, rs.protocol);
      if (parts != nullptr) {
        parts->ep_tp_bytes = gathered;
        parts->ep_tp_forward = ep_tp_fwd;
        parts->ep_tp_backward = ep_tp_bwd;
      }
    }
  }

  // FSDP (FULL_SHARD) composed with TP/CP/PP: each stage's parameters (their TP shard) are sharded
  // over its DP x CP group in units of fsdp.layers_per_unit blocks, gathered before each unit's
  // forward and again before its backward, and its gradients reduce-scattered after its backward.
  const bool fsdp = config.parallelism == DataParallelism::Fsdp;
  auto dp_groups = [&](uint32_t stage) {
    Groups groups;
    for (uint32_t t = 0; t < tp; ++t) {
      groups.emplace_back();
      for (uint32_t d = 0; d < dp; ++d)
        for (uint32_t c = 0; c < cp; ++c) groups.back().push_back(gpu_of(t, c, stage, d));
    }
    return groups;
  };
  // HSDP (fsdp.shard_degree): the DP x CP ranks j = d CP + c of a TP rank split into shard groups
  // of `shard` consecutive ranks, and replicate groups of the ranks `shard` apart
  // (torchtitan's dp_replicate x dp_shard mesh, PyTorch's HYBRID_SHARD): gathers and
  // reduce-scatters run over a shard group, and each reduce-scattered shard is all-reduced over
  // its replicate group right behind its reduce-scatter.
  const uint32_t shard = config.fsdp.shard_degree == 0 ? dp * cp : config.fsdp.shard_degree;
  const uint32_t replicas = std::max<uint32_t>(1, dp * cp / std::max<uint32_t>(1, shard));
  auto fsdp_groups = [&](uint32_t stage, bool replicate) {
    Groups groups;
    for (uint32_t t = 0; t < tp; ++t) {
      const uint32_t count = replicate ? shard : replicas;
      for (uint32_t g = 0; g < count; ++g) {
        groups.emplace_back();
        for (uint32_t k = 0; k < (replicate ? replicas : shard); ++k) {
          const uint32_t j = replicate ? k * shard + g : g * shard + k;
          groups.back().push_back(gpu_of(t, j % cp, stage, j / cp));
        }
      }
    }
    return groups;
  };
  const double layer_shard_params = static_cast<double>(layer_parameters(model)) / tp;
  const double lpu = std::max<uint32_t>(1, config.fsdp.layers_per_unit);
  // The root unit (input embedding on the first stage, output head and final norm on the last; one
  // stage holds both without pipelining), gathered once per step and reduced once.
  auto root_shard_params = [&](uint32_t stage) {
    const double embedding = static_cast<double>(embedding_parameters(model)) / tp;
    if (pp == 1) return embedding;
    return stage == 0 || stage + 1 == pp ? embedding / 2 : 0.0;
  };
  if (fsdp && replicas > 1) r.fsdp_shard_degree = shard;
  if (parts != nullptr && fsdp) {
    parts->fsdp = true;
    parts->fsdp_replicas = replicas;
    parts->fsdp_shard = shard;
    parts->fsdp_layers_per_unit = static_cast<uint32_t>(lpu);
    for (uint32_t i = 0; i < pp; ++i) {
      parts->stage_fsdp_shard_groups.push_back(fsdp_groups(i, false));
      parts->stage_fsdp_replica_groups.push_back(replicas > 1 ? fsdp_groups(i, true) : Groups{});
    }
    parts->fsdp_layer_gather_bytes =
        static_cast<int64_t>(layer_shard_params) * config.fsdp.param_bytes;
    parts->fsdp_layer_reduce_bytes =
        static_cast<int64_t>(layer_shard_params) * config.fsdp.gradient_bytes;
    for (uint32_t i = 0; i < pp; ++i) {
      const auto root = static_cast<int64_t>(root_shard_params(i));
      parts->fsdp_root_gather_bytes.push_back(root * config.fsdp.param_bytes);
      parts->fsdp_root_reduce_bytes.push_back(root * config.fsdp.gradient_bytes);
    }
  }
  std::vector<Time> fsdp_fwd_extra(pp, Time::zero());    // per micro-batch
  std::vector<Time> fsdp_bwd_extra(pp, Time::zero());    // per micro-batch
  std::vector<Time> fsdp_tail(pp, Time::zero());         // reduce-scatters after the last backward
  std::vector<Time> fsdp_root_gather(pp, Time::zero());  // once per step, before the first forward
  std::vector<int64_t> fsdp_bytes(pp, 0);                // per GPU per step
  std::vector<Time> fsdp_busy(pp, Time::zero());         // the collectives' time per step
  if (fsdp) {
    const Time f_layer = scaled(seconds(lc.layer_forward), slowest) + tp_fwd + cp_fwd_exposed;
    const Time b_layer = scaled(seconds(lc.layer_backward), slowest) + tp_bwd + cp_bwd_exposed;
    for (uint32_t i = 0; i < pp; ++i) {
      const Groups groups = fsdp_groups(i, false);
      const double units = std::ceil(rank_layers[i] / lpu);
      const auto unit_params = static_cast<int64_t>(lpu * layer_shard_params);
      const auto ag = timer.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups,
                                 unit_params * config.fsdp.param_bytes);
      auto rs = timer.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups,
                           unit_params * config.fsdp.gradient_bytes);
      // HSDP: the shard's all-reduce over the replicas follows each reduce-scatter on its stream.
      IdleCollectiveTimer::Timing ar;
      if (replicas > 1) {
        ar = timer.time(CollectiveOp::AllReduce, dp_algo, fsdp_groups(i, true),
                        unit_params * config.fsdp.gradient_bytes / shard);
        rs.duration += ar.duration;
        rs.bytes_per_gpu += ar.bytes_per_gpu;
      }
      const Time f_unit = f_layer * static_cast<int64_t>(lpu);
      const Time b_unit = b_layer * static_cast<int64_t>(lpu);
      const auto later = static_cast<int64_t>(units) - 1;
      // The first unit's gather is exposed; each later one is prefetched behind the unit before.
      fsdp_fwd_extra[i] = ag.duration + std::max(Time::zero(), ag.duration - f_unit) * later;
      fsdp_bwd_extra[i] = ag.duration + std::max(Time::zero(), ag.duration - b_unit) * later;
      // Reduce-scatters run on their own stream behind the next unit's backward, which itself
      // takes max(B, AG) when its gather holds it up; after the last micro-batch what is left of
      // them is the tail.
      const Time b_paced = std::max(b_unit, ag.duration);
      fsdp_tail[i] = rs.duration + std::max(Time::zero(), rs.duration - b_paced) * later;
      int64_t step_bytes =
          (2 * ag.bytes_per_gpu + rs.bytes_per_gpu) * static_cast<int64_t>(units) * mb;
      fsdp_busy[i] = (ag.duration * 2 + rs.duration) * (static_cast<int64_t>(units) * mb);
      if (const auto root = static_cast<int64_t>(root_shard_params(i)); root > 0) {
        const auto rag = timer.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, groups,
                                    root * config.fsdp.param_bytes);
        auto rrs = timer.time(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, groups,
                              root * config.fsdp.gradient_bytes);
        if (replicas > 1) {
          const auto rar = timer.time(CollectiveOp::AllReduce, dp_algo, fsdp_groups(i, true),
                                      root * config.fsdp.gradient_bytes / shard);
          rrs.duration += rar.duration;
          rrs.bytes_per_gpu += rar.bytes_per_gpu;
        }
        fsdp_root_gather[i] = rag.duration;
        fsdp_tail[i] += rrs.duration;
        fsdp_busy[i] += rag.duration + rrs.duration;
        step_bytes += rag.bytes_per_gpu + rrs.bytes_per_gpu;
      }
      fsdp_bytes[i] = step_bytes;
      if (i == 0) {
        add_row("fsdp_all_gather", unit_params * config.fsdp.param_bytes, ag.duration,
                2 * static_cast<int64_t>(units) * mb, ag.protocol);
        add_row("fsdp_reduce_scatter", unit_params * config.fsdp.gradient_bytes,
                rs.duration - ar.duration, static_cast<int64_t>(units) * mb, rs.protocol);
        if (replicas > 1) {
          add_row("fsdp_all_reduce", unit_params * config.fsdp.gradient_bytes / shard, ar.duration,
                  static_cast<int64_t>(units) * mb, ar.protocol);
        }
      }
    }
  }

  // Stage times per micro-batch.
  std::vector<Time> stage_fwd(pp);
  std::vector<Time> stage_bwd(pp);
  std::vector<Time> stage_total(pp);
  for (uint32_t i = 0; i < pp; ++i) {
    const bool last = i + 1 == pp;
    const uint32_t n = rank_layers[i];
    const uint32_t nm = rank_moe_layers[i];
    // Dense blocks, then MoE blocks (none for a dense model, where this is n * layer time).
    double layers_f = (n - nm) * lc.layer_forward;
    double layers_b = (n - nm) * lc.layer_backward;
    if (nm > 0) {
      layers_f += nm * lc_moe.layer_forward;
      layers_b += nm * lc_moe.layer_backward;
    }
    const Time compute_f = scaled(seconds(layers_f + (last ? lc.head_forward : 0.0)), slowest);
    const Time compute_b = scaled(seconds(layers_b + (last ? lc.head_backward : 0.0)), slowest);
    // Receives per micro-batch: one per chunk, less the first chunk's input on the first rank
    // (forward) and the loss's gradient on the last (backward).
    const int64_t fwd_receives = vpi - (i == 0 ? 1 : 0);
    const int64_t bwd_receives = vpi - (last ? 1 : 0);
    stage_fwd[i] = compute_f + (tp_fwd + cp_fwd_exposed) * n + p2p * fwd_receives +
                   fsdp_fwd_extra[i] + (ep_fwd + ep_tp_fwd - tp_moe_saved_fwd) * nm;
    stage_bwd[i] = compute_b + (tp_bwd + cp_bwd_exposed) * n + p2p * bwd_receives +
                   fsdp_bwd_extra[i] + (ep_bwd + ep_tp_bwd - tp_moe_saved_bwd) * nm;
    stage_total[i] = stage_fwd[i] + stage_bwd[i];
  }
  const PipelineTime pipe = pipeline_1f1b(stage_total, m, vp);
  if (pp > 1) {
    // Each chunk of a rank takes 1/v of its time (the closed form's assumption).
    std::vector<Time> virtual_fwd(static_cast<std::size_t>(pp) * vp);
    std::vector<Time> virtual_bwd(virtual_fwd.size());
    for (std::size_t s = 0; s < virtual_fwd.size(); ++s) {
      virtual_fwd[s] = stage_fwd[s % pp] / vpi;
      virtual_bwd[s] = stage_bwd[s % pp] / vpi;
    }
    r.pipeline_schedule = schedule_pipeline(virtual_fwd, virtual_bwd, pp, m);
  }
  r.pipeline_bubble = pipe.bubble;
  r.bubble_fraction = pipe.bubble_fraction;

  // Gradient sync per stage, overlapped with its last backward (the DDP closed form).
  const double tokens = static_cast<double>(dp) * static_cast<double>(config.compute.micro_batch) *
                        static_cast<double>(m) * model.sequence;
  const double model_flops = training_flops_per_token(model) * tokens;
  const double peak = peak_flops(config.gpu, config.compute.dtype);
  Time stage_end = pipe.total;  // stage 0 ends last; stage i ends sum_{j<i} t_bwd,j earlier
  Time best = Time::zero();
  std::size_t critical = 0;
  std::vector<std::vector<GradientBucket>> stage_buckets(pp);
  std::vector<std::vector<Time>> stage_sync(pp);
  std::vector<std::vector<NcclProtocol>> stage_protocols(pp);  // per bucket (StepProtocols)
  std::vector<StepBreakdown> stage_step(pp);
  std::vector<Time> stage_gather_exposed(pp, Time::zero());
  const bool sharded_optimizer = lay.distributed_optimizer && dp * cp > 1 && !fsdp;
  if (parts != nullptr) {
    parts->sharded_optimizer = sharded_optimizer;
    parts->dp_algorithm = dp_algo;
  }
  // Megatron's distributed optimizer runs NCCL reduce-scatter / all-gather (rings).
  const CollectiveAlgo dp_ring = CollectiveAlgo::Ring;
  double params_gpu = 0;
  std::vector<double> stage_dense_params(pp, 0.0);   // MoE: the dense part of each stage
  std::vector<double> stage_expert_params(pp, 0.0);  // ... and its routed experts
  int64_t dp_bytes_per_gpu = 0;
  uint32_t first_layer = 0;
  for (uint32_t i = 0; i < pp; ++i) {
    // Cool-down: the last micro-batch's backward walks back one chunk (1/v of a rank) per rank.
    if (i > 0) stage_end -= stage_bwd[i - 1] / vpi;
    BucketScope scope{.first_layer = first_layer,
                      .layers = rank_layers[i],
                      .input_embedding = i == 0,
                      .output_head = i + 1 == pp,
                      .tensor_parallel = tp,
                      .expert_parallel = ep};
    first_layer += rank_layers[i];
    // Dense and (MoE) expert gradients in ready order; experts reduce over their own groups.
    const std::vector<StageBucket> buckets = stage_gradient_buckets(model, config.ddp, scope);
    for (const StageBucket& sb : buckets) stage_buckets[i].push_back(sb.bucket);
    const Groups dense_groups = dp_groups(i);
    Groups expert_groups;
    if (is_moe(model)) {
      expert_groups = expert_data_parallel_rank_groups(lay, dp, i);
      for (auto& g : expert_groups)
        for (uint32_t& rank : g) rank = config.rank_to_gpu[rank];
    }
    if (parts != nullptr) {
      parts->stage_buckets.push_back(buckets);
      parts->stage_dense_groups.push_back(dense_groups);
      parts->stage_expert_groups.push_back(expert_groups);
    }
    double stage_params = 0;
    int64_t stage_bytes = 0;
    Time param_gather = Time::zero();
    for (const StageBucket& sb : buckets) {
      const GradientBucket& b = sb.bucket;
      const Groups& groups = sb.expert ? expert_groups : dense_groups;
      double& counted = sb.expert ? stage_expert_params[i] : stage_params;
      if (fsdp) {
        // The buckets only count the stage's parameters; FSDP's collectives are timed above.
        counted += static_cast<double>(b.size.count()) /
                   static_cast<double>(config.ddp.gradient_bytes_per_param);
        continue;
      }
      if (sharded_optimizer) {
        // Gradients reduce-scattered behind backward; the updated parameters (as many bytes: the
        // buckets are in the gradients' dtype, bf16 like the parameters) all-gathered later.
        const auto rs = timer.time(CollectiveOp::ReduceScatter, dp_ring, groups, b.size.count());
        const auto ag = timer.time(CollectiveOp::AllGather, dp_ring, groups, b.size.count());
        stage_sync[i].push_back(rs.duration);
        stage_protocols[i].push_back(rs.protocol);
        param_gather += ag.duration;
        stage_bytes += rs.bytes_per_gpu + ag.bytes_per_gpu;
      } else {
        const auto& timing = timer.time(CollectiveOp::AllReduce, dp_algo, groups, b.size.count());
        stage_sync[i].push_back(timing.duration);
        stage_protocols[i].push_back(timing.protocol);
        stage_bytes += timing.bytes_per_gpu;
      }
      counted += static_cast<double>(b.size.count()) /
                 static_cast<double>(config.ddp.gradient_bytes_per_param);
    }
    params_gpu = std::max(params_gpu, stage_params);
    stage_dense_params[i] = stage_params;
    if (fsdp) {
      // No DDP buckets: one reduce-scatter tail after the last backward.
      stage_buckets[i].clear();
      stage_sync[i] = {fsdp_tail[i]};
      stage_bytes = fsdp_bytes[i];
    }
    if (i == 0) dp_bytes_per_gpu = stage_bytes;
    StepInputs in;
    in.forward = stage_end - stage_bwd[i];
    in.backward = stage_bwd[i];
    in.optimizer = Time::zero();
    in.bucket_sync = stage_sync[i];
    stage_step[i] = closed_form_step(in, model_flops, total, peak);
    // overlap_param_gather: the next step's first forward on this stage waits for what of the
    // parameter all-gathers its first micro-batch's forward does not cover.
    stage_gather_exposed[i] = std::max(Time::zero(), param_gather - stage_fwd[i]);
    // FSDP: the root unit is gathered before the step's first forward (and kept gathered).
    stage_gather_exposed[i] += fsdp_root_gather[i];
    if (stage_step[i].step + stage_gather_exposed[i] > best) {
      best = stage_step[i].step + stage_gather_exposed[i];
      critical = i;
    }
  }
  // Adam on the GPU's parameters, or on its 1/d shard of them with the distributed optimizer.
  double updated_params = sharded_optimizer || fsdp ? params_gpu / (dp * cp) : params_gpu;
  // MoE: the routed experts' state is sharded over the expert-data-parallel group (DP x CP / EP).
  const double edp = expert_data_parallel(lay, dp);
  double moe_state_bytes = 0;
  if (is_moe(model)) {
    updated_params = 0;
    const double dense_state = sharded_optimizer ? 4.0 + 12.0 / (dp * cp) : 16.0;
    const double expert_state = sharded_optimizer ? 4.0 + 12.0 / edp : 16.0;
    for (uint32_t i = 0; i < pp; ++i) {
      const double dense = stage_dense_params[i] / (sharded_optimizer ? dp * cp : 1.0);
      const double experts = stage_expert_params[i] / (sharded_optimizer ? edp : 1.0);
      updated_params = std::max(updated_params, dense + experts);
      moe_state_bytes = std::max(moe_state_bytes, dense_state * stage_dense_params[i] +
                                                      expert_state * stage_expert_params[i]);
    }
  }
  r.optimizer = config.optimizer.value_or(adam_time(updated_params, config.gpu));
  const StepBreakdown& b = stage_step[critical];
  r.step = b.step + stage_gather_exposed[critical] + r.optimizer;
  r.closed_form_step = r.step;
  r.forward = b.forward;
  r.backward = b.backward;
  r.sync = fsdp ? fsdp_busy[critical] : b.sync_total;
  r.tail = b.tail;
  r.tensor_parallel_comm =
      (tp_fwd + tp_bwd) * layers * mb +
      (ep_tp_fwd + ep_tp_bwd - tp_moe_saved_fwd - tp_moe_saved_bwd) * moe_layers * mb;
  r.context_parallel_exposed = (cp_fwd_exposed + cp_bwd_exposed) * layers * mb;
  r.pipeline_p2p = pp > 1 ? p2p * (2 * mb * vpi) : Time::zero();
  r.expert_all_to_all = (ep_fwd + ep_bwd) * moe_layers * mb;
  // Communication on the critical path: the gradient sync not hidden by the last backward, plus
  // the TP collectives, the exposed K/V ring and the stage's pipeline receives (the bubble apart).
  r.exposed_comm = (r.step - r.optimizer - b.forward - b.backward) + r.tensor_parallel_comm +
                   r.context_parallel_exposed + r.pipeline_p2p + r.expert_all_to_all;
  r.bytes_per_gpu = dp_bytes_per_gpu +
                    (tp_bytes_per_gpu * layers + cp_bytes_per_gpu * layers) * mb +
                    p2p_bytes_per_gpu +
                    (ep_bytes_per_gpu + ep_tp_bytes_per_gpu - tp_moe_saved_bytes) * moe_layers * mb;

  // The critical stage's buckets on its communication stream.
  const Time bwd_start = b.forward;
  Time stream = Time::zero();
  for (std::size_t k = 0; k < stage_buckets[critical].size(); ++k) {
    BucketTiming t;
    t.bytes = stage_buckets[critical][k].size.count();
    t.protocol = stage_protocols[critical][k];
    t.ready = bwd_start + scaled(b.backward, stage_buckets[critical][k].ready_at);
    t.start = std::max(t.ready, stream);
    t.end = t.start + stage_sync[critical][k];
    stream = t.end;
    r.buckets.push_back(t);
  }
  r.rank_backward_start.assign(total, bwd_start);
  r.rank_backward_end.assign(total, bwd_start + b.backward);

  double hardware_flops = model_flops;
  if (config.compute.recompute == Recompute::Full)
    hardware_flops += training_flops_per_token(model) / 3.0 * tokens;
  if (config.compute.recompute == Recompute::Selective) {
    hardware_flops +=
        4.0 * model.layers * static_cast<double>(model.hidden) * model.sequence * tokens;
  }
  const double all_peak = peak * total;
  r.mfu = model_flops / (r.step.seconds() * all_peak);
  r.hfu = hardware_flops / (r.step.seconds() * all_peak);
  r.tokens_per_s = tokens / r.step.seconds();
  r.grad_accumulation = m;
  r.global_batch = uint64_t{dp} * static_cast<uint64_t>(config.compute.micro_batch) * m;
  r.tokens_per_step = tokens;

  // Memory: weights, gradients and Adam state of the GPU's parameters (16 bytes each), and the
  // activations of the micro-batches in flight on stage 0 (min(m, p) under 1F1B, times
  // 1 + (p - 1) / (p v) interleaved); Korthikanti et al. 2022 per block: s*b*h*(10 + 24/t) bytes,
  // 34/t with sequence parallelism, 2 (/t) with full recomputation, all over CP.
  const double sbh = static_cast<double>(model.sequence) *
                     static_cast<double>(config.compute.micro_batch) * model.hidden / cp;
  double per_layer = lay.sequence_parallel ? 34.0 / tp : 10.0 + 24.0 / tp;
  if (config.compute.recompute == Recompute::Full)
    per_layer = lay.sequence_parallel ? 2.0 / tp : 2.0;
  const double interleave =
      vp > 1 ? 1.0 + static_cast<double>(pp - 1) / (static_cast<double>(pp) * vp) : 1.0;
  // 16 bytes per parameter: bf16 weights and gradients (2 + 2) and Adam's fp32 master weights,
  // first and second moments (12); the distributed optimizer keeps 1/d of the 12.
  // FSDP shards all 16 over DP x CP (HSDP: over its shard group) and holds two gathered units (the
  // current and the prefetched one) and one unit's unsharded gradients besides.
  const double state_bytes =
      fsdp ? 16.0 / shard : (sharded_optimizer ? 4.0 + 12.0 / (dp * cp) : 16.0);
  const double gathered =
      fsdp ? lpu * layer_shard_params *
                 static_cast<double>(2 * config.fsdp.param_bytes + config.fsdp.gradient_bytes)
           : 0.0;
  r.communication_memory_bytes =
      layout_communication_buffer_bytes(LayoutCommunicators{.tensor = tp,
                                                            .context = cp,
                                                            .pipeline = pp,
                                                            .data = dp,
                                                            .expert = ep,
                                                            .fsdp_shard = fsdp ? shard : 0,
                                                            .fsdp_replicas = fsdp ? replicas : 1,
                                                            .sharded_optimizer = sharded_optimizer,
                                                            .data_algorithm = dp_algo,
                                                            .gpus_per_host = config.gpus_per_host,
                                                            .channels = config.channels});
  r.memory_per_gpu_bytes = (is_moe(model) ? moe_state_bytes : state_bytes * params_gpu) + gathered +
                           r.communication_memory_bytes +
                           sbh * per_layer * rank_layers.front() * std::min(m, pp) * interleave;
  warn_if_over_gpu_memory(r.warnings, "this layout", r.memory_per_gpu_bytes, config.gpu);
  return r;
}

}  // namespace syncsim::models
