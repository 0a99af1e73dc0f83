#pragma once
// The classic hold model of event-queue benchmarks: `pending` events in the queue; each one, when
// it runs, schedules itself again at now + an exponential delay (mean 1 us). It measures the event
// core's throughput: `syncsim bench` reports it, and the estimate's machine speed
// (machine_speed.hpp) is read off it.
#include <cstddef>
#include <cstdint>

namespace syncsim::app {

struct HoldBenchResult {
  uint64_t events = 0;
  std::size_t pending = 0;
  double wall_s = 0;
  double events_per_s = 0;
};

HoldBenchResult bench_hold(std::size_t pending, uint64_t events, uint64_t seed);

}  // namespace syncsim::app
