#pragma once
// Memory and time estimates of a scenario before anything is built, so a run too big for the
// machine is refused with numbers instead of being killed by the OOM killer hours later.
//
// The model counts what dominates: the fabric (nodes, cables, the routing table of hop distances),
// the backend's per-port state by fidelity, the messages and their transfer records, and for a DDP
// step what models/step_sim.cpp will run: the whole plans of the buckets it simulates (kept
// together), or, for buckets that models::bucket_extrapolation says are extrapolated, the two
// sample plans (run once, dropped), plus the transfer records of the largest live simulation.
// Per-item costs are measured constants (see estimate.cpp); the CLI test checks the estimate
// against the measured peak RSS on a few scenarios (within 1.5x), tests/run/test_estimate_scale.cpp
// against the scale measurements of docs/scale.md (within 2x).
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scenario/scenario.hpp"

namespace syncsim::app {

struct Estimate {
  double memory_bytes = 0;
  double wall_s = 0;
  double transfers = 0;    // network transfers the run will start (workload plans + traffic)
  double packet_hops = 0;  // packet fidelity: packet transmissions over links
  double sim_time_s = 0;   // expected simulated time (DDP step: the closed form); 0 = unknown
  int extrapolated_buckets =
      0;  // distinct bucket sizes timed by extrapolation (models/step_sim.hpp)
  // The machine's speed against the one the per-item costs were measured on, which wall_s was
  // divided by (machine_speed.hpp; 1: the reference figure).
  double machine_speed = 1;
  // What makes up memory_bytes; "transfers" is the largest live simulation (its transfer records,
  // and for the extrapolation samples their plan, which is dropped after the run).
  std::vector<std::pair<std::string, double>> memory_parts;
  // What would make the run smaller, where the estimate knows a cheaper mode of the same model
  // (the refusal names it).
  std::vector<std::string> cheaper;
  // What the estimate knows it counts only roughly (a lossless class that will drop: its resends,
  // by a rule fitted on incasts), one sentence each naming the setting.
  std::vector<std::string> caveats;
};

// How the run is asked for, where it changes its cost.
struct EstimateOptions {
  // The run keeps per port x priority counters (`run --counters`, every sweep point; packet
  // fidelity).
  bool port_counters = false;
  // `run --threads`: the DDP step's idle-fabric simulations at once (their wall is the schedule's
  // longest thread, their memory the largest ones running together), a packet run's partitions.
  uint32_t threads = 1;
  // `run --json`: the result document is built whole in memory (at packet fidelity one object per
  // flow in `flow_rates`).
  bool json_output = false;
  // This machine's speed against the reference (machine_speed.hpp): the wall estimate is divided
  // by it. 1 keeps the reference machine's figure (a pure function of the scenario, for tests).
  double machine_speed = 1;
};

// `e`, estimated at the reference machine's speed, on a machine `speed` times as fast.
void scale_to_machine(Estimate& e, double speed);

// Throws topo::TopologyError for a fabric build_fabric would reject.
Estimate estimate_run(const Scenario& scenario, const EstimateOptions& options);
inline Estimate estimate_run(const Scenario& scenario, bool port_counters = false,
                             uint32_t threads = 1) {
  return estimate_run(scenario, EstimateOptions{port_counters, threads, false, 1});
}

// The environment variable `name` as a positive number (a stand-in for a machine's property, as
// SYNCSIM_MEM_AVAILABLE and SYNCSIM_MACHINE_SPEED are); nullopt when unset, empty or not one.
std::optional<double> positive_number_from_env(const char* name);

// /proc/meminfo MemAvailable in bytes (or the environment's SYNCSIM_MEM_AVAILABLE, bytes, when set:
// a stand-in for tests); nullopt where it cannot be read.
std::optional<double> available_memory_bytes();

// Peak resident set size of this process so far (getrusage), bytes.
double peak_rss_bytes();

nlohmann::json to_json(const Estimate& e);
std::string to_text(const Estimate& e);
// "estimated memory 12.3 GiB exceeds the 8.0 GiB available (MemAvailable); ..." when the run
// should be refused, nullopt when it fits (or availability is unknown).
std::optional<std::string> refusal(const Estimate& e, std::optional<double> available);

}  // namespace syncsim::app
