// The flow backend's congestion-control correction (FlowCcCorrection): off means bit-identical
// results; on, a contended link shares exactly efficiency(n) of its payload rate (closed form);
// NIC-only sharing is never corrected; incremental (Local) recomputation still equals a global one.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tests/fabric/flow_fixtures.hpp"

using namespace syncsim;

namespace {

constexpr double kPayloadShare = 4096.0 / (4096.0 + 64.0);

net::NetworkSpec fabric(uint32_t leaves, uint32_t hosts_per_leaf, uint32_t spines,
                        Bandwidth host_bw, Bandwidth fabric_bw, uint32_t nics = 1) {
  return topo::build_fabric(
      testing::flow_test_fabric(leaves, hosts_per_leaf, spines, host_bw, fabric_bw, nics));
}

std::vector<testing::Arrival> random_arrivals(uint64_t seed, std::size_t count, uint32_t gpus) {
  return testing::random_arrivals(seed, 11, count, gpus, 12.0, 100);
}
using testing::Arrival;
using testing::schedule_arrivals;

// Finish times (ps) of a run of `arrivals`.
std::vector<int64_t> finishes(const net::NetworkSpec& spec, const std::vector<Arrival>& arrivals,
                              FlowBackend::Recompute mode, FlowCcCorrection correction) {
  Simulation sim(1);
  FlowBackend flow(sim, spec, mode, correction);
  schedule_arrivals(sim, flow, arrivals);
  sim.queue().run();
  std::vector<int64_t> out;
  for (const auto& t : flow.transfers()) {
    REQUIRE(t.done);
    out.push_back(t.finish.picoseconds());
  }
  REQUIRE(flow.counters().bytes_delivered == flow.counters().bytes_injected);
  return out;
}

}  // namespace

TEST_CASE("flow cc correction: efficiency(n) is 1 for one flow and tends to contended_efficiency") {
  const FlowCcCorrection c{.enabled = true, .contended_efficiency = 0.8};
  CHECK(c.efficiency(1) == 1.0);
  CHECK(c.efficiency(2) == doctest::Approx(0.9));
  CHECK(c.efficiency(8) == doctest::Approx(1.0 - 0.2 * 7.0 / 8.0));
  CHECK(c.efficiency(1'000'000) == doctest::Approx(0.8).epsilon(1e-6));
  const FlowCcCorrection off{.enabled = false, .contended_efficiency = 0.5};
  CHECK(off.efficiency(8) == 1.0);
}

TEST_CASE("flow cc correction: off is bit-identical to the plain backend") {
  const auto spec = fabric(4, 4, 1, Bandwidth::gbps(100), Bandwidth::gbps(100));  // 4:1 uplinks
  const auto arrivals = random_arrivals(3, 200, static_cast<uint32_t>(spec.gpus.size()));
  for (auto mode : {FlowBackend::Recompute::Local, FlowBackend::Recompute::Global}) {
    const auto plain = finishes(spec, arrivals, mode, FlowCcCorrection{});
    // A disabled correction ignores its efficiency.
    const auto off = finishes(spec, arrivals, mode,
                              FlowCcCorrection{.enabled = false, .contended_efficiency = 0.5});
    CHECK(plain == off);
    // ...and so does the differently-corrected run differ (the comparison can fail).
    const auto on = finishes(spec, arrivals, mode,
                             FlowCcCorrection{.enabled = true, .contended_efficiency = 0.5});
    CHECK(plain != on);
  }
}

TEST_CASE(
    "flow cc correction: an N-to-1 incast drains at efficiency(N) of the link (closed form)") {
  // 9 hosts under one leaf; hosts 1..8 send to host 0: the leaf's port to host 0 is contended (its
  // flows come in over 8 different host links) and is every flow's bottleneck.
  const auto spec = fabric(1, 9, 1, Bandwidth::gbps(200), Bandwidth::gbps(200));
  const int64_t size = 10'000'000;
  const double link_Bps = 200e9 / 8 * kPayloadShare;
  for (double e : {0.9, 0.7}) {
    CAPTURE(e);
    Simulation plain_sim(1), sim(1);
    FlowBackend plain(plain_sim, spec);
    const FlowCcCorrection c{.enabled = true, .contended_efficiency = e};
    FlowBackend flow(sim, spec, FlowBackend::Recompute::Local, c);
    for (uint32_t s = 1; s <= 8; ++s) {
      plain.start(TransferRequest{s, 0, Bytes{size}, 0});
      flow.start(TransferRequest{s, 0, Bytes{size}, 0});
    }
    sim.queue().run(Time::us(1));
    const double eff = 1.0 - (1.0 - e) * (1.0 - 1.0 / 8.0);
    CHECK(flow.rate_bps(0) == doctest::Approx(link_Bps * 8 * eff / 8).epsilon(1e-12));
    plain_sim.queue().run();
    sim.queue().run();
    // time = latency + N*S/(eff*B); the plain run is latency + N*S/B, so the difference is exact.
    const double extra_s = 8.0 * static_cast<double>(size) / link_Bps * (1.0 / eff - 1.0);
    for (std::size_t i = 0; i < 8; ++i) {
      const int64_t got =
          flow.transfers()[i].finish.picoseconds() - plain.transfers()[i].finish.picoseconds();
      CHECK(std::abs(static_cast<double>(got) - extra_s * 1e12) <=
            2.0);  // ps rounding of both drains
    }
    CHECK(flow.counters().bytes_delivered == 8 * size);
  }
}

TEST_CASE("flow cc correction: sharing a NIC or a single upstream link is not corrected") {
  // Host 0 sends to hosts 1..4: its NIC uplink carries 4 flows from one source (not contended).
  // Host 5 sends twice to host 6: the leaf's port to host 6 carries 2 flows fed by one upstream
  // link of its own speed (host 5's), where no queue can build (not contended either).
  const auto spec = fabric(1, 7, 1, Bandwidth::gbps(100), Bandwidth::gbps(100));
  const FlowCcCorrection c{.enabled = true, .contended_efficiency = 0.5};
  Simulation sim(1);
  FlowBackend flow(sim, spec, FlowBackend::Recompute::Local, c);
  std::vector<TransferId> from0;
  for (uint32_t d = 1; d <= 4; ++d)
    from0.push_back(flow.start(TransferRequest{0, d, Bytes{1'000'000}, 0}));
  const TransferId b1 = flow.start(TransferRequest{5, 6, Bytes{1'000'000}, 0});
  const TransferId b2 = flow.start(TransferRequest{5, 6, Bytes{1'000'000}, 0});
  // Host 1 also sends to host 2: the leaf's port to host 2 now carries flows from two upstream
  // links (host 0's and host 1's): contended, at efficiency(2) = 1 - 0.5 * (1 - 1/2) = 0.75.
  const TransferId a = flow.start(TransferRequest{1, 2, Bytes{1'000'000}, 0});
  sim.queue().run(Time::us(1));
  const double link_bps = 100e9 * kPayloadShare;
  for (TransferId t : from0) CHECK(flow.rate_bps(t) == doctest::Approx(link_bps / 4));
  CHECK(flow.rate_bps(b1) == doctest::Approx(link_bps / 2));
  CHECK(flow.rate_bps(b2) == doctest::Approx(link_bps / 2));
  // 0 -> 2 is held at a quarter of host 0's NIC; 1 -> 2 gets the rest of the corrected port.
  CHECK(flow.rate_bps(a) == doctest::Approx(link_bps * 0.75 - link_bps / 4));
  sim.queue().run();
  CHECK(flow.counters().bytes_delivered == 7'000'000);
}

TEST_CASE("flow cc correction: an uplink is contended only when its feeders can outrun it") {
  // 100G hosts, one 400G spine uplink per leaf. k hosts of leaf 0 each send to a host of leaf 1:
  // four feed the uplink exactly (not contended: each keeps its NIC rate); five outrun it, so it
  // is contended and shares 400G * efficiency(5) five ways.
  const auto spec = fabric(2, 5, 1, Bandwidth::gbps(100), Bandwidth::gbps(400));
  const FlowCcCorrection c{.enabled = true, .contended_efficiency = 0.5};
  const double host_bps = 100e9 * kPayloadShare;
  for (uint32_t senders : {4u, 5u}) {
    CAPTURE(senders);
    Simulation sim(1);
    FlowBackend flow(sim, spec, FlowBackend::Recompute::Local, c);
    for (uint32_t s = 0; s < senders; ++s)
      flow.start(TransferRequest{s, 5 + s, Bytes{1'000'000}, 0});
    sim.queue().run(Time::us(1));
    const double expected = senders == 4 ? host_bps : 4 * host_bps * c.efficiency(5) / 5;
    for (TransferId t = 0; t < senders; ++t) CHECK(flow.rate_bps(t) == doctest::Approx(expected));
  }
}

TEST_CASE("flow cc correction: incremental recomputation equals a global one") {
  const auto spec = fabric(4, 4, 1, Bandwidth::gbps(100), Bandwidth::gbps(100), 2);
  const FlowCcCorrection c{.enabled = true, .contended_efficiency = 0.75};
  for (uint64_t seed : {1u, 2u}) {
    CAPTURE(seed);
    const auto arrivals = random_arrivals(seed, 250, static_cast<uint32_t>(spec.gpus.size()));
    Simulation sl(1);
    FlowBackend local(sl, spec, FlowBackend::Recompute::Local, c);
    schedule_arrivals(sl, local, arrivals);
    double worst = 0;
    std::size_t compared = 0;
    for (int64_t t = 0; !sl.queue().empty(); t += 2500) {
      sl.queue().run(Time::ns(t));
      const auto l = local.active_rates_bps();
      const auto g = local.global_rates_bps();
      REQUIRE(l.size() == g.size());
      for (std::size_t i = 0; i < l.size(); ++i) {
        REQUIRE(l[i].second > 0);
        worst = std::max(worst, std::abs(l[i].second - g[i].second) / g[i].second);
        ++compared;
      }
    }
    CHECK(compared > 500);
    CHECK(worst <= 1e-12);
    const auto global = finishes(spec, arrivals, FlowBackend::Recompute::Global, c);
    const auto component = finishes(spec, arrivals, FlowBackend::Recompute::Component, c);
    CHECK(global == component);
    int64_t worst_ps = 0;
    for (std::size_t i = 0; i < arrivals.size(); ++i) {
      worst_ps =
          std::max(worst_ps, std::abs(local.transfers()[i].finish.picoseconds() - global[i]));
    }
    CHECK(worst_ps <= 1);
  }
}
