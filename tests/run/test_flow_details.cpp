// Per-flow detail in `flow_rates.flows[]`: the switches a flow crosses and what DCQCN did to it,
// checked against the network-wide counters they must add up to.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

TEST_CASE("flow details: per-flow CNPs and cuts add up to the run's; cut flows went below line") {
  const app::RunResult r =
      app::run_scenario(app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/incast-dcqcn.yaml"));
  REQUIRE(r.flow_rates.flows.size() == 17);
  uint64_t cnps = 0, cuts = 0;
  for (const auto& f : r.flow_rates.flows) {
    CAPTURE(f.src);
    cnps += f.cnps;
    cuts += f.rate_cuts;
    CHECK(f.min_rate_bps > 0);
    CHECK(f.min_rate_bps <= 100e9);
    if (f.rate_cuts > 0) CHECK(f.min_rate_bps < 100e9);
    // Every sender and the victim are on leaf1 or leaf2; their receivers on leaf0, one spine.
    REQUIRE(f.path.size() == 3);
    CHECK(f.path[1] == "spine0");
    CHECK(f.path[2] == "leaf0");
  }
  CHECK(cnps == r.cnps);
  CHECK(cuts == r.rate_cuts);
  CHECK(r.cnps > 0);
  // The victim (host17 -> host1) shares no congested port: never cut, at line rate throughout.
  const auto& victim = r.flow_rates.flows.back();
  CHECK(victim.src == "host17.nic0");
  CHECK(victim.rate_cuts == 0);
  CHECK(victim.min_rate_bps == 100e9);
}

TEST_CASE("flow details: without DCQCN no CNPs and no minimum rate (null, not zero)") {
  const app::RunResult r =
      app::run_scenario(app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/incast-pfc.yaml"));
  REQUIRE_FALSE(r.flow_rates.flows.empty());
  const nlohmann::json j = app::to_json(r);
  const nlohmann::json& first = j["flow_rates"]["flows"][0];
  CHECK(first["cnps"] == 0);
  CHECK(first["rate_cuts"] == 0);
  CHECK(first["min_rate_bps"].is_null());
  CHECK(first["path"].size() == 3);
}
