#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "run/hold_model.hpp"

namespace syncsim::app {

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

// One of the packet-forwarding goals set for the reference cases (docs/performance.md, "Event
// core and packet forwarding"), against what the bench measured. `at_least`: the figure must reach
// the target (a rate), else stay below it (a time or a size).
struct BenchTarget {
  std::string figure;
  double value = 0;
  double target = 0;
  bool at_least = true;
  bool met() const { return at_least ? value >= target : value < target; }
};

// The five reference cases' results by name (bench_command's names): 10 M packet hops/s at 128
// hosts and 5 M at 1,024 with an ACK per data packet, the shipped runs under 0.25 s and 0.8 s
// (load, build and run), every case under 100 MiB, and the lossless run at least 70 % of the
// plain run's hops/s. A case missing from `cases` leaves its targets out.
struct NamedBenchResult {
  std::string name;
  ScenarioBenchResult result;
};
std::vector<BenchTarget> bench_targets(const std::vector<NamedBenchResult>& cases);

}  // namespace syncsim::app
