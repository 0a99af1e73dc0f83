#pragma once
// Runs a parsed scenario on the backend its fidelity names and summarises the outcome.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "app/scenario.hpp"
#include "sim/backends/transfer_backend.hpp"

namespace syncsim::app {

struct FctSummary {
  double min_s = 0, mean_s = 0, p50_s = 0, p99_s = 0, max_s = 0;
};

struct RunResult {
  std::string scenario;
  uint64_t seed = 0;
  Fidelity fidelity = Fidelity::Packet;
  double sim_time_s = 0;       // time of the last event (last completion)
  double wall_s = 0;           // host wall-clock time of set-up and simulation
  uint64_t events = 0;
  BackendCounters counters;
  uint64_t messages = 0;
  uint64_t messages_completed = 0;
  FctSummary fct;
  uint32_t gpus = 0;
  uint32_t hosts = 0;
  std::size_t switches = 0;
  std::size_t links = 0;
  uint64_t packets_dropped_buffer_full = 0;
};

RunResult run_scenario(const Scenario& scenario);

// The --json object: the keys the CLI contract names plus a few more.
nlohmann::json to_json(const RunResult& r);
// A human-readable summary for the terminal.
std::string to_text(const RunResult& r);

const char* fidelity_name(Fidelity f);

// Nearest-rank percentile of an ascending vector (p in [0, 100]).
double percentile_sorted(const std::vector<double>& sorted, double p);

}  // namespace syncsim::app
