// fabric.nic_overrides: one NIC's own receive drain rate, DCQCN or PFC settings, checked against
// closed forms (a slow receiver's incast completes at its drain rate) and against what DCQCN's two
// ends do (a reaction point without DCQCN ignores CNPs; a notification point without it sends
// none).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/run/shipped_scenarios.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;

namespace {

using testing::dropped_packets;

app::Scenario scenario_file(const std::string& name, std::vector<app::Override> overrides = {}) {
  return testing::shipped_scenario(name, std::move(overrides));
}

double last_to_host0_s(const app::RunResult& r) {
  double last = 0;
  for (const auto& f : r.flow_rates.flows) {
    if (f.dst == "host0.nic0") last = std::max(last, f.finish_s);
  }
  return last;
}

}  // namespace

TEST_CASE("nic_overrides: a slow receiver drains its incast at its own rate, losslessly") {
  // incast-pfc.yaml: 16 x 4 MB into host 0 (100G). Host 0's NIC drains at 50 Gb/s with
  // receiver-side PFC: the incast ends when 64 MB of wire bytes (4096 B payload + 64 B header per
  // packet) have drained, 64e6 x 4160 / 4096 x 8 / 50e9 = 10.40 ms, against 5.20 ms at line rate.
  const app::RunResult line = app::run_scenario(scenario_file("incast-pfc.yaml"));
  const app::RunResult slow = app::run_scenario(scenario_file(
      "incast-pfc.yaml",
      {app::parse_override("fabric.nic_overrides=[{hosts: [0], nic: {rx_pfc: {drain_rate: "
                           "50Gbps}}}]")}));
  const double wire_bits = 64e6 * 4160.0 / 4096.0 * 8;
  CHECK(last_to_host0_s(line) == doctest::Approx(wire_bits / 100e9).epsilon(0.02));
  CHECK(last_to_host0_s(slow) == doctest::Approx(wire_bits / 50e9).epsilon(0.02));
  CHECK(dropped_packets(slow) == 0);
  CHECK(slow.messages_completed == slow.messages);
  // Only host 0's NIC changed: the same override on an idle host changes nothing.
  const app::RunResult idle = app::run_scenario(scenario_file(
      "incast-pfc.yaml",
      {app::parse_override("fabric.nic_overrides=[{hosts: [5], nic: {rx_pfc: {drain_rate: "
                           "50Gbps}}}]")}));
  CHECK(idle.fct_by_message_s == line.fct_by_message_s);
}

TEST_CASE("nic_overrides: DCQCN off at one sender or at the receiver") {
  // incast-dcqcn.yaml: DCQCN on every NIC. Host 9's NIC without it ignores the CNPs its flow gets
  // (no cuts: it is never paced) and takes more than its share: its 4 MB (the first message in
  // start order; the victim starts last) finishes long before the others.
  const app::RunResult all = app::run_scenario(scenario_file("incast-dcqcn.yaml"));
  const app::RunResult rogue = app::run_scenario(
      scenario_file("incast-dcqcn.yaml",
                    {app::parse_override(
                        "fabric.nic_overrides=[{hosts: [9], nic: {dcqcn: {enabled: false}}}]")}));
  int n = 0;
  for (const auto& f : rogue.flow_rates.flows) {  // the flows active in the rate window
    CHECK(f.src != "host9.nic0");                 // done before it opens
    if (f.dst != "host0.nic0") continue;
    ++n;
    CHECK(f.rate_cuts > 0);
  }
  CHECK(n == 15);
  REQUIRE(rogue.fct_by_message_s.size() == 17);
  REQUIRE(all.fct_by_message_s.size() == 17);
  for (std::size_t i = 1; i < 16; ++i) {
    CAPTURE(i);
    CHECK(rogue.fct_by_message_s[0] < 0.25 * rogue.fct_by_message_s[i]);
  }
  CHECK(all.fct_by_message_s[0] > 0.5 * all.fct_by_message_s[1]);  // with DCQCN: its share
  CHECK(all.rate_cuts > 0);
  // The receiver without DCQCN is no notification point: no CNP anywhere, so no cuts.
  const app::RunResult deaf = app::run_scenario(scenario_file(
      "incast-dcqcn.yaml",
      {app::parse_override("fabric.nic_overrides=[{hosts: [0, 1], nic: {dcqcn: {enabled: "
                           "false}}}]")}));
  CHECK(deaf.cnps == 0);
  CHECK(deaf.rate_cuts == 0);
}

TEST_CASE("nic_overrides: an entry changes fabric.nic as it stands; bad entries are refused") {
  // A dcqcn block in an entry keeps DCQCN on and the preset's other parameters.
  const app::Scenario s = scenario_file(
      "incast-dcqcn.yaml",
      {app::parse_override("fabric.nic_overrides=[{hosts: [3, 4], nic: {dcqcn: {rai: 10Mbps}}}]")});
  REQUIRE(s.network.nic_overrides.size() == 1);
  const net::NicParams& o = s.network.nic_overrides[0].nic;
  CHECK(o.dcqcn.enabled);
  CHECK(o.dcqcn.rai == Bandwidth::bps(10000000));
  CHECK(o.dcqcn.byte_counter == s.network.nic.dcqcn.byte_counter);  // 0 B in the file
  CHECK(o.dcqcn.g == s.network.nic.dcqcn.g);
  CHECK(s.network.nic_overrides[0].hosts == std::vector<uint32_t>{3, 4});
  // Errors: a host the fabric lacks, an unknown key, an empty host list.
  const std::string text = R"(name: t
fidelity: packet
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
  nic_overrides:
    - {hosts: [1, 7], nic: {rx_pfc: {drain_rate: 10Gbps}}}
traffic:
  - {pattern: messages, messages: [{src: 0, dst: 1, size: 1MB}]}
)";
  CHECK(testing::scenario_error_of(text).find(
            "t.yaml:7:19: fabric.nic_overrides.0.hosts.1: expected a host number below the "
            "fabric's 4 hosts, got 7") == 0);
  CHECK(testing::scenario_error_of(testing::text_with(text, "hosts: [1, 7]", "host: [1]"))
            .find("fabric.nic_overrides.0") != std::string::npos);
  CHECK(testing::scenario_error_of(testing::text_with(text, "hosts: [1, 7]", "hosts: []"))
            .find("fabric.nic_overrides.0.hosts: expected a non-empty list") != std::string::npos);
}
