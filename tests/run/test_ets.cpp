// ETS between traffic classes on a switch port, end to end: two lossless classes saturating one
// 400G port share it by their weights, a class held back by PFC downstream leaves its share to the
// other, strict priority is one setting away, and the run is deterministic.
#include <doctest/doctest.h>

#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

constexpr double kPayloadGbps = 400.0 * 4096.0 / 4160.0;  // 4 KiB MTU, 64 B header per packet

// One leaf, 400G links: host0 (class 3) and host1 (class 0) each send `size` to host2, so the
// leaf's port to host2 carries both classes, backlogged (both lossless: PFC holds the excess).
app::RunResult two_classes(const std::string& ets, const std::string& size = "32MB") {
  const std::string yaml = R"(name: ets-shares
seed: 1
fidelity: packet
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 1, hosts_per_leaf: 3, spines: 1}
  host: {gpus: 1, nics: 1}
  links:
    host:   {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}
    fabric: {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}
  switch:
    pfc: {enabled: true, lossless_priorities: [0, 3]}
    )" + ets + R"(
traffic:
  - pattern: messages
    messages:
      - {src: 0, dst: 2, size: )" +
                           size + R"(, start: 0us, priority: 3}
      - {src: 1, dst: 2, size: )" +
                           size + R"(, start: 0us, priority: 0}
)";
  return app::run_scenario(app::load_scenario_text(yaml, "ets.yaml"));
}

// Average payload rate (Gb/s) of a message of `bytes` that completed after `fct_s`.
double gbps(double bytes, double fct_s) { return bytes * 8 / fct_s / 1e9; }

}  // namespace

TEST_CASE("ets scenario: 70/30 on one 400G port gives the classes 70/30 of it within 1%") {
  const app::RunResult r = two_classes("ets: {weights: {0: 30, 3: 70}}");
  REQUIRE(r.messages_completed == 2);
  CHECK(r.counters.bytes_dropped == 0);
  // Class 3 finishes first, at 70 % of the port; class 0 then has the port to itself, so it ends
  // when both messages' bytes have crossed at the full rate.
  const double fct3 = r.fct_by_message_s[0];
  const double fct0 = r.fct_by_message_s[1];
  CHECK(gbps(32e6, fct3) == doctest::Approx(0.70 * kPayloadGbps).epsilon(0.01));
  CHECK(gbps(64e6, fct0) == doctest::Approx(kPayloadGbps).epsilon(0.01));
  // Class 0's bytes by the time class 3 finished: 30/70 of class 3's.
  const double class0_by_fct3 = 32e6 - (fct0 - fct3) * kPayloadGbps * 1e9 / 8;
  CHECK(class0_by_fct3 / 32e6 == doctest::Approx(30.0 / 70.0).epsilon(0.01));
}

TEST_CASE("ets scenario: the default is NVIDIA's RoCE-mode 50/50; strict priority is opt-in") {
  const app::RunResult shared = two_classes("");
  REQUIRE(shared.messages_completed == 2);
  CHECK(gbps(32e6, shared.fct_by_message_s[0]) ==
        doctest::Approx(0.5 * kPayloadGbps).epsilon(0.01));
  // Both end together (equal sizes, equal shares).
  CHECK(shared.fct_by_message_s[1] == doctest::Approx(shared.fct_by_message_s[0]).epsilon(0.01));
  // Strict priority: class 3 takes the whole port while it has data.
  const app::RunResult strict = two_classes("ets: {enabled: false}");
  REQUIRE(strict.messages_completed == 2);
  CHECK(gbps(32e6, strict.fct_by_message_s[0]) == doctest::Approx(kPayloadGbps).epsilon(0.01));
  // Or class 3 strict, which is the same on this port.
  const app::RunResult strict3 = two_classes("ets: {weights: {0: 100}, strict: [3]}");
  CHECK(strict3.fct_by_message_s == strict.fct_by_message_s);
}

TEST_CASE("ets scenario: a class paused downstream leaves its share to the other") {
  // Two leaves of 4 hosts, one spine. Class 3: host0 (leaf0) and hosts 5, 6, 7 (leaf1) into host4:
  // a 4:1 incast at leaf1 that PFC pushes back to leaf0's uplink, which then can send class 3 only
  // a fraction of the time. Class 0: host1 (leaf0) -> host5 (leaf1) over the same uplink. At 50/50
  // the uplink gives class 0 what class 3 cannot use: more than half of the port.
  const std::string yaml = R"(name: ets-paused
seed: 1
fidelity: packet
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 4, spines: 1}
  host: {gpus: 1, nics: 1}
  links:
    host:   {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}
    fabric: {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}
  switch:
    pfc: {enabled: true, lossless_priorities: [0, 3]}
traffic:
  - pattern: messages
    messages:
      - {src: 0, dst: 4, size: 8MB, start: 0us, priority: 3}
      - {src: 5, dst: 4, size: 8MB, start: 0us, priority: 3}
      - {src: 6, dst: 4, size: 8MB, start: 0us, priority: 3}
      - {src: 7, dst: 4, size: 8MB, start: 0us, priority: 3}
      - {src: 1, dst: 5, size: 16MB, start: 0us, priority: 0}
)";
  const app::RunResult r = app::run_scenario(app::load_scenario_text(yaml, "paused.yaml"));
  REQUIRE(r.messages_completed == 5);
  CHECK(r.paused_time_s > 0);
  // Class 3 over the uplink (host0's message) is held below its 50 % by the pauses; class 0
  // finishes first, above its 50 % (237 Gb/s of 394 when this was written).
  const double fct0 = r.fct_by_message_s[4];
  CHECK(fct0 < r.fct_by_message_s[0]);
  CHECK(gbps(8e6, r.fct_by_message_s[0]) < 0.5 * kPayloadGbps);
  CHECK(gbps(16e6, fct0) > 0.55 * kPayloadGbps);
}

TEST_CASE("ets scenario: same scenario, same seed, same results") {
  const app::RunResult a = two_classes("ets: {weights: {0: 30, 3: 70}}", "4MB");
  const app::RunResult b = two_classes("ets: {weights: {0: 30, 3: 70}}", "4MB");
  CHECK(a.fct_by_message_s == b.fct_by_message_s);
  CHECK(a.counters.packets_injected == b.counters.packets_injected);
  CHECK(a.paused_time_s == b.paused_time_s);
}
