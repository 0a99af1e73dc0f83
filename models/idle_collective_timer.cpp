#include "models/idle_collective_timer.hpp"

#include <algorithm>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "models/collective_backend.hpp"
#include "models/collective_runner.hpp"
#include "sim/core/parallel_for.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::models {

namespace {

std::string key_of(CollectiveOp op, CollectiveAlgo algo, int64_t bytes) {
  return std::string(to_string(op)) + "/" + std::string(to_string(algo)) + "/" +
         std::to_string(bytes);
}

void append_gpus(std::string& key, const std::vector<uint32_t>& gpus) {
  key += "|";
  for (uint32_t gpu : gpus) key += std::to_string(gpu) + ",";
}

}  // namespace

IdleCollectiveTimer::IdleCollectiveTimer(const net::NetworkSpec& spec, Fidelity fidelity,
                                         const StepConfig& config)
    : spec_(spec), fidelity_(fidelity), config_(config) {
  // Translations move GPU g by whole hosts: GPUs must be numbered host-major, alike per host.
  if (spec_.hosts > 0 && !spec_.gpus.empty() && spec_.gpus.size() % spec_.hosts == 0) {
    const std::size_t per_host = spec_.gpus.size() / spec_.hosts;
    host_major_ = true;
    for (std::size_t g = 0; g < spec_.gpus.size(); ++g) {
      host_major_ &=
          spec_.gpus[g].host == g / per_host && spec_.gpus[g].local_index == g % per_host;
    }
  }
}

const IdleCollectiveTimer::Collective& IdleCollectiveTimer::plan(CollectiveOp op,
                                                                 CollectiveAlgo algo,
                                                                 uint32_t ranks, int64_t bytes) {
  const std::string key = key_of(op, algo, bytes) + "/" + std::to_string(ranks);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    PlanOptions o;
    o.op = op;
    o.algo = algo;
    o.ranks = ranks;
    o.bytes = bytes;
    o.channels = config_.channels;
    o.gpus_per_host = config_.gpus_per_host;
    o.nics_per_host = config_.nics_per_host;
    Collective c;
    c.protocol = step_protocol(config_, op, algo, ranks, bytes);
    c.run = shape_step_collective(config_, c.protocol, o);
    if (op == CollectiveOp::SendRecv) {
      o.root = 0;
      o.peer = 1;
    }
    if (is_collnet(algo)) {
      // CollNet's trees span the step's data-parallel hosts (StepConfig::collnet_trees): only a
      // group of all of them runs it. NCCL's CollNet chunk for this size.
      if (config_.collnet_trees.empty()) {
        throw std::invalid_argument(std::string(to_string(algo)) +
                                    " needs the step's SHARP trees (StepConfig::collnet_trees)");
      }
      set_step_collnet_options(o, config_, bytes);
    }
    c.plan = build_plan(o);
    it = plans_.emplace(key, std::move(c)).first;
  }
  return it->second;
}

bool IdleCollectiveTimer::symmetry_applies() const {
  if (!config_.time_symmetric_groups_once || fidelity_ != Fidelity::Analytic) return false;
  return host_major_ && spec_.route_overrides.empty() && spec_.nic_variants.empty();
}

bool IdleCollectiveTimer::groups_couple_through_hosts() const {
  // Host staging shares each host's memory and PCIe switches between the groups on it.
  return spec_.transport.kind != net::TransportKind::Roce;
}

std::vector<uint32_t> IdleCollectiveTimer::canonical(const std::vector<uint32_t>& gpus,
                                                     bool whole_hosts_only) const {
  const auto per_host = static_cast<uint32_t>(spec_.gpus.size() / spec_.hosts);
  uint32_t lowest = UINT32_MAX;
  uint32_t highest = 0;
  for (uint32_t gpu : gpus) {
    lowest = std::min(lowest, gpu / per_host);
    highest = std::max(highest, gpu / per_host);
  }
  uint32_t shift = 0;
  if (lowest == highest && !whole_hosts_only) {
    shift = lowest;  // inside one host: only its NVLink domain is used
  } else if (const uint32_t period = spec_.translation_period_hosts; period > 0) {
    shift = lowest / period * period;
  }
  std::vector<uint32_t> out(gpus);
  for (uint32_t& gpu : out) gpu -= shift * per_host;
  return out;
}

std::vector<IdleCollectiveTimer::Timing> IdleCollectiveTimer::simulate(CollectiveOp op,
                                                                       CollectiveAlgo algo,
                                                                       const Groups& groups,
                                                                       int64_t bytes) {
  const auto ranks = static_cast<uint32_t>(groups.front().size());
  std::vector<Timing> out = run_groups(plan(op, algo, ranks, bytes), groups);
  simulated_groups_ += groups.size();
  return out;
}

std::vector<IdleCollectiveTimer::Timing> IdleCollectiveTimer::run_groups(
    const Collective& collective, const Groups& groups) const {
  const auto ranks = static_cast<uint32_t>(groups.front().size());
  const CollectivePlan& p = collective.plan;
  Simulation sim(config_.seed);
  const CollectiveBackend backend =
      make_collective_backend(fidelity_, sim, spec_, p, groups, collective.run, 1);
  backend->keep_finished_records(false);  // only the runners' results are read
  std::vector<std::unique_ptr<CollectiveRunner>> runners;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    CollectiveRunOptions options = collective.run;
    // Each group its own communicator (ids wrap past 65536 groups; two groups whose ids then
    // collide share queue pairs only between NICs they both use).
    options.communicator = static_cast<uint32_t>(gi % 65536);
    runners.push_back(std::make_unique<CollectiveRunner>(*backend, p, groups[gi], options));
    runners.back()->start();
  }
  sim.queue().run();
  std::vector<Timing> out;
  out.reserve(runners.size());
  for (const auto& runner : runners) {
    if (!runner->done()) throw std::logic_error("an idle-fabric collective did not complete");
    out.push_back(
        {runner->result().duration(), runner->result().bytes_sent / ranks, collective.protocol});
  }
  return out;
}

const IdleCollectiveTimer::Timing& IdleCollectiveTimer::time(CollectiveOp op, CollectiveAlgo algo,
                                                             const Groups& groups, int64_t bytes) {
  const bool symmetric = symmetry_applies();
  const auto per_host = symmetric ? static_cast<uint32_t>(spec_.gpus.size() / spec_.hosts) : 1;
  bool each_in_one_host = true;
  for (const auto& g : groups) {
    for (uint32_t gpu : g) each_in_one_host &= gpu / per_host == g.front() / per_host;
  }
  // The call's key: its groups moved down together (symmetric) or as placed.
  std::string key = key_of(op, algo, bytes);
  if (symmetric && !groups.empty()) {
    std::vector<uint32_t> all;
    for (const auto& g : groups) all.insert(all.end(), g.begin(), g.end());
    const std::vector<uint32_t> moved = canonical(all, !each_in_one_host);
    const uint32_t offset = all.empty() ? 0 : all.front() - moved.front();
    for (const auto& g : groups) {
      key += "|";
      for (uint32_t gpu : g) key += std::to_string(gpu - offset) + ",";
    }
  } else {
    for (const auto& g : groups) append_gpus(key, g);
  }
  if (auto it = timings_.find(key); it != timings_.end()) return it->second;
  if (recording_ && recorded_calls_.contains(key)) return recorded_placeholder_;

  Timing timing;
  const auto ranks = groups.empty() ? 0u : static_cast<uint32_t>(groups.front().size());
  timing.protocol = step_protocol(config_, op, algo, ranks, bytes);
  if (ranks > 1 && bytes > 0) {
    if (symmetric && (each_in_one_host || !groups_couple_through_hosts())) {
      // One group per class, simulated together when their GPUs are disjoint (they cannot
      // interact then), in further batches otherwise.
      std::vector<std::string> group_keys;
      std::vector<Groups> batches;
      std::vector<std::vector<std::string>> batch_keys;
      std::vector<std::vector<char>> batch_used;
      std::set<std::string> pending;
      for (const auto& g : groups) {
        const std::vector<uint32_t> c = canonical(g, false);
        std::string k = key_of(op, algo, bytes);
        append_gpus(k, c);
        group_keys.push_back(k);
        if (group_timings_.contains(k) || recorded_groups_.contains(k) ||
            !pending.insert(k).second) {
          continue;
        }
        std::size_t b = 0;
        for (; b < batches.size(); ++b) {
          if (std::none_of(c.begin(), c.end(), [&](uint32_t gpu) { return batch_used[b][gpu]; }))
            break;
        }
        if (b == batches.size()) {
          batches.emplace_back();
          batch_keys.emplace_back();
          batch_used.emplace_back(spec_.gpus.size(), 0);
        }
        for (uint32_t gpu : c) batch_used[b][gpu] = 1;
        batches[b].push_back(c);
        batch_keys[b].push_back(std::move(k));
      }
      if (recording_) {
        for (std::size_t b = 0; b < batches.size(); ++b) {
          recorded_groups_.insert(batch_keys[b].begin(), batch_keys[b].end());
          recorded_runs_.push_back(
              RecordedRun{op, algo, std::move(batches[b]), bytes, std::move(batch_keys[b]), {}});
        }
        const bool all_timed =
            std::all_of(group_keys.begin(), group_keys.end(),
                        [&](const std::string& k) { return group_timings_.contains(k); });
        if (!all_timed) {
          recorded_calls_.insert(key);
          return recorded_placeholder_;
        }
      }
      for (std::size_t b = 0; b < batches.size(); ++b) {
        const std::vector<Timing> t = simulate(op, algo, batches[b], bytes);
        for (std::size_t i = 0; i < t.size(); ++i) group_timings_.emplace(batch_keys[b][i], t[i]);
      }
      for (const std::string& k : group_keys) {
        timing.duration = std::max(timing.duration, group_timings_.at(k).duration);
      }
      timing.bytes_per_gpu = group_timings_.at(group_keys.front()).bytes_per_gpu;
    } else {
      if (recording_) {
        recorded_runs_.push_back(RecordedRun{op, algo, groups, bytes, {}, key});
        recorded_calls_.insert(key);
        return recorded_placeholder_;
      }
      std::vector<Timing> t;
      if (auto done = recorded_call_timings_.find(key); done != recorded_call_timings_.end()) {
        t = std::move(done->second);
        recorded_call_timings_.erase(done);
      } else {
        t = simulate(op, algo, groups, bytes);
      }
      for (const Timing& x : t) timing.duration = std::max(timing.duration, x.duration);
      timing.bytes_per_gpu = t.front().bytes_per_gpu;
    }
  }
  return timings_.emplace(key, timing).first->second;
}

void IdleCollectiveTimer::run_recorded(unsigned threads) {
  recording_ = false;
  // Plans first, on this thread (plan() fills a map); the runs then only read them.
  std::vector<const Collective*> collectives;
  std::vector<std::size_t> order;
  std::vector<double> cost;
  for (const RecordedRun& run : recorded_runs_) {
    const auto ranks = static_cast<uint32_t>(run.groups.front().size());
    collectives.push_back(&plan(run.op, run.algo, ranks, run.bytes));
    cost.push_back(static_cast<double>(collectives.back()->plan.steps.size()) *
                   static_cast<double>(run.groups.size()));
    order.push_back(order.size());
  }
  // The longest first (parallel_for takes them in order); ties keep the recorded order.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<std::vector<Timing>> results(recorded_runs_.size());
  parallel_for(order.size(), threads, [&](std::size_t i) {
    const std::size_t r = order[i];
    results[r] = run_groups(*collectives[r], recorded_runs_[r].groups);
  });
  for (std::size_t r = 0; r < recorded_runs_.size(); ++r) {
    RecordedRun& run = recorded_runs_[r];
    simulated_groups_ += run.groups.size();
    if (run.group_keys.empty()) {
      recorded_call_timings_.emplace(std::move(run.call_key), std::move(results[r]));
      continue;
    }
    for (std::size_t i = 0; i < results[r].size(); ++i) {
      group_timings_.emplace(run.group_keys[i], results[r][i]);
    }
  }
  recorded_runs_.clear();
  recorded_calls_.clear();
  recorded_groups_.clear();
}

}  // namespace syncsim::models
