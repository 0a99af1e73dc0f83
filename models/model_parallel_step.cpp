#include "models/model_parallel_step.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <utility>

#include "models/model_parallel_engine.hpp"

namespace syncsim::models {

void ModelParallelStepEngine::begin(std::function<void()> done) {
  if (!prepared_) prepare();
  reset();
  done_ = std::move(done);
  step_start_ = now();
  // The distributed optimizer's parameter all-gathers (the previous step's update), bucket by
  // bucket on each stage's communication stream.
  for (uint32_t i = 0; i < p_; ++i) {
    if (parts_.sharded_optimizer) {
      for (std::size_t k = 0; k < parts_.stage_buckets[i].size(); ++k) {
        stages_[i].queue.push_back(Comm{true, k});
      }
      stages_[i].gathers_left = parts_.stage_buckets[i].size();
    }
    pump(i);
    // FSDP: the root unit (embedding, head) is gathered before the stage's first forward.
    if (parts_.fsdp && parts_.fsdp_root_gather_bytes[i] > 0) {
      stages_[i].root_gathered = false;
      fsdp_issue(i, FsdpComm{CollectiveOp::AllGather, parts_.fsdp_root_gather_bytes[i], true});
    }
  }
  for (uint32_t i = 0; i < p_; ++i)
    for (uint32_t u = 0; u < units_per_stage_; ++u) try_start(i, u);
}

void ModelParallelStepEngine::prepare() {
  if (const auto refusal = model_parallel_step_refusal(config_)) {
    throw std::invalid_argument(*refusal);
  }
  closed_ = simulate_parallel_step(spec_, fidelity_, config_, &parts_);
  timer_ = std::make_unique<IdleCollectiveTimer>(spec_, fidelity_, config_);
  const ParallelLayout& l = config_.layout;
  tp_ = std::max<uint32_t>(1, l.tensor);
  cp_ = std::max<uint32_t>(1, l.context);
  p_ = std::max<uint32_t>(1, l.pipeline);
  v_ = std::max<uint32_t>(1, l.virtual_pipeline);
  m_ = std::max<uint32_t>(1, config_.grad_accumulation);
  dp_ = parts_.data_parallel;
  block_ = tp_ * cp_ * dp_;
  stages_total_ = p_ * v_;
  units_per_stage_ = config_.model_parallel_lockstep || parts_.fsdp ? 1 : cp_ * dp_;
  if (parts_.fsdp && !config_.model_parallel_lockstep) {
    warnings_.push_back(
        "lockstep_replicas: false is not modelled with FSDP (its gathers and reduce-scatters "
        "span the replicas); the replicas of a stage advance together");
  }
  order_ = pipeline_operation_order(p_, v_, m_);
  // Units: the ranks each stands for, their slowest multiplier and timed stragglers.
  const std::vector<double> multiplier = rank_compute_multipliers(config_, p_ * block_);
  units_.assign(static_cast<std::size_t>(p_) * units_per_stage_, Unit{});
  for (uint32_t i = 0; i < p_; ++i) {
    for (uint32_t u = 0; u < units_per_stage_; ++u) {
      Unit& unit = units_[unit_index(i, u)];
      for (const uint32_t o : unit_offsets(u)) {
        const uint32_t rank = i * block_ + o;
        unit.multiplier = std::max(unit.multiplier, multiplier[rank]);
        for (const ComputeSlowdown& s : config_.perturbations.slowdowns) {
          if (s.rank == rank) unit.slowed_ranks.push_back(rank);
        }
      }
      std::sort(unit.slowed_ranks.begin(), unit.slowed_ranks.end());
      unit.slowed_ranks.erase(std::unique(unit.slowed_ranks.begin(), unit.slowed_ranks.end()),
                              unit.slowed_ranks.end());
    }
  }
  rank_multiplier_ = multiplier;
  // Each bucket's place in the last micro-batch's backward: the chunk whose backward makes it
  // ready (buckets fill from the last layers), and the fraction of that chunk's backward.
  bucket_chunk_.resize(p_);
  bucket_within_.resize(p_);
  for (uint32_t i = 0; i < p_; ++i) {
    for (const StageBucket& b : parts_.stage_buckets[i]) {
      const double at = std::clamp(b.bucket.ready_at, 0.0, 1.0) * v_;
      const auto k = std::min<uint32_t>(v_ - 1, static_cast<uint32_t>(std::floor(at)));
      bucket_chunk_[i].push_back(v_ - 1 - k);
      bucket_within_[i].push_back(at - k);
    }
  }
  // A pipeline send is one transfer per GPU pair. NCCL moves it in chunks of a few hundred KiB,
  // several in flight, so on a path it has to itself it runs at the path's rate after one
  // chunk's latency; the closed form times that chunked plan, the engine one transfer, which
  // the flow and packet models share with the other traffic as the chunks would be (the two
  // differ by the pipeline's fill, one chunk's time per send). Far fewer transfers: a 16 MiB
  // send is one instead of 32.
  if (parts_.p2p_bytes > 0) {
    PlanOptions o;
    o.op = CollectiveOp::SendRecv;
    o.algo = CollectiveAlgo::Pairwise;
    o.ranks = 2;
    o.bytes = parts_.p2p_bytes;
    o.channels = config_.channels;
    o.gpus_per_host = config_.gpus_per_host;
    o.nics_per_host = config_.nics_per_host;
    p2p_.protocol = NcclProtocol::Simple;
    p2p_.run = shape_step_collective(config_, NcclProtocol::Simple, o);
    o.chunk_bytes = parts_.p2p_bytes;
    o.root = 0;
    o.peer = 1;
    p2p_.plan = build_plan(o);
  }
  // The stage's expert groups: EP groups whose ranks lie in stage i.
  stage_ep_groups_.assign(p_, {});
  for (const auto& g : parts_.ep_groups) {
    if (g.empty()) continue;
    stage_ep_groups_[stage_of_gpu(g.front())].push_back(g);
  }
  if (tp_ > 1 && spans_hosts_of(tp_)) {
    if (!config_.layout.tp_comm_overlap) {
      // A TP group across hosts: its collectives run live, per block, as barriers inside the
      // operation (every TP group of the stage at once).
      tp_live_ = true;
      tp_bytes_ = tp_activation_bytes(config_.model, config_.compute, config_.layout);
      const auto [forward, backward] = tp_collectives_per_layer(config_.compute);
      const int pairs = config_.layout.sequence_parallel ? 2 : 1;  // all-gather + reduce-scatter
      tp_forward_per_layer_ = static_cast<uint32_t>(forward * pairs);
      tp_backward_per_layer_ = static_cast<uint32_t>(backward * pairs);
      stage_tp_groups_.assign(p_, {});
      for (uint32_t i = 0; i < p_; ++i) {
        for (uint32_t r = 0; r < cp_ * dp_; ++r) {
          std::vector<uint32_t> g;
          for (uint32_t t = 0; t < tp_; ++t) {
            g.push_back(config_.rank_to_gpu[i * block_ + r * tp_ + t]);
          }
          stage_tp_groups_[i].push_back(std::move(g));
        }
      }
    } else {
      // Transformer Engine's userbuffers and PyTorch's async TP overlap TP communication with
      // GEMMs only inside an NVLink domain (CUDA multicast / IPC handles;
      // github.com/NVIDIA/TransformerEngine/issues/1071), so no real run overlaps TP over the
      // network.
      warnings_.push_back(
          "tensor-parallel groups span hosts with tp_comm_overlap, which Transformer Engine and "
          "PyTorch's async TP run only inside an NVLink domain: the overlapped collectives are "
          "timed on an idle fabric and do not load the shared one");
    }
  }
  if (cp_ > 1 && spans_hosts_of(tp_ * cp_)) {
    if (!tp_live_ && parts_.ep_bytes <= 0 && parts_.cp_ring_bytes > 0) {
      // A CP group across hosts: each block's K/V ring runs live beside its attention core
      // (every CP group of the stage at once), Megatron's ring attention.
      cp_live_ = true;
      stage_cp_groups_.assign(p_, {});
      for (uint32_t i = 0; i < p_; ++i) {
        for (uint32_t d = 0; d < dp_; ++d) {
          for (uint32_t t = 0; t < tp_; ++t) {
            std::vector<uint32_t> g;
            for (uint32_t c = 0; c < cp_; ++c) {
              g.push_back(config_.rank_to_gpu[i * block_ + (d * cp_ + c) * tp_ + t]);
            }
            stage_cp_groups_[i].push_back(std::move(g));
          }
        }
      }
    } else {
      warnings_.push_back(
          "context-parallel groups span hosts: with expert parallelism or TP groups across hosts "
          "their K/V exchange is timed on an idle fabric and does not load the shared one");
    }
  }
  // The barriers of every operation, once the live TP and CP collectives are known.
  barrier_plans_.clear();
  for (uint32_t s = 0; s < stages_total_; ++s) {
    barrier_plans_.push_back(barrier_plan(s, false));
    barrier_plans_.push_back(barrier_plan(s, true));
  }
  prepared_ = true;
}

bool ModelParallelStepEngine::spans_hosts_of(uint32_t span) const {
  const uint32_t per_host = std::max<uint32_t>(1, config_.gpus_per_host);
  const uint32_t first = config_.rank_to_gpu[0] / per_host;
  for (uint32_t r = 1; r < span && r < config_.rank_to_gpu.size(); ++r) {
    if (config_.rank_to_gpu[r] / per_host != first) return true;
  }
  return false;
}

uint32_t ModelParallelStepEngine::stage_of_gpu(uint32_t gpu) {
  if (gpu_stage_.empty()) {
    gpu_stage_.assign(*std::max_element(config_.rank_to_gpu.begin(), config_.rank_to_gpu.end()) + 1,
                      0);
    for (uint32_t r = 0; r < config_.rank_to_gpu.size(); ++r) {
      gpu_stage_[config_.rank_to_gpu[r]] = r / block_;
    }
  }
  return gpu_stage_[gpu];
}

void ModelParallelStepEngine::reset() {
  const std::size_t inputs = static_cast<std::size_t>(stages_total_) * m_ * units_per_stage_;
  forward_in_.assign(inputs, false);
  backward_in_.assign(inputs, false);
  for (Unit& u : units_) {
    u.next = 0;
    u.busy = false;
  }
  stages_.assign(p_, Stage{});
  for (uint32_t i = 0; i < p_; ++i) {
    const auto n = parts_.stage_buckets[i].size();
    stages_[i].ready_count.assign(n, 0);
    stages_[i].timings.assign(n, BucketTiming{});
    for (std::size_t k = 0; k < n; ++k) {
      stages_[i].timings[k].bytes = parts_.stage_buckets[i][k].bucket.size.count();
    }
  }
  schedule_.clear();
  communication_.clear();
  stage_end_.assign(p_, Time::zero());
  stages_left_ = p_;
  rank_backward_start_.assign(p_, Time::zero());
  rank_backward_end_.assign(p_, Time::zero());
}

std::vector<uint32_t> ModelParallelStepEngine::unit_offsets(uint32_t u) const {
  std::vector<uint32_t> o;
  if (units_per_stage_ == 1) {
    o.resize(block_);
    for (uint32_t k = 0; k < block_; ++k) o[k] = k;
  } else {
    for (uint32_t t = 0; t < tp_; ++t) o.push_back(u * tp_ + t);
  }
  return o;
}

std::pair<Time, Time> ModelParallelStepEngine::op_work(uint32_t s, bool forward) const {
  const uint32_t n = parts_.virtual_stage_layers[s];
  const uint32_t moe = parts_.virtual_stage_moe_layers[s];
  const auto dense = static_cast<int64_t>(n - moe);
  const auto moe_n = static_cast<int64_t>(moe);
  Time compute = forward ? parts_.dense_forward * dense + parts_.moe_forward * moe_n
                         : parts_.dense_backward * dense + parts_.moe_backward * moe_n;
  if (s + 1 == stages_total_) compute += forward ? parts_.head_forward : parts_.head_backward;
  const Time tp = tp_live_ ? Time::zero() : (forward ? parts_.tp_forward : parts_.tp_backward);
  const Time cp = cp_live_ ? Time::zero() : (forward ? parts_.cp_forward : parts_.cp_backward);
  // EP x TP with TP inside a host: the dispatched tokens' TP gathers at idle-fabric time, as the
  // TP collectives of the activations, and an MoE block's own TP collectives (without shared
  // experts, the attention's only).
  const Time ep_tp =
      tp_live_ ? Time::zero() : (forward ? parts_.ep_tp_forward : parts_.ep_tp_backward);
  const Time tp_moe_saved = tp_live_ ? Time::zero()
                                     : (forward ? parts_.tp_forward - parts_.tp_moe_forward
                                                : parts_.tp_backward - parts_.tp_moe_backward);
  const Time fixed = (tp + cp) * static_cast<int64_t>(n) + (ep_tp - tp_moe_saved) * moe_n;
  return {compute, fixed};
}

Time ModelParallelStepEngine::compute_end(const Unit& unit, Time work) {
  const Time start = now();
  Time end = start + scaled(work, unit.multiplier);
  for (const uint32_t rank : unit.slowed_ranks) {
    end = std::max(end, compute_finish(config_.perturbations.slowdowns, rank, start,
                                       scaled(work, rank_multiplier_[rank])));
  }
  return end;
}

void ModelParallelStepEngine::try_start(uint32_t i, uint32_t u) {
  Unit& unit = units_[unit_index(i, u)];
  if (unit.busy || unit.next >= order_[i].size()) return;
  const PipelineOperation& op = order_[i][unit.next];
  const uint32_t s = op.virtual_stage(p_);
  const uint32_t j = op.micro_batch;
  const bool ready = op.forward ? (s == 0 || forward_in_[input_index(s, j, u)])
                                : (s + 1 == stages_total_ || backward_in_[input_index(s, j, u)]);
  if (!ready) return;
  unit.busy = true;
  unit.op_start = now();
  unit.piece = 0;
  const auto [work, fixed] = op_work(s, op.forward);
  unit.nominal = scaled(work, unit.multiplier) + fixed;
  if (parts_.fsdp) {
    // The operation's first unit is gathered now (exposed); each later one while the unit
    // before it computes (prefetch one ahead).
    stages_[i].op_gathers_issued = 0;
    stages_[i].op_gathers_done = 0;
    fsdp_gather_unit(i, s, op.forward, 0);
  }
  if (!op.forward && j + 1 == m_) {
    if (u == 0) rank_backward_start_[i] = std::max(rank_backward_start_[i], now());
    // Gradient buckets of this chunk become ready during its last backward.
    for (std::size_t k = 0; k < dp_bucket_count(i) && k < bucket_chunk_[i].size(); ++k) {
      if (bucket_chunk_[i][k] != op.chunk) continue;
      const Time at = now() + scaled(unit.nominal, bucket_within_[i][k]);
      queue().schedule_fn(at, [this, i, k] { bucket_ready(i, k); });
    }
  }
  run_piece(i, u);
}

void ModelParallelStepEngine::run_piece(uint32_t i, uint32_t u) {
  Unit& unit = units_[unit_index(i, u)];
  const PipelineOperation& op = order_[i][unit.next];
  const uint32_t s = op.virtual_stage(p_);
  if (parts_.fsdp) {
    // FSDP: unit `piece` (in forward order, reversed in backward) once it is gathered.
    Stage& st = stages_[i];
    if (st.op_gathers_done <= unit.piece || !st.root_gathered) {
      st.waiting_for_gather = true;
      return;
    }
    if (unit.piece + 1 < fsdp_units(s)) fsdp_gather_unit(i, s, op.forward, unit.piece + 1);
    unit.sub_piece = 0;
    run_fsdp_stretch(i, u);
    return;
  }
  const auto [work, fixed] = op_work(s, op.forward);
  if (cp_live_) {
    // Piece k < n: block k up to its attention core (which runs beside the K/V ring at the
    // barrier); piece n: the head, on the last virtual stage.
    const auto n = static_cast<int64_t>(parts_.virtual_stage_layers[s]);
    const Time head = s + 1 == stages_total_
                          ? (op.forward ? parts_.head_forward : parts_.head_backward)
                          : Time::zero();
    const Time attention = op.forward ? parts_.attention_forward : parts_.attention_backward;
    const Time piece = unit.piece < n ? (work - head) / n - attention : head;
    const Time piece_fixed = unit.piece < n ? fixed / n : Time::zero();
    const Time end = std::max(compute_end(unit, piece) + piece_fixed, now());
    queue().schedule_fn(end, [this, i, u] { piece_done(i, u); });
    return;
  }
  const auto pieces = static_cast<int64_t>(barriers(s, op.forward)) + 1;
  const Time end = std::max(compute_end(unit, work / pieces) + fixed / pieces, now());
  queue().schedule_fn(end, [this, i, u] { piece_done(i, u); });
}

void ModelParallelStepEngine::piece_done(uint32_t i, uint32_t u) {
  Unit& unit = units_[unit_index(i, u)];
  const PipelineOperation& op = order_[i][unit.next];
  if (parts_.fsdp) {
    const uint32_t s = op.virtual_stage(p_);
    if (!op.forward) {
      // The unit's gradients are reduce-scattered on their own stream.
      ++stages_[i].reduces_left;
      fsdp_issue(i, FsdpComm{CollectiveOp::ReduceScatter,
                             parts_.fsdp_layer_reduce_bytes *
                                 static_cast<int64_t>(fsdp_unit_layers(s, false, unit.piece)),
                             false});
    }
    if (++unit.piece < fsdp_units(s)) {
      run_piece(i, u);
      return;
    }
    end_op(i, u);
    return;
  }
  if (unit.piece < barriers(op.virtual_stage(p_), op.forward)) {
    ++unit.piece;
    arrive_barrier(i, u, unit.piece - 1);
    return;
  }
  // The stage's first forward ends no earlier than its parameter all-gathers.
  if (unit.next == 0 && stages_[i].gathers_left > 0) {
    stages_[i].gather_waiters.push_back(u);
    return;
  }
  end_op(i, u);
}

void ModelParallelStepEngine::end_op(uint32_t i, uint32_t u) {
  Unit& unit = units_[unit_index(i, u)];
  const PipelineOperation op = order_[i][unit.next];
  const uint32_t s = op.virtual_stage(p_);
  if (u == 0) {
    PipelineOperation done = op;
    done.start = unit.op_start - step_start_;
    done.end = now() - step_start_;
    schedule_.push_back(done);
    if (!op.forward && op.micro_batch + 1 == m_) {
      rank_backward_end_[i] = std::max(rank_backward_end_[i], now());
    }
  }
  if (op.forward && s + 1 < stages_total_) send(s, s + 1, op.micro_batch, u, true);
  if (!op.forward && s > 0) send(s, s - 1, op.micro_batch, u, false);
  unit.busy = false;
  ++unit.next;
  if (unit.next == order_[i].size() && parts_.fsdp && parts_.fsdp_root_reduce_bytes[i] > 0) {
    ++stages_[i].reduces_left;
    fsdp_issue(i, FsdpComm{CollectiveOp::ReduceScatter, parts_.fsdp_root_reduce_bytes[i], true});
  }
  if (unit.next == order_[i].size()) {
    ++stages_[i].units_done;
    check_stage(i);
  }
  try_start(i, u);
}

void ModelParallelStepEngine::send(uint32_t from, uint32_t to, uint32_t j, uint32_t u,
                                   bool forward) {
  const uint32_t rank_from = from % p_;
  const uint32_t rank_to = to % p_;
  const std::size_t slice = record(u, "pp_send", rank_from, parts_.p2p_bytes);
  auto arrived = [this, to, j, u, forward, rank_to, slice] {
    close(slice);
    (forward ? forward_in_ : backward_in_)[input_index(to, j, u)] = true;
    try_start(rank_to, u);
  };
  if (parts_.p2p_bytes <= 0) {
    queue().schedule_fn(now(), arrived);
    return;
  }
  Groups pairs;
  for (const uint32_t o : unit_offsets(u)) {
    pairs.push_back(
        {config_.rank_to_gpu[rank_from * block_ + o], config_.rank_to_gpu[rank_to * block_ + o]});
  }
  run_groups(p2p_, pairs, kPipelineCommunicators + std::min(rank_from, rank_to),
             std::move(arrived));
}

void ModelParallelStepEngine::bucket_ready(uint32_t i, std::size_t k) {
  Stage& st = stages_[i];
  if (++st.ready_count[k] < units_per_stage_) return;
  st.timings[k].ready = now() - step_start_;
  st.queue.push_back(Comm{false, k});
  pump(i);
}

void ModelParallelStepEngine::pump(uint32_t i) {
  Stage& st = stages_[i];
  if (st.busy || st.queue.empty()) return;
  const Comm comm = st.queue.front();
  st.queue.pop_front();
  st.busy = true;
  const StageBucket& b = parts_.stage_buckets[i][comm.bucket];
  const Groups& groups = b.expert ? parts_.stage_expert_groups[i] : parts_.stage_dense_groups[i];
  const auto ranks = static_cast<uint32_t>(groups.empty() ? 0 : groups.front().size());
  const CollectiveOp op = comm.gather                ? CollectiveOp::AllGather
                          : parts_.sharded_optimizer ? CollectiveOp::ReduceScatter
                                                     : CollectiveOp::AllReduce;
  const CollectiveAlgo algo =
      op == CollectiveOp::AllReduce ? parts_.dp_algorithm : CollectiveAlgo::Ring;
  if (!comm.gather) {
    st.timings[comm.bucket].start = now() - step_start_;
    st.timings[comm.bucket].protocol =
        step_protocol(config_, op, algo, ranks, b.bucket.size.count());
  }
  const char* kind = comm.gather                ? "dp_param_all_gather"
                     : parts_.sharded_optimizer ? "dp_reduce_scatter"
                                                : "dp_all_reduce";
  const std::size_t slice = record(0, kind, i, b.bucket.size.count());
  auto finished = [this, i, comm, slice] {
    close(slice);
    comm_done(i, comm);
  };
  if (ranks < 2) {
    queue().schedule_fn(now(), finished);
    return;
  }
  const auto& c = timer_->plan(op, algo, ranks, b.bucket.size.count());
  run_groups(
      c, groups,
      kDataCommunicators + (i * 2 + (b.expert ? 1 : 0)) * static_cast<uint32_t>(groups.size()),
      std::move(finished));
}

void ModelParallelStepEngine::comm_done(uint32_t i, Comm comm) {
  Stage& st = stages_[i];
  st.busy = false;
  if (comm.gather) {
    if (--st.gathers_left == 0) {
      std::vector<uint32_t> waiters;
      waiters.swap(st.gather_waiters);
      for (const uint32_t u : waiters) end_op(i, u);
    }
  } else {
    st.timings[comm.bucket].end = now() - step_start_;
    ++st.buckets_done;
  }
  pump(i);
  check_stage(i);
}

void ModelParallelStepEngine::check_stage(uint32_t i) {
  Stage& st = stages_[i];
  if (st.done || st.units_done < units_per_stage_ || st.buckets_done < dp_bucket_count(i) ||
      st.gathers_left > 0 || st.reduces_left > 0) {
    return;
  }
  st.done = true;
  stage_end_[i] = now();
  if (--stages_left_ > 0) return;
  // Every stage is done: the optimizer, then the step ends.
  queue().schedule_fn(now() + closed_.optimizer, [this] { finish_step(); });
}

std::optional<std::string> model_parallel_step_refusal(const StepConfig& /*config*/) {
  // Every layout the closed form runs, the engine runs too (HSDP included).
  return std::nullopt;
}

std::unique_ptr<StepEngine> make_model_parallel_step_engine(TransferBackend& backend,
                                                            const net::NetworkSpec& spec,
                                                            Fidelity fidelity,
                                                            const StepConfig& config) {
  return std::make_unique<ModelParallelStepEngine>(backend, spec, fidelity, config);
}

StepResult simulate_model_parallel_step(TransferBackend& backend, const net::NetworkSpec& spec,
                                        Fidelity fidelity, const StepConfig& config) {
  auto engine = make_model_parallel_step_engine(backend, spec, fidelity, config);
  return run_step_to_end(*engine, backend);
}

}  // namespace syncsim::models
