#include "cli/bench.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::app {

namespace {

class HoldTarget final : public EventTarget {
 public:
  HoldTarget(EventQueue& q, RngStream rng, uint64_t budget) : q_(q), rng_(rng), budget_(budget) {}
  void on_event(uint32_t /*kind*/, uint64_t /*arg*/) override {
    if (++done_ >= budget_) {
      q_.stop();
      return;
    }
    q_.schedule(q_.now() + delay(), this, 0);
  }
  Time delay() {
    // Exponential with mean 1 us, from our own uniform so results do not depend on the libstdc++.
    const double u = rng_.uniform();
    return Time::ps(static_cast<int64_t>(-std::log1p(-u) * 1e6));
  }

 private:
  EventQueue& q_;
  RngStream rng_;
  uint64_t budget_;
  uint64_t done_ = 0;
};

}  // namespace

HoldBenchResult bench_hold(std::size_t pending, uint64_t events, uint64_t seed) {
  Simulation sim(seed);
  HoldTarget target(sim.queue(), sim.rng(RngStreamKind::Traffic), events);
  for (std::size_t i = 0; i < pending; ++i) sim.queue().schedule(target.delay(), &target, 0);
  const auto t0 = std::chrono::steady_clock::now();
  sim.queue().run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  HoldBenchResult r;
  r.events = sim.queue().executed();
  r.pending = pending;
  r.wall_s = wall;
  r.events_per_s = static_cast<double>(r.events) / wall;
  return r;
}

double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0.0;
}

ScenarioBenchResult bench_scenario(const std::string& file, int repetitions) {
  ScenarioBenchResult best;
  best.file = file;
  best.wall_s = 1e300;
  for (int i = 0; i < repetitions; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const Scenario s = load_scenario_file(file);
    const RunResult r = run_scenario(s);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (wall < best.wall_s) {
      best.wall_s = wall;
      best.packet_hops = r.counters.packet_hops;
      best.events = r.events;
    }
  }
  best.packet_hops_per_s = static_cast<double>(best.packet_hops) / best.wall_s;
  best.events_per_s = static_cast<double>(best.events) / best.wall_s;
  best.peak_rss_mib = peak_rss_mib();
  return best;
}

}  // namespace syncsim::app
