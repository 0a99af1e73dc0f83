// The hold model (hold_model.hpp).
#include "run/hold_model.hpp"

#include <chrono>
#include <cmath>

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

}  // namespace syncsim::app
