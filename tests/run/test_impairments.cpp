// Link impairments (docs/model.md, "Perturbations"): per-link latency jitter and random loss.
#include <doctest/doctest.h>

#include <string>

#include "tests/run/lossy_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::lossy_test;

TEST_CASE("impairments: zero jitter reproduces the baseline exactly") {
  const std::string yaml = incast_yaml(8, "200KB", "64MiB", 0, "");
  const app::RunResult base = run_yaml(yaml);
  for (const char* dist : {"normal", "exponential"}) {
    CAPTURE(dist);
    const app::RunResult zero = run_yaml(
        yaml, {app::parse_override(std::string("fabric.impairments.jitter.distribution=") + dist),
               app::parse_override("fabric.impairments.jitter.mean=0ns")});
    CHECK(zero.fct_by_message_s == base.fct_by_message_s);
    CHECK(zero.events == base.events);
    CHECK(zero.counters.packet_hops == base.counters.packet_hops);
  }
}

TEST_CASE("impairments: jitter delays packets but a link never reorders them") {
  // Go-back-N NAKs any reordering, so zero NAKs and zero discarded bytes under heavy jitter show
  // the FIFO order held on every link. Paired: the jittered run does take longer.
  const std::string yaml = incast_yaml(1, "1MB", "64MiB", 0, "");
  const app::RunResult base = run_yaml(yaml);
  const app::RunResult jittered =
      run_yaml(yaml, {app::parse_override("fabric.impairments.jitter.distribution=normal"),
                      app::parse_override("fabric.impairments.jitter.mean_fraction=0.5"),
                      app::parse_override("fabric.impairments.jitter.stddev_fraction=2")});
  CHECK(jittered.acks > 0);
  CHECK(jittered.naks == 0);
  CHECK(jittered.bytes_discarded == 0);
  CHECK(jittered.retransmitted_packets == 0);
  CHECK(jittered.fct.max_s > base.fct.max_s);
  // Exponential jitter is never negative: it only delays.
  const app::RunResult expo =
      run_yaml(yaml, {app::parse_override("fabric.impairments.jitter.distribution=exponential"),
                      app::parse_override("fabric.impairments.jitter.mean=200ns")});
  CHECK(expo.naks == 0);
  CHECK(expo.fct.max_s > base.fct.max_s);
  // Four links on the path: the extra delay of the last packet is at most a few means per hop
  // beyond the baseline, far below a microsecond-scale blow-up.
  CHECK(expo.fct.max_s < base.fct.max_s + 20e-6);
}

TEST_CASE("impairments: random loss on a lossy class is repaired, bytes conserved, deterministic") {
  const std::string yaml = incast_yaml(4, "500KB", "64MiB", 0, "  impairments: {loss: 0.002}\n");
  const app::RunResult clean = run_yaml(yaml, {app::parse_override("fabric.impairments.loss=0")});
  CHECK(clean.retransmitted_packets == 0);
  for (const char* transport : {"roce", "tcp"}) {
    CAPTURE(transport);
    const auto o = app::parse_override(std::string("fabric.transport.kind=") + transport);
    const app::RunResult a = run_yaml(yaml, {o});
    CHECK(drops_of(a, "link_loss") > 0);
    CHECK(a.retransmitted_packets > 0);
    CHECK(a.messages_completed == 4);
    CHECK(a.counters.bytes_delivered == 4 * 500'000);
    CHECK(a.counters.bytes_injected ==
          a.counters.bytes_delivered + a.counters.bytes_dropped + a.bytes_discarded);
    const app::RunResult b = run_yaml(yaml, {o});
    CHECK(a.fct_by_message_s == b.fct_by_message_s);
    CHECK(a.retransmitted_packets == b.retransmitted_packets);
  }
}

TEST_CASE("impairments: a PFC-lossless class is never randomly lost") {
  const std::string yaml = incast_yaml(4, "500KB", "64MiB", 3,
                                       "    pfc: {enabled: true, lossless_priorities: [3]}\n"
                                       "  impairments: {loss: 0.01}\n");
  const app::RunResult lossless = run_yaml(yaml);
  CHECK(drops_of(lossless, "link_loss") == 0);
  CHECK(lossless.messages_completed == 4);
  // Paired: the same traffic on lossy priority 0 does lose packets.
  const std::string lossy_yaml = incast_yaml(4, "500KB", "64MiB", 0,
                                             "    pfc: {enabled: true, lossless_priorities: [3]}\n"
                                             "  impairments: {loss: 0.01}\n");
  CHECK(drops_of(run_yaml(lossy_yaml), "link_loss") > 0);
}

TEST_CASE("impairments: bad YAML names the key") {
  const std::string yaml = incast_yaml(1, "1KB", "1MiB", 0, "  impairments: {loss: 1.5}\n");
  CHECK_THROWS_WITH_AS(run_yaml(yaml), doctest::Contains("fabric.impairments.loss"),
                       app::ScenarioError);
  const std::string expo = incast_yaml(
      1, "1KB", "1MiB", 0, "  impairments: {jitter: {distribution: exponential, stddev: 1ns}}\n");
  CHECK_THROWS_AS(run_yaml(expo), app::ScenarioError);
  const std::string cls = incast_yaml(1, "1KB", "1MiB", 0, "  impairments: {links: [hosts]}\n");
  CHECK_THROWS_WITH_AS(run_yaml(cls), doctest::Contains("fabric.impairments.links.0"),
                       app::ScenarioError);
}
