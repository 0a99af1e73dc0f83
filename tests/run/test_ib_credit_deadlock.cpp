// A credit loop on InfiniBand: the valley routes of pfc-deadlock.yaml close a cycle of full
// buffers; no message completes and the run says why (there is no PFC detector to stop it).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

TEST_CASE("ib credit deadlock: valley routes stall every message and the run warns") {
  app::LoadOptions o;
  o.overrides = {{"fabric.link_layer", "infiniband"}};
  const app::RunResult r = app::run_scenario(
      app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/pfc-deadlock.yaml", o));
  CHECK(r.messages_completed == 0);
  CHECK(r.counters.bytes_dropped == 0);
  CHECK(r.pause_frames == 0);
  CHECK_FALSE(r.deadlock.detected);  // the PFC detector is off on InfiniBand
  CHECK(std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
    return w.find("InfiniBand credit deadlock") != std::string::npos;
  }));

  // The same fabric and traffic without the valley routes: D-mod-K up/down routes, no loop.
  o.overrides.push_back({"fabric.route_overrides", "[]"});
  const app::RunResult up_down = app::run_scenario(
      app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/pfc-deadlock.yaml", o));
  CHECK(up_down.messages_completed == up_down.messages);
  CHECK(std::none_of(up_down.warnings.begin(), up_down.warnings.end(), [](const std::string& w) {
    return w.find("credit deadlock") != std::string::npos;
  }));
}
