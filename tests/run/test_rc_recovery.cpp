// RC recovery on lossless classes: a packet lost under PFC (bit errors, headroom overflow) is
// recovered by go-back-N with the RC ACK timeout, the message completes, and the output says how
// long the recovery took; the headroom warning checks what `headroom: auto` reserves.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/run/lossy_fixtures.hpp"

using namespace syncsim;
using lossy_test::drops_of;
using lossy_test::incast_yaml;
using lossy_test::run_yaml;

namespace {

const std::string kLossless = "    pfc: {enabled: true, lossless_priorities: [3]}\n";
constexpr double kNcclTimeoutS = 4.096e-6 * 1048576.0;  // NCCL_IB_TIMEOUT = 20: 4.096 us x 2^20

}  // namespace

TEST_CASE("rc recovery: a lost lossless tail comes back after k x the RC timeout, k >= 1") {
  // One-packet messages on a lossless class whose links lose 30 % of their frames (bit errors
  // drop any class): no later packet reveals a loss, so only the timer recovers it. The timer runs
  // from the send; the copy that gets through is sent k timeouts later and arrives within one
  // uncongested one-way trip (a few us), so each recovery lies in [k T, k T + 10 us].
  const std::string yaml = incast_yaml(8, "1000B", "64MiB", 3, kLossless);
  const app::RunResult clean = run_yaml(yaml);
  CHECK(clean.rc_recoveries == 0);
  CHECK(clean.timeouts == 0);
  CHECK(clean.fct.max_s < 20e-6);
  const std::string lossy = "  impairments: {links: [host], loss: 0.3, loss_on_lossless: true}\n";
  const app::RunResult r = run_yaml(incast_yaml(8, "1000B", "64MiB", 3, kLossless + lossy));
  CHECK(drops_of(r, "link_loss") > 0);
  REQUIRE(r.messages_completed == 8);
  CHECK(r.counters.bytes_delivered == 8 * 1000);
  CHECK(r.acks == 0);  // lossless queue pairs keep their ACKs off the wire
  REQUIRE(!r.rc_recovered.empty());
  CHECK(r.rc_recoveries == r.rc_recovered.size());  // one recovery per message here
  for (const auto& m : r.rc_recovered) {
    CAPTURE(m.src);
    CAPTURE(m.recovery_s);
    const double k = std::floor(m.recovery_s / kNcclTimeoutS);
    CHECK(k >= 1);
    CHECK(m.recovery_s - k * kNcclTimeoutS >= 0);
    CHECK(m.recovery_s - k * kNcclTimeoutS < 10e-6);
    CHECK(m.finish_s >= m.recovery_s);
  }
  CHECK(r.rc_recovery_time_max_s == doctest::Approx(r.rc_recovered.front().recovery_s));
  // A shorter timeout set in the scenario is the one used.
  const app::RunResult fast =
      run_yaml(incast_yaml(8, "1000B", "64MiB", 3, kLossless + lossy),
               {app::parse_override("fabric.transport.go_back_n.lossless_timeout=100us")});
  REQUIRE(fast.messages_completed == 8);
  for (const auto& m : fast.rc_recovered) {
    const double k = std::floor(m.recovery_s / 100e-6);
    CHECK(k >= 1);
    CHECK(m.recovery_s - k * 100e-6 < 10e-6);
  }
}

TEST_CASE("rc recovery: losses inside a message are repaired by a NAK, long before the timeout") {
  const std::string yaml = incast_yaml(4, "2MB", "64MiB", 3, kLossless);
  const app::RunResult r =
      run_yaml(yaml, {app::parse_override("fabric.impairments.loss=0.002"),
                      app::parse_override("fabric.impairments.loss_on_lossless=true")});
  CHECK(drops_of(r, "link_loss") > 0);
  REQUIRE(r.messages_completed == 4);
  CHECK(r.naks > 0);
  CHECK(r.rc_recoveries > 0);
  CHECK(r.counters.bytes_injected ==
        r.counters.bytes_delivered + r.counters.bytes_dropped + r.bytes_discarded);
  // Without a lost tail no recovery waits for the timer: each ends within milliseconds (a NAK
  // rewinds the whole rest of a 2 MB message), against the 4.3 s timeout.
  if (r.timeouts == 0) CHECK(r.rc_recovery_time_max_s < 10e-3);
  // Same seed, same recoveries.
  const app::RunResult again =
      run_yaml(yaml, {app::parse_override("fabric.impairments.loss=0.002"),
                      app::parse_override("fabric.impairments.loss_on_lossless=true")});
  CHECK(again.rc_recoveries == r.rc_recoveries);
  CHECK(again.rc_recovery_time_s == r.rc_recovery_time_s);
  CHECK(again.fct_by_message_s == r.fct_by_message_s);
}

TEST_CASE("rc recovery: headroom overflow drops are recovered; lossless: false keeps them lost") {
  const std::string file = std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/headroom-too-small.yaml";
  const app::RunResult r = app::run_scenario(app::load_scenario_file(file, {}));
  CHECK(drops_of(r, "lossless_headroom_exceeded") > 0);
  // With 2 KiB of headroom every retry overflows again: some queue pairs get through within
  // NCCL's 7 retries, the others fail as a verbs QP does (rc_retry_exceeded); none hangs.
  CHECK(r.messages_completed > 0);
  CHECK(r.rc_retry_exceeded > 0);
  CHECK(r.messages_completed + r.rc_retry_exceeded == r.messages);
  CHECK(r.rc_recoveries > 0);
  CHECK(r.rc_recovery_time_max_s >= kNcclTimeoutS);  // the incast's tails needed the timer
  const nlohmann::json j = app::to_json(r);
  CHECK(j["rc_recoveries"].get<uint64_t>() == r.rc_recoveries);
  CHECK(j["rc_recovered"].size() == std::min<std::size_t>(10, r.rc_recovered.size()));
  // The warning checks the headroom `auto` reserves (2 wire MTUs + cable both ways + 1 us of
  // sender response + a PAUSE frame): 8320 + 50000 + 50000 + 64 B on the 400G links.
  const bool warned = std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
    return w.find("below the 108384 B") != std::string::npos &&
           w.find("fabric links") != std::string::npos;
  });
  CHECK(warned);
  app::LoadOptions off;
  off.overrides = {app::parse_override("fabric.transport.go_back_n.lossless=false")};
  const app::RunResult lost = app::run_scenario(app::load_scenario_file(file, off));
  CHECK(lost.messages_completed < lost.messages);
  CHECK(lost.rc_recoveries == 0);
  CHECK(lost.counters.bytes_injected ==
        lost.counters.bytes_delivered + lost.counters.bytes_dropped);
}
