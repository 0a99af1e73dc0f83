// PFC deadlock from a cyclic buffer dependency, its detection, and the PFC watchdog,
// on scenarios/pfc-deadlock.yaml: valley routes (leaf i -> spine -> leaf i+1 ->
// spine -> leaf i+2) close a cycle of six egress queues.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

app::Scenario deadlock_scenario(const std::vector<std::string>& sets = {}) {
  app::LoadOptions o;
  for (const auto& s : sets) o.overrides.push_back(app::parse_override(s));
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/pfc-deadlock.yaml",
                                 o);
}

uint64_t drops(const app::RunResult& r, const std::string& reason) {
  for (const auto& [name, n] : r.drops) {
    if (name == reason) return n;
  }
  FAIL("no drop reason " << reason);
  return 0;
}

}  // namespace

TEST_CASE(
    "pfc deadlock: the valley routes deadlock; the cycle is detected, named and the run stops") {
  const app::RunResult r = app::run_scenario(deadlock_scenario());
  REQUIRE(r.deadlock.detected);
  CHECK(r.deadlock.priority == 3);
  // The six fabric queues, each waiting on the next (leaf -> spine -> leaf ...).
  const std::vector<std::string> cycle{"leaf0->spine0", "spine0->leaf1", "leaf1->spine0",
                                       "spine0->leaf2", "leaf2->spine0", "spine0->leaf0"};
  REQUIRE(r.deadlock.ports.size() == cycle.size());
  // Same cycle, whatever queue it is reported from.
  const auto first = std::find(cycle.begin(), cycle.end(), r.deadlock.ports[0]);
  REQUIRE(first != cycle.end());
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    CHECK(r.deadlock.ports[i] ==
          cycle[(static_cast<std::size_t>(first - cycle.begin()) + i) % cycle.size()]);
  }
  // Formed within the first tens of microseconds, detected 500 us (the detection time) later, and
  // the run stopped there instead of idling on.
  CHECK(r.deadlock.at_s > 0);
  CHECK(r.deadlock.at_s < 100e-6);
  CHECK(r.deadlock.detected_at_s == doctest::Approx(r.deadlock.at_s + 500e-6));
  CHECK(r.sim_time_s == doctest::Approx(r.deadlock.detected_at_s));
  CHECK(r.messages_completed == 0);
  CHECK(r.counters.bytes_dropped == 0);  // lossless: stuck, not dropped
  const nlohmann::json j = app::to_json(r);
  CHECK(j["deadlock"]["detected"] == true);
  CHECK(j["deadlock"]["ports"].size() == 6);
  CHECK(j["deadlock"]["at_s"].get<double>() == r.deadlock.at_s);
  REQUIRE(!r.warnings.empty());
  CHECK(r.warnings.back().find("PFC deadlock") != std::string::npos);
}

TEST_CASE("pfc deadlock: the control with up-down routes completes without a deadlock") {
  const app::RunResult r = app::run_scenario(deadlock_scenario({"fabric.route_overrides=[]"}));
  CHECK_FALSE(r.deadlock.detected);
  CHECK(r.messages_completed == r.messages);
  CHECK(r.counters.bytes_dropped == 0);
  CHECK(r.pause_frames > 0);  // congested and paused, but no cycle
  CHECK(app::to_json(r)["deadlock"]["detected"] == false);
}

TEST_CASE("pfc watchdog: drop mode breaks the deadlock and counts what it flushed") {
  const app::RunResult r = app::run_scenario(
      deadlock_scenario({"fabric.switch.pfc.watchdog={detection_time: 200us, action: drop}"}));
  CHECK_FALSE(r.deadlock.detected);
  CHECK(drops(r, "pfc_watchdog") > 0);
  CHECK(drops(r, "lossless_headroom_exceeded") == 0);
  CHECK(r.counters.bytes_dropped > 0);
  // RC recovery resends what was flushed: every byte is delivered, dropped or discarded (after a
  // gap); each message completes or its queue pair ran out of retries.
  CHECK(r.counters.bytes_injected ==
        r.counters.bytes_delivered + r.counters.bytes_dropped + r.bytes_discarded);
  CHECK(r.counters.bytes_injected >= 12 * 2'000'000);
  CHECK(r.messages_completed + r.rc_retry_exceeded == r.messages);
}

TEST_CASE("pfc watchdog: disable mode forwards despite PAUSE; the overflow is counted") {
  const app::RunResult r = app::run_scenario(
      deadlock_scenario({"fabric.switch.pfc.watchdog={detection_time: 200us, action: disable}"}));
  CHECK_FALSE(r.deadlock.detected);
  CHECK(drops(r, "pfc_watchdog") == 0);
  CHECK(drops(r, "lossless_headroom_exceeded") > 0);
  CHECK(r.counters.bytes_delivered > 0);
  // RC recovery resends what was flushed: every byte is delivered, dropped or discarded (after a
  // gap); each message completes or its queue pair ran out of retries.
  CHECK(r.counters.bytes_injected ==
        r.counters.bytes_delivered + r.counters.bytes_dropped + r.bytes_discarded);
  CHECK(r.counters.bytes_injected >= 12 * 2'000'000);
  CHECK(r.messages_completed + r.rc_retry_exceeded == r.messages);
}

TEST_CASE("pfc watchdog and route overrides: bad input is rejected") {
  CHECK_THROWS_AS(deadlock_scenario({"fabric.switch.pfc.watchdog={action: explode}"}),
                  app::ScenarioError);
  CHECK_THROWS_AS(deadlock_scenario({"fabric.switch.pfc.watchdog={detection_time: 0us}"}),
                  app::ScenarioError);
  CHECK_THROWS_AS(deadlock_scenario({"fabric.route_overrides=[{src: 0, dst: 1}]"}),
                  app::ScenarioError);
  CHECK_THROWS_WITH_AS(app::run_scenario(deadlock_scenario(
                           {"fabric.route_overrides=[{src: 0, dst: 8, via: [spine0]}]"})),
                       doctest::Contains("fabric.route_overrides.0.via"), app::ScenarioError);
  // Detection off: the deadlocked run just ends when nothing moves any more, undetected.
  const app::RunResult off =
      app::run_scenario(deadlock_scenario({"fabric.switch.pfc.deadlock_detection_time=0us"}));
  CHECK_FALSE(off.deadlock.detected);
  CHECK(off.messages_completed == 0);
}
