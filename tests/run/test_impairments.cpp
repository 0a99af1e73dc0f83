// Link impairments (docs/model.md, "Perturbations"): per-link latency jitter and random loss.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "sim/core/simulation.hpp"
#include "sim/net/link_impairment.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/packet.hpp"
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

TEST_CASE("impairments: normal jitter never takes a link below its least delay") {
  // The least delay is the delay plus mean - 6 stddev (never below zero): what a windowed run may
  // look ahead over the link (fabric_partition.hpp). 200,000 draws reach about -4.5 stddev; a rule
  // cut nearer the mean than the draws go would fail here.
  net::LinkParams link{.name = "fabric", .delay = Time::us(1)};
  net::ImpairmentParams imp;
  imp.jitter = net::JitterDistribution::Normal;
  imp.jitter_stddev = Time::ns(100);
  CHECK(imp.least_delay(link) == Time::ns(400));
  imp.jitter_mean_fraction = 0.1;  // 100 ns
  CHECK(imp.least_delay(link) == Time::ns(500));
  imp.jitter_stddev = Time::ns(400);  // 1 us + 100 ns - 2.4 us: clipped at zero
  CHECK(imp.least_delay(link) == Time::zero());
  imp.jitter_stddev = Time::ns(100);
  // Classes left alone, and exponential jitter, keep the delay.
  net::LinkParams nvlink{.name = "nvlink", .delay = Time::ns(100)};
  CHECK(imp.least_delay(nvlink) == Time::ns(100));
  net::ImpairmentParams expo = imp;
  expo.jitter = net::JitterDistribution::Exponential;
  CHECK(expo.least_delay(link) == Time::us(1));

  Simulation sim(5);
  auto impairment = net::LinkImpairment::make(imp, link, 0, sim, 3);
  REQUIRE(impairment != nullptr);
  net::Packet p{};
  p.kind = net::PacketKind::Data;
  int64_t least_ps = INT64_MAX;
  int64_t below_mean = 0;
  int64_t lost = 0;
  // Packets 1 us apart, so the link's FIFO never holds one back.
  for (int64_t i = 0; i < 200'000; ++i) {
    const Time now = Time::us(i);
    Time arrival = now + link.delay;
    if (!impairment->apply(p, now, arrival)) ++lost;
    const int64_t delay_ps = (arrival - now).picoseconds();
    least_ps = std::min(least_ps, delay_ps);
    if (delay_ps < 1'100'000) ++below_mean;
  }
  CHECK(lost == 0);
  CHECK(least_ps >= imp.least_delay(link).picoseconds());
  CHECK(least_ps < 1'100'000 - 400'000);  // the draws do reach past 4 stddev below the mean
  CHECK(below_mean > 99'000);             // and the normal is centred on its mean
  CHECK(below_mean < 101'000);
}
