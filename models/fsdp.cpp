#include "models/fsdp.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include "models/idle_collective_timer.hpp"
#include "models/memory_warning.hpp"
#include "models/step_engine.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::models {

namespace {

Time seconds(double s) { return Time::from_seconds(s); }

// The algorithm of one FSDP collective: HSDP's replica all-reduces run as the workload says.
CollectiveAlgo algo_of(const FsdpComm& c, CollectiveAlgo algo) {
  return c.op == CollectiveOp::AllReduce ? algo : fsdp_gather_algorithm(algo);
}

// The GPU groups an FSDP collective runs on: all-gathers and reduce-scatters within each shard
// group
// (`shard` consecutive ranks), HSDP's all-reduces across the replicas (ranks `shard` apart).
struct FsdpGroups {
  std::vector<std::vector<uint32_t>> shard;
  std::vector<std::vector<uint32_t>> replicate;
  const std::vector<std::vector<uint32_t>>& of(const FsdpComm& c) const {
    return c.op == CollectiveOp::AllReduce ? replicate : shard;
  }
};
FsdpGroups fsdp_groups(const std::vector<uint32_t>& rank_to_gpu, uint32_t shard) {
  const auto n = static_cast<uint32_t>(rank_to_gpu.size());
  FsdpGroups g;
  const uint32_t replicas = n / shard;
  g.shard.assign(replicas, {});
  g.replicate.assign(shard, {});
  for (uint32_t r = 0; r < n; ++r) {
    g.shard[r / shard].push_back(rank_to_gpu[r]);
    g.replicate[r % shard].push_back(rank_to_gpu[r]);
  }
  return g;
}

// Runs the schedule on every rank: compute tasks on each rank's compute stream, collectives on the
// all-gather and reduce-scatter streams (one shared stream when asked), each collective issued when
// every rank has reached its issue point.
class FsdpDriver {
 public:
  FsdpDriver(TransferBackend& backend, const StepConfig& config, const FsdpSchedule& schedule,
             const FsdpGroups& groups, const std::vector<double>& multiplier,
             const std::vector<Time>* cached, IdleCollectiveTimer& timer)
      : backend_(backend),
        config_(config),
        schedule_(schedule),
        groups_(groups),
        multiplier_(multiplier),
        cached_(cached),
        timer_(timer),
        ranks_(static_cast<uint32_t>(multiplier.size())),
        next_(ranks_, 0),
        busy_(ranks_, false),
        issued_(schedule.comms.size(), 0),
        done_(schedule.comms.size(), false),
        streams_(config.fsdp.separate_streams ? 2 : 1) {
    timings.resize(schedule.comms.size());
    for (std::size_t i = 0; i < schedule.comms.size(); ++i) {
      const FsdpComm& c = schedule.comms[i];
      timings[i].kind = std::string(to_string(c.op));
      timings[i].unit = c.unit;
      timings[i].bytes = c.bytes;
      timings[i].protocol =
          step_protocol(config, c.op, algo_of(c, config.algorithm),
                        static_cast<uint32_t>(groups.of(c).front().size()), c.bytes);
      timings[i].end = Time::zero() - Time::ps(1);
    }
    rank_end_.assign(ranks_, Time::zero());
    tasks_left_ = static_cast<std::size_t>(ranks_) * schedule.tasks.size();
    comms_left_ = schedule.comms.size();
    slices.resize(schedule.tasks.size());
    task_end.assign(schedule.tasks.size(), Time::zero());
  }

  void start() {
    if (!schedule_.tasks.empty() && schedule_.tasks[0].gather >= 0) {
      issue(static_cast<std::size_t>(schedule_.tasks[0].gather));
    }
    for (uint32_t r = 0; r < ranks_; ++r) try_start(r);
  }

  std::vector<CollectiveTiming> timings;
  std::vector<ComputeSlice> slices;  // rank 0
  std::vector<Time> task_end;        // slowest rank
  std::vector<Time> rank_end_;       // when each rank's last task ended
  // Called (inside the last task's or collective's event) once every rank has run every task and
  // every collective has finished.
  std::function<void()> on_all_done;

 private:
  struct Stream {
    std::deque<std::size_t> queue;
    bool busy = false;
    std::vector<std::unique_ptr<CollectiveRunner>> runners;  // one per group
    std::size_t running = 0;                                 // runners not yet done
  };

  Time now() const { return backend_.simulation().now(); }
  EventQueue& queue() { return backend_.simulation().queue(); }

  void try_start(uint32_t rank) {
    if (busy_[rank] || next_[rank] >= schedule_.tasks.size()) return;
    const std::size_t k = next_[rank];
    const FsdpTask& task = schedule_.tasks[k];
    if (task.gather >= 0 && !done_[static_cast<std::size_t>(task.gather)]) return;
    busy_[rank] = true;
    const Time begin = now();
    if (rank == 0) slices[k] = ComputeSlice{task.name, begin, begin};
    // The next task's all-gather is issued as this one starts (prefetch depth one).
    if (k + 1 < schedule_.tasks.size() && schedule_.tasks[k + 1].gather >= 0) {
      count_issue(static_cast<std::size_t>(schedule_.tasks[k + 1].gather));
    }
    queue().schedule_fn(compute_finish(config_.perturbations.slowdowns, rank, begin,
                                       scaled(task.duration, multiplier_[rank])),
                        [this, rank] { end_task(rank); });
  }

  void end_task(uint32_t rank) {
    const std::size_t k = next_[rank];
    const FsdpTask& task = schedule_.tasks[k];
    if (rank == 0) slices[k].end = now();
    task_end[k] = std::max(task_end[k], now());
    rank_end_[rank] = now();
    busy_[rank] = false;
    ++next_[rank];
    --tasks_left_;
    if (task.reduce >= 0) count_issue(static_cast<std::size_t>(task.reduce));
    try_start(rank);
    check_all_done();
  }

  void check_all_done() {
    if (tasks_left_ == 0 && comms_left_ == 0 && on_all_done) {
      auto done = std::move(on_all_done);
      on_all_done = nullptr;
      done();
    }
  }

  void count_issue(std::size_t comm) {
    if (++issued_[comm] == ranks_) issue(comm);
  }

  Stream& stream_of(std::size_t comm) {
    const bool gather = schedule_.comms[comm].op == CollectiveOp::AllGather;
    return streams_[streams_.size() == 2 && !gather ? 1 : 0];
  }

  void issue(std::size_t comm) {
    timings[comm].ready = now();
    Stream& s = stream_of(comm);
    s.queue.push_back(comm);
    // HSDP: the replicas' all-reduce is enqueued with its reduce-scatter, right behind it.
    if (const int32_t then = schedule_.comms[comm].then; then >= 0) {
      timings[static_cast<std::size_t>(then)].ready = now();
      s.queue.push_back(static_cast<std::size_t>(then));
    }
    pump(s);
  }

  void pump(Stream& s) {
    if (s.busy || s.queue.empty()) return;
    const std::size_t comm = s.queue.front();
    s.queue.pop_front();
    s.busy = true;
    timings[comm].start = now();
    const FsdpComm& c = schedule_.comms[comm];
    const std::vector<std::vector<uint32_t>>& groups = groups_.of(c);
    const auto group_ranks = static_cast<uint32_t>(groups.front().size());
    if (cached_ != nullptr || group_ranks == 1) {
      const Time d = cached_ != nullptr ? (*cached_)[comm] : Time::zero();
      queue().schedule_fn(now() + d, [this, comm, &s] { finish(s, comm); });
      return;
    }
    const IdleCollectiveTimer::Collective& collective =
        timer_.plan(c.op, algo_of(c, config_.algorithm), group_ranks, c.bytes);
    s.running = groups.size();
    // One communicator per group: the shard groups', then HSDP's replicate groups'.
    const auto first = static_cast<uint32_t>(c.op == CollectiveOp::AllReduce ? groups_.shard.size()
                                                                             : std::size_t{0});
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      CollectiveRunOptions options = collective.run;
      options.communicator = (first + static_cast<uint32_t>(gi)) % 65536;
      s.runners.push_back(
          std::make_unique<CollectiveRunner>(backend_, collective.plan, groups[gi], options));
    }
    for (std::size_t i = s.runners.size() - groups.size(); i < s.runners.size(); ++i) {
      s.runners[i]->start([this, comm, &s](const CollectiveResult&) {
        if (--s.running == 0) finish(s, comm);
      });
    }
  }

  void finish(Stream& s, std::size_t comm) {
    timings[comm].end = now();
    done_[comm] = true;
    --comms_left_;
    s.busy = false;
    if (!s.runners.empty()) {
      // finish() runs inside a runner's completion callback: destroy them in a later event.
      for (auto& runner : s.runners) retired_.push_back(std::move(runner));
      s.runners.clear();
      queue().schedule_fn(now(), [this] { retired_.clear(); });
    }
    if (schedule_.comms[comm].op == CollectiveOp::AllGather) {
      for (uint32_t r = 0; r < ranks_; ++r) try_start(r);
    }
    pump(s);
    check_all_done();
  }

  TransferBackend& backend_;
  const StepConfig& config_;
  const FsdpSchedule& schedule_;
  const FsdpGroups& groups_;
  const std::vector<double>& multiplier_;
  const std::vector<Time>* cached_;
  IdleCollectiveTimer& timer_;
  uint32_t ranks_;
  std::vector<std::size_t> next_;
  std::vector<bool> busy_;
  std::vector<uint32_t> issued_;
  std::vector<bool> done_;
  std::vector<Stream> streams_;
  std::vector<std::unique_ptr<CollectiveRunner>> retired_;
  std::size_t tasks_left_ = 0;
  std::size_t comms_left_ = 0;
};

}  // namespace

CollectiveAlgo fsdp_gather_algorithm(CollectiveAlgo algo) {
  // NCCL runs all-gather and reduce-scatter as rings (NVLS/PAT aside) or, with SHARP, as CollNet
  // Direct; halving-doubling is kept when asked for because the plans support it.
  return algo == CollectiveAlgo::HalvingDoubling || algo == CollectiveAlgo::CollnetDirect
             ? algo
             : CollectiveAlgo::Ring;
}

std::vector<FsdpUnit> fsdp_units(const TransformerShape& m, const FsdpParams& fsdp) {
  std::vector<FsdpUnit> units;
  units.push_back(
      FsdpUnit{.params = embedding_parameters(m), .first_layer = 0, .layers = 0, .root = true});
  const uint32_t per = std::max<uint32_t>(1, fsdp.layers_per_unit);
  for (uint32_t first = 0; first < m.layers; first += per) {
    const uint32_t layers = std::min(per, m.layers - first);
    units.push_back(FsdpUnit{.params = static_cast<int64_t>(layers) * layer_parameters(m),
                             .first_layer = first,
                             .layers = layers,
                             .root = false});
  }
  return units;
}

FsdpSchedule fsdp_schedule(const StepConfig& config, uint32_t shard_ranks, uint32_t replicas) {
  const auto units = fsdp_units(config.model, config.fsdp);
  LayerCompute lc = layer_compute(config.model, config.gpu, config.compute);
  if (config.zero_compute) lc = LayerCompute{};
  FsdpSchedule s;
  auto add_comm = [&](CollectiveOp op, std::size_t unit) {
    const int64_t per =
        op == CollectiveOp::AllGather ? config.fsdp.param_bytes : config.fsdp.gradient_bytes;
    const auto bytes = units[unit].params * per;
    s.comms.push_back(FsdpComm{op, static_cast<int32_t>(unit), bytes, -1});
    const auto id = static_cast<int32_t>(s.comms.size() - 1);
    if (op == CollectiveOp::ReduceScatter && replicas > 1) {
      // PyTorch's HYBRID_SHARD all-reduces the reduce-scattered shard over the replicate group
      // on the same post-backward stream, right after the reduce-scatter.
      const int64_t shard = (bytes + shard_ranks - 1) / std::max<uint32_t>(1, shard_ranks);
      s.comms.push_back(FsdpComm{CollectiveOp::AllReduce, static_cast<int32_t>(unit), shard, -1});
      s.comms[static_cast<std::size_t>(id)].then = static_cast<int32_t>(s.comms.size() - 1);
    }
    return id;
  };
  const uint32_t m = std::max<uint32_t>(1, config.grad_accumulation);
  for (uint32_t mb = 0; mb < m; ++mb) {
    const bool last = mb + 1 == m;
    // Forward: the root (embedding lookup: no measurable compute), the units, the logits.
    s.tasks.push_back(FsdpTask{.name = "embedding",
                               .duration = Time::zero(),
                               .gather = add_comm(CollectiveOp::AllGather, 0),
                               .reduce = -1,
                               .backward = false,
                               .last_micro_batch = last});
    for (std::size_t u = 1; u < units.size(); ++u) {
      s.tasks.push_back(FsdpTask{.name = "forward unit " + std::to_string(u),
                                 .duration = seconds(units[u].layers * lc.layer_forward),
                                 .gather = add_comm(CollectiveOp::AllGather, u),
                                 .reduce = -1,
                                 .backward = false,
                                 .last_micro_batch = last});
    }
    s.tasks.push_back(FsdpTask{.name = "head forward",
                               .duration = seconds(lc.head_forward),
                               .gather = -1,
                               .reduce = -1,
                               .backward = false,
                               .last_micro_batch = last});
    s.tasks.push_back(FsdpTask{.name = "head backward",
                               .duration = seconds(lc.head_backward),
                               .gather = -1,
                               .reduce = -1,
                               .backward = true,
                               .last_micro_batch = last});
    for (std::size_t u = units.size() - 1; u >= 1; --u) {
      const int32_t gather = add_comm(CollectiveOp::AllGather, u);
      const int32_t reduce = add_comm(CollectiveOp::ReduceScatter, u);
      s.tasks.push_back(FsdpTask{.name = "backward unit " + std::to_string(u),
                                 .duration = seconds(units[u].layers * lc.layer_backward),
                                 .gather = gather,
                                 .reduce = reduce,
                                 .backward = true,
                                 .last_micro_batch = last});
    }
    s.tasks.push_back(FsdpTask{.name = "embedding backward",
                               .duration = Time::zero(),
                               .gather = -1,
                               .reduce = add_comm(CollectiveOp::ReduceScatter, 0),
                               .backward = true,
                               .last_micro_batch = last});
  }
  return s;
}

double fsdp_ring_bytes_per_gpu(const TransformerShape& model, const FsdpParams& fsdp, uint32_t n) {
  double bytes = 0;
  for (const FsdpUnit& u : fsdp_units(model, fsdp)) {
    const auto p = static_cast<double>(u.params);
    bytes += (u.root ? 1.0 : 2.0) * p * static_cast<double>(fsdp.param_bytes) +
             p * static_cast<double>(fsdp.gradient_bytes);
  }
  return bytes * (n - 1) / n;
}

FsdpTimeline fsdp_closed_form(const FsdpSchedule& s, const std::vector<Time>& d, bool separate) {
  FsdpTimeline t;
  t.comms.resize(s.comms.size());
  t.tasks.resize(s.tasks.size());
  Time gather_free = Time::zero();
  Time reduce_free = Time::zero();
  Time& reduce_stream = separate ? reduce_free : gather_free;
  auto run = [&](Time& stream, int32_t comm, Time issued) {
    const auto c = static_cast<std::size_t>(comm);
    t.comms[c] = CollectiveTiming{std::string(to_string(s.comms[c].op)),
                                  s.comms[c].unit,
                                  s.comms[c].bytes,
                                  issued,
                                  std::max(stream, issued),
                                  std::max(stream, issued) + d[c]};
    stream = t.comms[c].end;
    t.comm_end = std::max(t.comm_end, stream);
  };
  if (!s.tasks.empty() && s.tasks[0].gather >= 0) run(gather_free, s.tasks[0].gather, Time::zero());
  Time end = Time::zero();
  for (std::size_t k = 0; k < s.tasks.size(); ++k) {
    const FsdpTask& task = s.tasks[k];
    Time start = end;
    if (task.gather >= 0)
      start = std::max(start, t.comms[static_cast<std::size_t>(task.gather)].end);
    // Issue order on a shared stream: the next all-gather (at this start), then this task's
    // reduce-scatter (at its end).
    if (k + 1 < s.tasks.size() && s.tasks[k + 1].gather >= 0)
      run(gather_free, s.tasks[k + 1].gather, start);
    end = start + task.duration;
    t.tasks[k] = ComputeSlice{task.name, start, end};
    if (task.reduce >= 0) {
      run(reduce_stream, task.reduce, end);
      const int32_t then = s.comms[static_cast<std::size_t>(task.reduce)].then;
      if (then >= 0) run(reduce_stream, then, end);
    }
  }
  t.compute_end = end;
  return t;
}

uint32_t fsdp_shard_ranks(const FsdpParams& fsdp, uint32_t ranks) {
  if (fsdp.shard_degree == 0 || fsdp.shard_degree >= ranks) return std::max(1u, ranks);
  if (ranks % fsdp.shard_degree != 0) {
    throw std::invalid_argument("the FSDP shard degree " + std::to_string(fsdp.shard_degree) +
                                " must divide the " + std::to_string(ranks) +
                                " data-parallel ranks");
  }
  return fsdp.shard_degree;
}

namespace {

// The event-driven FSDP step (simulate_fsdp_step) as a StepEngine.
class FsdpStepEngine final : public StepEngine {
 public:
  FsdpStepEngine(TransferBackend& backend, const net::NetworkSpec& spec, Fidelity fidelity,
                 const StepConfig& config)
      : backend_(backend),
        fidelity_(fidelity),
        config_(config),
        n_(static_cast<uint32_t>(config.rank_to_gpu.size())),
        shard_(n_ == 0 ? 1 : fsdp_shard_ranks(config.fsdp, n_)),
        timer_(spec, fidelity, config) {
    if (n_ == 0) throw std::invalid_argument("a data-parallel group needs at least one rank");
    if (config.layout.model_parallel()) {
      throw std::invalid_argument(
          "FSDP with tensor, pipeline or context parallelism is not modelled");
    }
    schedule_ = fsdp_schedule(config, shard_, n_ / shard_);
    groups_ = fsdp_groups(config.rank_to_gpu, shard_);
    idle_.resize(schedule_.comms.size());
    if (config.threads > 1) {
      // The distinct gathers and scatters noted first, then simulated at once (same results).
      timer_.start_recording();
      for (const FsdpComm& c : schedule_.comms) {
        timer_.time(c.op, algo_of(c, config.algorithm), groups_.of(c), c.bytes);
      }
      timer_.run_recorded(config.threads);
    }
    double sent = 0;
    for (std::size_t i = 0; i < schedule_.comms.size(); ++i) {
      const FsdpComm& c = schedule_.comms[i];
      const auto& t = timer_.time(c.op, algo_of(c, config.algorithm), groups_.of(c), c.bytes);
      idle_[i] = t.duration;
      sent += static_cast<double>(t.bytes_per_gpu);
    }
    bytes_per_gpu_ = static_cast<int64_t>(sent);
  }

  bool loads_fabric() const override { return !config_.reuse_bucket_timings; }

  void begin(std::function<void()> done) override {
    done_ = std::move(done);
    t0_ = backend_.simulation().now();
    multiplier_ = rank_compute_multipliers(config_, n_);
    retired_driver_ = std::move(driver_);
    driver_ = std::make_unique<FsdpDriver>(backend_, config_, schedule_, groups_, multiplier_,
                                           config_.reuse_bucket_timings ? &idle_ : nullptr, timer_);
    if (done_) {
      driver_->on_all_done = [this] {
        Time end = t0_;
        for (Time t : driver_->rank_end_) end = std::max(end, t);
        for (const CollectiveTiming& t : driver_->timings) end = std::max(end, t.end);
        end += optimizer();
        backend_.simulation().queue().schedule_fn(end, [this] {
          auto callback = std::move(done_);
          done_ = nullptr;
          callback();
        });
      };
    }
    driver_->start();
  }

  StepResult result() override;

 private:
  Time optimizer() const {
    return config_.optimizer.value_or(
        adam_time(static_cast<double>(total_parameters(config_.model)) / shard_, config_.gpu));
  }

  TransferBackend& backend_;
  Fidelity fidelity_;
  const StepConfig& config_;
  uint32_t n_;
  uint32_t shard_;
  IdleCollectiveTimer timer_;
  FsdpSchedule schedule_;
  FsdpGroups groups_;
  std::vector<Time> idle_;
  int64_t bytes_per_gpu_ = 0;
  std::vector<double> multiplier_;
  std::function<void()> done_;
  Time t0_ = Time::zero();
  std::unique_ptr<FsdpDriver> driver_;
  std::unique_ptr<FsdpDriver> retired_driver_;  // the previous step's (its runners may be retiring)
};

StepResult FsdpStepEngine::result() {
  FsdpDriver& driver = *driver_;
  StepResult r;
  r.parallelism = DataParallelism::Fsdp;
  r.data_parallel = n_;
  r.fsdp_shard_degree = shard_;
  r.bytes_per_gpu = bytes_per_gpu_;
  for (CollectiveTiming& t : driver.timings) {
    if (t.end < t.start) throw std::logic_error("an FSDP collective did not complete");
    t.ready -= t0_;
    t.start -= t0_;
    t.end -= t0_;
  }
  for (ComputeSlice& c : driver.slices) {
    c.start -= t0_;
    c.end -= t0_;
  }
  for (Time& t : driver.rank_end_) t -= t0_;
  r.optimizer = optimizer();

  // Breakdown: forward = compute before the last micro-batch's backward, backward = its compute
  // (unperturbed, as for DDP); the rest of the step is communication the compute waited for.
  Time compute_total = Time::zero();
  for (const FsdpTask& t : schedule_.tasks) {
    compute_total += t.duration;
    if (t.backward && t.last_micro_batch) r.backward += t.duration;
  }
  r.forward = compute_total - r.backward;
  Time compute_end = Time::zero();
  Time comm_end = Time::zero();
  for (Time t : driver.rank_end_) compute_end = std::max(compute_end, t);
  for (const CollectiveTiming& t : driver.timings) {
    comm_end = std::max(comm_end, t.end);
    r.sync += t.end - t.start;
  }
  r.step = std::max(compute_end, comm_end) + r.optimizer;
  r.tail = comm_end > compute_end ? comm_end - compute_end : Time::zero();
  r.exposed_comm = r.step - r.optimizer - compute_total;
  r.collectives = driver.timings;
  r.rank0_compute = driver.slices;
  for (const FsdpTask& t : schedule_.tasks) {
    r.fsdp_slice_gather.push_back(t.gather);
    r.fsdp_slice_reduce.push_back(t.reduce);
  }
  for (const FsdpComm& c : schedule_.comms) r.fsdp_comm_then.push_back(c.then);
  r.fsdp_separate_streams = config_.fsdp.separate_streams;
  r.rank_compute_multiplier = multiplier_;

  // Per-rank spans for the trace: the last micro-batch's backward starts at its "head backward".
  std::size_t last_backward = 0;
  for (std::size_t k = 0; k < schedule_.tasks.size(); ++k) {
    if (schedule_.tasks[k].backward && schedule_.tasks[k].last_micro_batch) {
      last_backward = k;
      break;
    }
  }
  r.rank_backward_start.assign(n_, driver.slices[last_backward].start);
  r.rank_backward_end = driver.rank_end_;

  fill_utilization(r, config_, n_);

  const FsdpTimeline closed = fsdp_closed_form(schedule_, idle_, config_.fsdp.separate_streams);
  r.closed_form_step = std::max(closed.compute_end, closed.comm_end) + r.optimizer;

  // Reused idle timings ignore the contention of an all-gather and a reduce-scatter that overlap.
  if (config_.reuse_bucket_timings && config_.fsdp.separate_streams &&
      fidelity_ != Fidelity::Analytic) {
    Time overlap = Time::zero();
    for (const CollectiveTiming& rs : r.collectives) {
      if (rs.kind != "reduce_scatter") continue;
      for (const CollectiveTiming& ag : r.collectives) {
        if (ag.kind != "all_gather") continue;
        const Time lo = std::max(rs.start, ag.start);
        const Time hi = std::min(rs.end, ag.end);
        if (hi > lo) overlap += hi - lo;
      }
    }
    if (overlap > Time::zero()) {
      r.warnings.push_back("FSDP all-gathers and reduce-scatters overlapped for " +
                           std::to_string(overlap.seconds() * 1e3).substr(0, 6) +
                           " ms; with reused idle-fabric timings they do not slow each other (set "
                           "workload.reuse_bucket_timings: false to run them live)");
    }
  }
  r.memory_per_gpu_bytes = fsdp_memory_per_gpu(config_, shard_);
  r.communication_memory_bytes = fsdp_communication_memory(config_, shard_);
  warn_if_over_gpu_memory(r.warnings, "FSDP", r.memory_per_gpu_bytes, config_.gpu);
  return r;
}

}  // namespace

std::unique_ptr<StepEngine> make_fsdp_step_engine(TransferBackend& backend,
                                                  const net::NetworkSpec& spec, Fidelity fidelity,
                                                  const StepConfig& config) {
  return std::make_unique<FsdpStepEngine>(backend, spec, fidelity, config);
}

StepResult simulate_fsdp_step(TransferBackend& backend, const net::NetworkSpec& spec,
                              Fidelity fidelity, const StepConfig& config) {
  return run_step_to_end(*make_fsdp_step_engine(backend, spec, fidelity, config), backend);
}

}  // namespace syncsim::models
