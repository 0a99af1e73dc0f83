// This machine's speed against the estimate's reference machine (machine_speed.hpp).
#include "run/machine_speed.hpp"

#include <algorithm>
#include <optional>

#include "run/estimate.hpp"
#include "run/hold_model.hpp"

namespace syncsim::app {

namespace {

// Three trials of 50,000 events with 4,096 pending: the best agreed with a 20 M-event run's rate
// within 2 % on the faster VM (23.0-23.6 against 23.2-23.6 M events/s), in about 8 ms for the
// three.
constexpr int kProbeTrials = 3;
constexpr uint64_t kProbeEvents = 50'000;
constexpr std::size_t kProbePending = 4096;
// For a run estimated under kMachineSpeedMinWallS: two trials of 2,000 events with 256 pending,
// 0.3 ms on the faster VM, where they read 24.0-24.2 M events/s against the full probe's 22.4-22.8
// (+7 %; probes of 4,000-20,000 events read -8 % to +1 %).
constexpr int kShortProbeTrials = 2;
constexpr uint64_t kShortProbeEvents = 2'000;
constexpr std::size_t kShortProbePending = 256;

std::optional<double> forced_speed() { return positive_number_from_env("SYNCSIM_MACHINE_SPEED"); }

double probe(int trials, uint64_t events, std::size_t pending) {
  double best = 0;
  for (int trial = 0; trial < trials; ++trial) {
    best = std::max(best, bench_hold(pending, events, 1).events_per_s);
  }
  return best > 0 ? best / kReferenceHoldEventsPerS : 1.0;
}

}  // namespace

double probe_machine_speed() { return probe(kProbeTrials, kProbeEvents, kProbePending); }

double short_probe_machine_speed() {
  return probe(kShortProbeTrials, kShortProbeEvents, kShortProbePending);
}

// The environment's figure, else the probe's; the probe runs only when there is no such figure
// (value_or would run it regardless).
double machine_speed() {
  static const double speed = forced_speed() ? *forced_speed() : probe_machine_speed();
  return speed;
}

double machine_speed_for(double reference_wall_s) {
  if (reference_wall_s >= kMachineSpeedMinWallS) return machine_speed();
  static const double speed = forced_speed() ? *forced_speed() : short_probe_machine_speed();
  return speed;
}

}  // namespace syncsim::app
