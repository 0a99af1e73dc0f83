#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace syncsim::app {

struct HoldBenchResult {
  uint64_t events = 0;
  std::size_t pending = 0;
  double wall_s = 0;
  double events_per_s = 0;
};

// The classic hold model: `pending` events in the queue; each one, when it runs, schedules itself
// again at now + an exponential delay (mean 1 us). Measures raw event-queue throughput.
HoldBenchResult bench_hold(std::size_t pending, uint64_t events, uint64_t seed);

struct ScenarioBenchResult {
  std::string file;
  std::vector<std::string> overrides;  // `--set` style, applied to the file
  double wall_s = 0;                   // load + build + simulate, best of the repetitions
  uint64_t packet_hops = 0;
  double packet_hops_per_s = 0;
  uint64_t events = 0;
  double events_per_s = 0;
  double peak_rss_mib = 0;  // the case's own high-water mark (it runs in a child process)
  double step_s = 0;        // the training step's time (workload scenarios), to compare runs
  double sim_time_s = 0;    // simulated time at the end, to compare runs
  uint32_t partitions = 1;  // a packet-level traffic run's partitions (run --threads)
  // What its windows bound the speed-up on its thread count to (RunResult::thread_scaling; 1 on
  // one thread or one queue).
  double speedup_bound = 1;
};

// `threads`: `run --threads`, the step's private idle-fabric simulations or a packet-level
// traffic run's partitions at once.
ScenarioBenchResult bench_scenario(const std::string& file,
                                   const std::vector<std::string>& overrides, int repetitions,
                                   uint32_t threads = 1);

// Peak resident set size of this process so far, from /proc/self/status (VmHWM); 0 if unknown.
double peak_rss_mib();

}  // namespace syncsim::app
