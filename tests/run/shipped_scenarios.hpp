#pragma once
// Helpers of the tests that run the scenarios shipped in scenarios/: load one by file name with
// --set overrides, and count the packets a run dropped.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

namespace syncsim::testing {

inline app::Scenario shipped_scenario(const std::string& name,
                                      std::vector<app::Override> overrides = {}) {
  app::LoadOptions o;
  o.overrides = std::move(overrides);
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name, o);
}

inline uint64_t dropped_packets(const app::RunResult& r) {
  uint64_t n = 0;
  for (const auto& d : r.drops) n += d.second;
  return n;
}

}  // namespace syncsim::testing
