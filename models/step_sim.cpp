#include "models/step_sim.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "models/bucket_extrapolation.hpp"
#include "models/collective_backend.hpp"
#include "models/collective_cost.hpp"
#include "models/communication_memory.hpp"
#include "models/step_engine.hpp"
#include "sim/core/parallel_for.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::models {

using bucket_timing::allreduce_options;
using bucket_timing::bucket_protocol;
using bucket_timing::ceil_div;
using bucket_timing::Extrapolation;
using bucket_timing::extrapolation_for;
using bucket_timing::kSettledSlope;
using bucket_timing::kVerifiedMinSampleUnits;
using bucket_timing::sample_units;

namespace {

// One bucket size's all-reduce as the step runs it: its plan under the protocol NCCL picks for
// that size, and the run options of that protocol.
struct BucketCollective {
  NcclProtocol protocol = NcclProtocol::Simple;
  CollectivePlan plan;
  CollectiveRunOptions run;
};

class StepDriver {
 public:
  StepDriver(TransferBackend& backend, const StepConfig& config,
             const std::vector<GradientBucket>& buckets, std::vector<BucketTiming>& timings,
             std::function<Time(int64_t)> cached_duration,
             std::function<const BucketCollective&(int64_t)> plan_for)
      : backend_(backend),
        config_(config),
        buckets_(buckets),
        timings_(timings),
        cached_duration_(std::move(cached_duration)),
        plan_for_(std::move(plan_for)) {}

  void launch(std::size_t i) {
    if (i == buckets_.size()) return;
    EventQueue& q = backend_.simulation().queue();
    const Time at = std::max(timings_[i].ready, q.now());
    q.schedule_fn(at, [this, i] { start(i); });
  }

  std::function<void()> on_finish;  // progress display (StepConfig::on_progress)

 private:
  void start(std::size_t i) {
    retired_.reset();  // the previous bucket's runner finished in an earlier event
    timings_[i].start = backend_.simulation().now();
    const int64_t bytes = timings_[i].bytes;
    if (cached_duration_) {
      backend_.simulation().queue().schedule_fn(timings_[i].start + cached_duration_(bytes),
                                                [this, i] { finish(i); });
      return;
    }
    const BucketCollective& bucket = plan_for_(bytes);
    runner_ =
        std::make_unique<CollectiveRunner>(backend_, bucket.plan, config_.rank_to_gpu, bucket.run);
    runner_->start([this, i](const CollectiveResult&) { finish(i); });
  }

  void finish(std::size_t i) {
    timings_[i].end = backend_.simulation().now();
    if (on_finish) on_finish();
    retired_ = std::move(runner_);
    launch(i + 1);
  }

  TransferBackend& backend_;
  const StepConfig& config_;
  const std::vector<GradientBucket>& buckets_;
  std::vector<BucketTiming>& timings_;
  std::function<Time(int64_t)> cached_duration_;
  std::function<const BucketCollective&(int64_t)> plan_for_;
  std::unique_ptr<CollectiveRunner> runner_;
  std::unique_ptr<CollectiveRunner> retired_;
};

}  // namespace

namespace {

// The event-driven DDP step (simulate_ddp_step) as a StepEngine: compute is timed in closed form
// per rank from the step's begin, bucket all-reduces run on the backend one after another.
class DdpStepEngine final : public StepEngine {
 public:
  DdpStepEngine(TransferBackend& backend, const net::NetworkSpec& spec, Fidelity fidelity,
                const StepConfig& config)
      : backend_(backend),
        spec_(spec),
        fidelity_(fidelity),
        config_(config),
        n_(static_cast<uint32_t>(config.rank_to_gpu.size())) {
    if (n_ == 0) throw std::invalid_argument("a data-parallel group needs at least one rank");
    if (config.grad_accumulation == 0)
      throw std::invalid_argument("grad_accumulation must be >= 1");
    ct_ = compute_times(config.model, config.gpu, config.compute);
    if (config.zero_compute) ct_ = ComputeTimes{};
    buckets_ = ddp_buckets(config.model, config.ddp);
  }

  bool loads_fabric() const override {
    return !(config_.reuse_bucket_timings || n_ == 1 || config_.calibrated_allreduce);
  }

  void begin(std::function<void()> done) override {
    if (config_.threads > 1 && !prefetched_) prefetch_idle_runs();
    prefetched_ = true;
    done_ = std::move(done);
    t0_ = backend_.simulation().now();
    r_ = StepResult{};
    buckets_finished_ = 0;
    const Time f = ct_.forward;
    const Time b = ct_.backward;
    const auto m = static_cast<int64_t>(config_.grad_accumulation);
    before_last_backward_ = (f + b) * (m - 1) + f;
    const std::vector<double> multiplier = rank_compute_multipliers(config_, n_);
    backward_start_.assign(n_, Time::zero());
    r_.rank_backward_end.resize(n_);
    compute_end_ = Time::zero();
    // Timed stragglers (compute_slowdown.hpp) act from a simulated time on: the rank's compute is
    // placed at its absolute time and kept relative to the step's begin.
    const std::vector<ComputeSlowdown>& slow = config_.perturbations.slowdowns;
    for (uint32_t rank = 0; rank < n_; ++rank) {
      backward_start_[rank] =
          compute_finish(slow, rank, t0_, scaled(before_last_backward_, multiplier[rank])) - t0_;
      r_.rank_backward_end[rank] =
          compute_finish(slow, rank, t0_ + backward_start_[rank], scaled(b, multiplier[rank])) -
          t0_;
      compute_end_ = std::max(compute_end_, r_.rank_backward_end[rank]);
    }
    // Buckets and when the slowest rank has each one ready (absolute times while the step runs).
    r_.buckets.resize(buckets_.size());
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      r_.buckets[i].bytes = buckets_[i].size.count();
      Time ready = Time::zero();
      for (uint32_t rank = 0; rank < n_; ++rank) {
        ready = std::max(ready, compute_finish(slow, rank, t0_ + backward_start_[rank],
                                               scaled(b, buckets_[i].ready_at * multiplier[rank])));
      }
      r_.buckets[i].ready = ready;
    }
    std::function<Time(int64_t)> cached;
    if (!loads_fabric()) cached = [this](int64_t bytes) { return idle_run(bytes).first; };
    retired_driver_ = std::move(driver_);
    driver_ = std::make_unique<StepDriver>(
        backend_, config_, buckets_, r_.buckets, cached,
        [this](int64_t bytes) -> const BucketCollective& { return plan_for(bytes); });
    driver_->on_finish = [this] {
      ++buckets_finished_;
      report_progress(0, false);
      if (buckets_finished_ == r_.buckets.size()) complete();
    };
    driver_->launch(0);
    if (r_.buckets.empty()) complete();
  }

  StepResult result() override {
    StepResult r = std::move(r_);
    r_ = StepResult{};
    for (BucketTiming& t : r.buckets) {
      if (t.end < t.start)
        throw std::logic_error("a gradient bucket's all-reduce did not complete");
      t.ready -= t0_;
      t.start -= t0_;
      t.end -= t0_;
    }
    const Time b = ct_.backward;
    const auto params = static_cast<double>(total_parameters(config_.model));
    r.rank_backward_start = backward_start_;

    // The breakdown.
    r.optimizer = optimizer();
    r.data_parallel = n_;
    const Time sync_end = r.buckets.empty() ? Time::zero() : r.buckets.back().end;
    r.step = std::max(compute_end_, sync_end) + r.optimizer;
    r.forward = before_last_backward_;
    r.backward = b;
    for (const BucketTiming& t : r.buckets) r.sync += t.end - t.start;
    r.tail = sync_end > compute_end_ ? sync_end - compute_end_ : Time::zero();
    r.exposed_comm = r.step - r.optimizer - before_last_backward_ - b;

    double sent = 0;
    for (const BucketTiming& t : r.buckets) sent += static_cast<double>(idle_run(t.bytes).second);
    r.bytes_per_gpu = static_cast<int64_t>(sent / n_);

    const double model_flops = fill_utilization(r, config_, n_);
    const double peak = peak_flops(config_.gpu, config_.compute.dtype) * n_;

    // The closed form on the same inputs (unperturbed compute, idle-fabric bucket times).
    StepInputs in;
    in.forward = before_last_backward_;
    in.backward = b;
    in.optimizer = r.optimizer;
    // Timed stragglers (not noise) hold the closed form too: the slowest rank's forward and
    // backward.
    const std::vector<ComputeSlowdown>& slow = config_.perturbations.slowdowns;
    for (uint32_t rank = 0; rank < n_ && !slow.empty(); ++rank) {
      const Time start = compute_finish(slow, rank, t0_, before_last_backward_) - t0_;
      in.forward = std::max(in.forward, start);
      in.backward = std::max(in.backward, compute_finish(slow, rank, t0_ + start, b) - t0_ - start);
    }
    for (BucketTiming& t : r.buckets) {
      t.protocol = bucket_protocol(config_, n_, t.bytes);
      t.idle = idle_run(t.bytes).first;
      in.bucket_sync.push_back(t.idle);
    }
    r.closed_form_step = closed_form_step(in, model_flops, n_, peak / n_).step;

    r.extrapolated_bucket_sizes = extrapolated_;
    r.idle_simulations = runs_.size();
    if (!r.extrapolated_bucket_sizes.empty()) {
      std::sort(r.extrapolated_bucket_sizes.begin(), r.extrapolated_bucket_sizes.end());
      std::string sizes;
      for (int64_t s : r.extrapolated_bucket_sizes) {
        sizes += (sizes.empty() ? "" : ", ") + std::to_string(s) + " B";
      }
      r.warnings.push_back("bucket_timing: the idle-fabric all-reduce time of bucket size(s) " +
                           sizes + " was extrapolated linearly from simulations of " +
                           std::to_string(sample_units(n_)) + " and " +
                           std::to_string(2 * sample_units(n_)) +
                           " pipeline units (chunk per tree or per ring segment) " +
                           "of the same chunk size, typically within 0.5% (LL / LL128: doubled " +
                           "until the slope settles, within 0.1%; bytes sent exact); " +
                           "set workload.bucket_timing: exact to simulate them whole");
    }
    // PyTorch DDP's buckets hold a second copy of the gradients (gradient_as_bucket_view=False,
    // its default), beside NCCL's buffers (models/communication_memory.hpp).
    r.communication_memory_bytes =
        params * static_cast<double>(config_.ddp.gradient_bytes_per_param) +
        nccl_communicator_buffer_bytes(config_.algorithm, n_, config_.channels);
    r.memory_per_gpu_bytes = params * 16.0 + r.communication_memory_bytes +
                             activation_bytes(config_.model, config_.compute);
    if (r.memory_per_gpu_bytes > config_.gpu.memory_bytes) {
      r.warnings.push_back(
          "DDP needs about " + std::to_string(r.memory_per_gpu_bytes / 1e9).substr(0, 6) +
          " GB per GPU (16 bytes per parameter for weights, gradients and Adam state, "
          "DDP's gradient buckets, NCCL's buffers and activations), more than the GPU's " +
          std::to_string(config_.gpu.memory_bytes / 1e9).substr(0, 5) +
          " GB: real runs would need FSDP/ZeRO or activation recomputation");
    }
    return r;
  }

 private:
  // An idle-fabric run's plan: (protocol, chunk, bytes) of the step's all-reduce.
  using RunKey = std::tuple<NcclProtocol, int64_t, int64_t>;

  // The last bucket finished (or there is none): the step ends when the slowest rank's backward
  // and the optimizer are done.
  void complete() {
    if (!done_) return;
    const Time sync_end = r_.buckets.empty() ? t0_ : r_.buckets.back().end;
    const Time end = std::max(t0_ + compute_end_, sync_end) + optimizer();
    backend_.simulation().queue().schedule_fn(end, [this] {
      auto callback = std::move(done_);
      done_ = nullptr;
      callback();
    });
  }

  // The optimizer's time: the configured one, else Adam at HBM bandwidth.
  Time optimizer() const {
    return config_.optimizer.value_or(
        adam_time(static_cast<double>(total_parameters(config_.model)), config_.gpu));
  }

  // The bucket size's plan and run options, under the protocol NCCL picks for that size.
  const BucketCollective& plan_for(int64_t bytes) {
    auto it = plans_.find(bytes);
    if (it == plans_.end()) {
      BucketCollective b;
      b.protocol = bucket_protocol(config_, n_, bytes);
      b.plan = build_plan(allreduce_options(config_, n_, bytes, b.protocol, &b.run));
      it = plans_.emplace(bytes, std::move(b)).first;
    }
    return it->second;
  }

  void report_progress(int64_t timing_bytes, bool extrapolating) const {
    if (!config_.on_progress) return;
    StepProgress p;
    p.simulated = backend_.simulation().now();
    p.buckets = r_.buckets.size();
    p.buckets_done = buckets_finished_;
    p.timing_bucket_bytes = timing_bytes;
    p.timing_extrapolated = extrapolating;
    config_.on_progress(p);
  }

  // The idle-fabric simulations the step's distinct bucket sizes need (whole buckets, or the first
  // samples of their extrapolation), run at once on config_.threads threads before the step;
  // idle_run() then finds them. Each is a private simulation seeded alike and each key is tasked
  // by the first bucket that needs it, as idle_run() would, so every result is the same for any
  // thread count. A whole bucket that is another's sample (the same protocol, chunk and bytes:
  // the same plan) is one task. What the samples decide later (LL / LL128 samples past 4 k1 while
  // the slope has not settled, a whole bucket when it never does) still runs in idle_run(), one at
  // a time.
  void prefetch_idle_runs() {
    if (n_ < 2 || config_.calibrated_allreduce) return;
    struct Task {
      RunKey key;
      int64_t chunks = 0;  // the plan's bytes over its chunk: the cost, to sort by
      PlanOptions options;
      CollectiveRunOptions run;
      CollectiveResult result;
    };
    std::vector<Task> tasks;
    std::set<RunKey> tasked;
    for (const GradientBucket& b : buckets_) {
      const int64_t bytes = b.size.count();
      if (idle_.contains(bytes)) continue;
      const NcclProtocol proto = bucket_protocol(config_, n_, bytes);
      CollectiveRunOptions run;
      const PlanOptions bucket = allreduce_options(config_, n_, bytes, proto, &run);
      const int64_t chunk = std::max<int64_t>(1, bucket.chunk_bytes);
      const std::optional<Extrapolation> e =
          extrapolation_for(config_, n_, bytes, bucket.chunk_bytes, proto);
      if (!e) {
        const RunKey key{proto, bucket.chunk_bytes, bytes};
        if (!runs_.contains(key) && tasked.insert(key).second) {
          tasks.push_back(Task{key, ceil_div(bytes, chunk), bucket, run, {}});
        }
        continue;
      }
      for (int64_t units : {e->k1, 2 * e->k1, 4 * e->k1}) {
        if (units == 4 * e->k1 && !e->verified) break;
        const RunKey key{proto, bucket.chunk_bytes, units * e->unit};
        if (runs_.contains(key) || !tasked.insert(key).second) continue;
        tasks.push_back(
            Task{key, ceil_div(units * e->unit, chunk), sample_options(proto, key), run, {}});
      }
    }
    // Longest first (the pool takes tasks in order); ties keep the buckets' order.
    std::stable_sort(tasks.begin(), tasks.end(),
                     [](const Task& a, const Task& b) { return a.chunks > b.chunks; });
    // At packet level each task's fabric runs as partitions on the threads the tasks leave over.
    const auto partition_threads = static_cast<uint32_t>(
        std::max<std::size_t>(1, config_.threads / std::max<std::size_t>(1, tasks.size())));
    parallel_for(tasks.size(), config_.threads, [&](std::size_t i) {
      Simulation sim(config_.seed);
      const CollectivePlan plan = build_plan(tasks[i].options);
      const CollectiveBackend fresh = make_collective_backend(
          fidelity_, sim, spec_, plan, {config_.rank_to_gpu}, tasks[i].run, partition_threads);
      fresh->keep_finished_records(false);  // only the collective's result is read
      tasks[i].result = run_collective(*fresh, plan, config_.rank_to_gpu, tasks[i].run);
    });
    for (Task& t : tasks) runs_.emplace(t.key, t.result);
  }

  // The plan options of an idle run: the step's all-reduce of the key's bytes under its protocol,
  // cut into the key's chunk (a sample keeps its bucket's chunk; for a whole bucket it is its own).
  PlanOptions sample_options(NcclProtocol proto, const RunKey& key) const {
    PlanOptions o = allreduce_options(config_, n_, std::get<2>(key), proto);
    o.chunk_bytes = std::get<1>(key);
    return o;
  }

  // A bucket size's all-reduce on an idle copy of the fabric: (duration, bytes sent by all ranks).
  const std::pair<Time, int64_t>& idle_run(int64_t bytes) {
    auto it = idle_.find(bytes);
    if (it != idle_.end()) return it->second;
    std::pair<Time, int64_t> value{Time::zero(), 0};
    if (n_ > 1 && config_.calibrated_allreduce) {
      int64_t sent = 0;
      // The plan only counts its bytes here (the step takes the calibrated time): dropped after.
      const CollectivePlan plan =
          build_plan(allreduce_options(config_, n_, bytes, bucket_protocol(config_, n_, bytes)));
      for (const PlanStep& s : plan.steps) {
        if (s.kind == PlanStep::Kind::Transfer) sent += s.bytes;
      }
      value = {config_.calibrated_allreduce(bytes), sent};
    } else if (n_ > 1) {
      auto run_idle = [&](const CollectivePlan& plan, const CollectiveRunOptions& run) {
        Simulation sim(config_.seed);
        const CollectiveBackend fresh = make_collective_backend(
            fidelity_, sim, spec_, plan, {config_.rank_to_gpu}, run, config_.threads);
        fresh->keep_finished_records(false);  // only the collective's result is read
        return run_collective(*fresh, plan, config_.rank_to_gpu, run);
      };
      const NcclProtocol proto = bucket_protocol(config_, n_, bytes);
      CollectiveRunOptions run;
      const PlanOptions bucket = allreduce_options(config_, n_, bytes, proto, &run);
      const std::optional<Extrapolation> e =
          extrapolation_for(config_, n_, bytes, bucket.chunk_bytes, proto);
      const RunKey whole_key{proto, bucket.chunk_bytes, bytes};
      const RunKey first_key{proto, bucket.chunk_bytes, e ? e->k1 * e->unit : 0};
      report_progress(bytes, e.has_value() && !runs_.contains(first_key));
      // Sample plans are built and dropped here: they are small, and keeping them would defeat the
      // point (the real plan is never built). They keep the bucket's protocol and chunk, and
      // depend on nothing else: each is run once per (protocol, chunk, bytes), as are whole
      // buckets (a whole bucket may be another bucket's sample).
      auto sample = [&](int64_t units) -> const CollectiveResult& {
        const RunKey key{proto, bucket.chunk_bytes, units * e->unit};
        auto found = runs_.find(key);
        if (found == runs_.end()) {
          found = runs_.emplace(key, run_idle(build_plan(sample_options(proto, key)), run)).first;
        }
        return found->second;
      };
      // The two samples the line goes through (in units), if it does.
      std::optional<std::pair<int64_t, int64_t>> line;
      if (e && !e->verified) line = std::make_pair(e->k1, 2 * e->k1);
      if (e && e->verified) {
        auto slope_between = [&](int64_t a, int64_t b) {
          return static_cast<double>((sample(b).duration() - sample(a).duration()).picoseconds()) /
                 static_cast<double>(b - a);
        };
        int64_t spent = kVerifiedMinSampleUnits * e->k1;  // k1 + 2 k1 + 4 k1
        int64_t last = 4 * e->k1;
        while (true) {
          const double before = slope_between(last / 4, last / 2);
          const double after = slope_between(last / 2, last);
          if (std::abs(after - before) <= kSettledSlope * std::abs(after)) {
            line = std::make_pair(last / 2, last);
            break;
          }
          if (spent + 2 * last > e->units) break;  // the next sample costs more than the rest
          spent += 2 * last;
          last *= 2;
        }
      }
      if (line) {
        const int64_t small = line->first * e->unit;
        const int64_t large = line->second * e->unit;
        const CollectiveResult& c1 = sample(line->first);
        const CollectiveResult& c2 = sample(line->second);
        // Every byte crosses the same number of edges: sent = (bytes sent per byte) * S exactly.
        const int64_t per_byte = c1.bytes_sent / small;
        if (c1.bytes_sent != per_byte * small || c2.bytes_sent != per_byte * large) {
          throw std::logic_error("bucket extrapolation: bytes sent are not proportional to size");
        }
        const double slope = static_cast<double>((c2.duration() - c1.duration()).picoseconds()) /
                             static_cast<double>(large - small);
        const Time t =
            c1.duration() + Time::ps(std::llround(slope * static_cast<double>(bytes - small)));
        value = {t, per_byte * bytes};
        extrapolated_.push_back(bytes);
      } else if (auto done = runs_.find(whole_key); done != runs_.end()) {
        value = {done->second.duration(), done->second.bytes_sent};
      } else if (loads_fabric()) {
        const BucketCollective& b = plan_for(bytes);  // the live bucket runs it too
        const CollectiveResult& c = runs_.emplace(whole_key, run_idle(b.plan, b.run)).first->second;
        value = {c.duration(), c.bytes_sent};
      } else {
        // Only this idle run needs the plan (the step reuses its time): built and dropped here,
        // not kept to the end of the run (a 16k-rank tree bucket's plan holds millions of steps).
        const CollectiveResult& c =
            runs_.emplace(whole_key, run_idle(build_plan(bucket), run)).first->second;
        value = {c.duration(), c.bytes_sent};
      }
    }
    it = idle_.emplace(bytes, value).first;
    report_progress(0, false);
    return it->second;
  }

  TransferBackend& backend_;
  const net::NetworkSpec& spec_;
  Fidelity fidelity_;
  const StepConfig& config_;
  uint32_t n_;
  ComputeTimes ct_;
  std::vector<GradientBucket> buckets_;
  std::map<int64_t, BucketCollective> plans_;
  std::map<int64_t, std::pair<Time, int64_t>> idle_;  // size -> (duration, bytes sent)
  // The idle runs, whole buckets and the extrapolation's samples, per (protocol, chunk, bytes):
  // the plan depends on nothing else, so a whole bucket that is another's sample runs once.
  std::map<RunKey, CollectiveResult> runs_;
  std::vector<int64_t> extrapolated_;
  bool prefetched_ = false;
  // The step running: its begin, compute (relative to it) and buckets (absolute while it runs).
  std::function<void()> done_;
  Time t0_ = Time::zero();
  Time before_last_backward_ = Time::zero();
  Time compute_end_ = Time::zero();
  std::vector<Time> backward_start_;
  StepResult r_;
  std::size_t buckets_finished_ = 0;
  std::unique_ptr<StepDriver> driver_;
  std::unique_ptr<StepDriver> retired_driver_;  // the previous step's (its runner may be retiring)
};

}  // namespace

std::unique_ptr<StepEngine> make_ddp_step_engine(TransferBackend& backend,
                                                 const net::NetworkSpec& spec, Fidelity fidelity,
                                                 const StepConfig& config) {
  return std::make_unique<DdpStepEngine>(backend, spec, fidelity, config);
}

StepResult simulate_ddp_step(TransferBackend& backend, const net::NetworkSpec& spec,
                             Fidelity fidelity, const StepConfig& config) {
  return run_step_to_end(*make_ddp_step_engine(backend, spec, fidelity, config), backend);
}

}  // namespace syncsim::models
