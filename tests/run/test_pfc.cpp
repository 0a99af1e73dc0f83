// The lossless incast with PFC and ECN; the mechanisms alone are tested in
// tests/sim/test_pfc.cpp and tests/sim/test_ecn.cpp.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/core/rng.hpp"
#include "sim/net/ecn.hpp"
#include "sim/net/network.hpp"
#include "sim/net/shared_buffer_mmu.hpp"

using namespace syncsim;
using namespace syncsim::net;

namespace {

app::Scenario incast(std::vector<app::Override> overrides = {}) {
  app::LoadOptions o;
  o.overrides = std::move(overrides);
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/incast-pfc.yaml", o);
}

uint64_t total_drops(const app::RunResult& r) {
  uint64_t n = 0;
  for (const auto& d : r.drops) n += d.second;
  return n;
}

uint64_t drops_of(const app::RunResult& r, const std::string& reason) {
  for (const auto& d : r.drops) {
    if (d.first == reason) return d.second;
  }
  return 0;
}

}  // namespace

TEST_CASE("pfc incast: lossless with PFC, lossy without it on the same buffer") {
  const app::RunResult on = app::run_scenario(incast());
  CHECK(total_drops(on) == 0);
  CHECK(on.counters.bytes_dropped == 0);
  CHECK(on.pause_frames >= 1);
  CHECK(on.resume_frames >= 1);
  CHECK(on.paused_time_s > 0);
  CHECK(on.messages_completed == on.messages);
  CHECK(on.counters.bytes_delivered == on.counters.bytes_injected);
  CHECK(on.ecn_marks > 0);
  CHECK(on.warnings.empty());

  // Pauses propagate upstream: the spine and the senders' NICs get paused, not just leaf0's peer.
  const auto paused_owner = [&](const std::string& prefix) {
    return std::any_of(on.paused_ports.begin(), on.paused_ports.end(),
                       [&](const auto& p) { return p.first.rfind(prefix, 0) == 0; });
  };
  CHECK(paused_owner("spine"));
  CHECK(paused_owner("host"));

  const app::RunResult off =
      app::run_scenario(incast({app::parse_override("fabric.switch.pfc.enabled=false")}));
  CHECK(drops_of(off, "buffer_full") > 0);
  CHECK(off.pause_frames == 0);
  // Without PFC the class is lossy: go-back-N retransmits, so messages complete, late.
  CHECK(off.retransmitted_packets > 0);
  CHECK(off.messages_completed == off.messages);
  // Byte conservation holds either way (out-of-order arrivals are discarded by go-back-N).
  CHECK(off.counters.bytes_injected ==
        off.counters.bytes_delivered + off.counters.bytes_dropped + off.bytes_discarded);
}

TEST_CASE("pfc incast: the victim flow is slowed by congestion spreading") {
  app::Scenario s = incast();
  const app::RunResult with = app::run_scenario(s);
  s.traffic.resize(1);  // the victim alone
  const app::RunResult alone = app::run_scenario(s);
  REQUIRE(alone.fct_by_message_s.size() == 1);
  REQUIRE(!with.fct_by_message_s.empty());
  const double victim =
      with.fct_by_message_s.back();  // messages in start order: the victim starts last
  MESSAGE("victim alone " << alone.fct_by_message_s[0] * 1e6 << " us, in the incast "
                          << victim * 1e6 << " us");
  CHECK(victim > 2.0 * alone.fct_by_message_s[0]);
}

TEST_CASE("pfc incast: same seed twice gives identical results") {
  const app::RunResult a = app::run_scenario(incast());
  const app::RunResult b = app::run_scenario(incast());
  CHECK(a.events == b.events);
  CHECK(a.sim_time_s == b.sim_time_s);
  CHECK(a.pause_frames == b.pause_frames);
  CHECK(a.ecn_marks == b.ecn_marks);
  CHECK(a.paused_time_s == b.paused_time_s);
  CHECK(a.fct_by_message_s == b.fct_by_message_s);
}

TEST_CASE("pfc incast: headroom too small drops lossless packets loudly and warns") {
  const app::RunResult r =
      app::run_scenario(incast({app::parse_override("fabric.switch.pfc.headroom=2KB")}));
  CHECK(drops_of(r, "lossless_headroom_exceeded") > 0);
  REQUIRE(!r.warnings.empty());
  CHECK(r.warnings[0].find("headroom") != std::string::npos);
}

TEST_CASE("pfc incast: ECN thresholds above XOFF are flagged") {
  const app::RunResult r = app::run_scenario(
      incast({app::parse_override("fabric.switch.ecn={enabled: true}")}));  // 150 KB > XOFF
  const bool flagged = std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
    return w.find("XOFF") != std::string::npos;
  });
  CHECK(flagged);
}

TEST_CASE(
    "pfc incast: marking at enqueue also marks, and --json carries drops, pfc, ecn, warnings") {
  const app::RunResult r =
      app::run_scenario(incast({app::parse_override("fabric.switch.ecn.mark_on=enqueue")}));
  CHECK(r.ecn_marks > 0);
  CHECK(total_drops(r) == 0);
  const nlohmann::json j = app::to_json(r);
  CHECK(j["drops"]["buffer_full"] == 0);
  CHECK(j["drops"]["buffer_full_packets"] == 0);
  CHECK(j["drops"]["lossless_headroom_exceeded"] == 0);
  CHECK(j["pfc"]["pause_frames"].get<uint64_t>() == r.pause_frames);
  CHECK(j["pfc"]["paused_time_s"].get<double>() > 0);
  CHECK(j["pfc"]["top_paused_ports"].size() == 5);
  CHECK(j["pfc"]["top_paused_ports"][0]["paused_time_s"].get<double>() == r.paused_ports[0].second);
  CHECK(j["ecn_marks"].get<uint64_t>() == r.ecn_marks);
  CHECK(j["warnings"].is_array());
}

TEST_CASE("pfc: with PFC and ECN off the packet model is unchanged (no pauses, no marks)") {
  const app::RunResult r =
      app::run_scenario(incast({app::parse_override("fabric.switch.pfc.enabled=false"),
                                app::parse_override("fabric.switch.ecn.enabled=false"),
                                app::parse_override("fabric.switch.buffer=64MiB")}));
  CHECK(total_drops(r) == 0);
  CHECK(r.pause_frames == 0);
  CHECK(r.ecn_marks == 0);
  CHECK(r.paused_time_s == 0);
  CHECK(r.messages_completed == r.messages);
}

TEST_CASE("headroom-too-small scenario: lossless drops are reported with a warning") {
  app::LoadOptions o;
  const app::RunResult r = app::run_scenario(app::load_scenario_file(
      std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/headroom-too-small.yaml", o));
  CHECK(drops_of(r, "lossless_headroom_exceeded") > 0);
  // RC recovery resends what was lost: the receiver discards what arrives after a gap.
  CHECK(r.counters.bytes_injected ==
        r.counters.bytes_delivered + r.counters.bytes_dropped + r.bytes_discarded);
  const bool warned = std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
    return w.find("fabric.switch.pfc.headroom") != std::string::npos;
  });
  CHECK(warned);
  const std::string text = app::to_text(r);
  CHECK(text.find("lossless_headroom_exceeded") != std::string::npos);
  CHECK(text.find("warning") != std::string::npos);
}
