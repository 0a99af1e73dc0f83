// Timed faults on the packet network (sim/net/network_faults.hpp): each case an oracle.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "fault_fixture.hpp"
#include "sim/backends/flow_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "sim/net/egress_port.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using testing::link_fault;

namespace {

// Every data byte is delivered, dropped or discarded once the network has drained.
void check_conserved(const net::NetworkCounters& c) {
  CHECK(c.bytes_injected == c.bytes_delivered + c.bytes_dropped + c.bytes_discarded);
}

// The cable a transfer's packets cross on hop `hop` (0: its NIC's own).
uint32_t link_on_route(const PacketBackend& b, net::FlowId flow, std::size_t hop) {
  return b.network().route_of(flow)[hop] / 2;
}

}  // namespace

TEST_CASE("faults: a link at 25% of its speed carries 25% (one flow takes 4x as long)") {
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 1, 1));
  const Bytes size{16'000'000};
  auto run = [&](bool degraded) {
    Simulation sim(1);
    PacketBackend b(sim, spec);
    b.start(TransferRequest{0, 1, size, 0});
    if (degraded) {
      // The spine -> leaf1 cable, from the start.
      b.schedule_faults(
          {link_fault(Time::zero(), net::NetFaultKind::LinkRate, link_on_route(b, 0, 2), 0.25)},
          {});
    }
    sim.queue().run();
    REQUIRE(b.transfers()[0].done);
    check_conserved(b.counters());
    return b.transfers()[0].finish.seconds();
  };
  const double full = run(false);
  const double quarter = run(true);
  // Four hops of 1 us and the pipeline are the same few us on both; the drain is 4x.
  CHECK(quarter / full == doctest::Approx(4.0).epsilon(0.01));
}

TEST_CASE("faults: a link going down mid-transfer: go-back-N resends after convergence") {
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 1, 2));
  const Time down_at = Time::us(100);
  const Time convergence = Time::us(50);
  Simulation sim(1);
  PacketBackend b(sim, spec);
  b.start(TransferRequest{0, 1, Bytes{4'000'000}, 0});  // ~330 us at 100G
  const uint32_t spine_link = link_on_route(b, 0, 2);
  b.schedule_faults({link_fault(down_at, net::NetFaultKind::LinkDown, spine_link)}, {convergence});
  sim.queue().run();
  const net::NetworkCounters& c = b.counters();
  REQUIRE(b.transfers()[0].done);
  CHECK(c.dropped(net::DropReason::LinkDown) > 0);
  // What was lost (in flight, queued, and sent onto the dead link until convergence) was resent.
  CHECK(c.retransmitted_bytes >= c.bytes_dropped);
  CHECK(c.bytes_delivered == 4'000'000);
  check_conserved(c);
  CHECK(c.route_convergences == 1);
  CHECK(c.flows_rerouted == 1);
  // The new route avoids the dead cable; the message finished after routing converged.
  const auto route = b.network().route_of(0);
  CHECK(
      std::none_of(route.begin(), route.end(), [&](net::PortId p) { return p / 2 == spine_link; }));
  CHECK(b.transfers()[0].finish > down_at + convergence);
}

TEST_CASE("faults: a lossless flow losing packets to a failure is counted, not silent") {
  auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 1, 2));
  spec.pfc.enabled = true;  // priority 3 lossless
  for (bool recovery : {false, true}) {
    CAPTURE(recovery);
    spec.transport.gbn.lossless = recovery;
    Simulation sim(1);
    PacketBackend b(sim, spec);
    b.start(TransferRequest{0, 1, Bytes{4'000'000}, 3});
    b.schedule_faults(
        {link_fault(Time::us(100), net::NetFaultKind::LinkDown, link_on_route(b, 0, 2))},
        {Time::us(50)});
    sim.queue().run();
    const net::NetworkCounters& c = b.counters();
    CHECK(c.lossless_packets_lost > 0);
    CHECK(c.lossless_bytes_lost == c.bytes_dropped);
    check_conserved(c);
    // Without RC recovery the lost bytes never come; with it, the NAK of the first packet after
    // the reroute brings them.
    CHECK(b.transfers()[0].done == recovery);
  }
}

TEST_CASE("faults: a switch going down: flows reroute around it and nothing touches it after") {
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 2, 2));
  net::NodeId spine = net::kNoNode;
  for (net::NodeId n = 0; n < spec.nodes.size(); ++n) {
    if (spec.nodes[n].name == "spine0") spine = n;
  }
  REQUIRE(spine != net::kNoNode);
  net::NetFault f;
  f.at = Time::us(50);
  f.kind = net::NetFaultKind::LinkDown;
  for (uint32_t l = 0; l < spec.links.size(); ++l) {
    if (spec.links[l].a == spine || spec.links[l].b == spine) f.links.push_back(l);
  }
  REQUIRE(f.links.size() == 2);
  Simulation sim(3);
  PacketBackend b(sim, spec);
  // Every host to every host on the other leaf, both ways: some of them hash onto spine0.
  for (uint32_t s = 0; s < 4; ++s) {
    for (uint32_t d = 0; d < 4; ++d) {
      if (s / 2 != d / 2) b.start(TransferRequest{s, d, Bytes{2'000'000}, 0});
    }
  }
  b.schedule_faults({f}, {Time::us(20)});
  sim.queue().run();
  const net::NetworkCounters& c = b.counters();
  CHECK(c.flows_rerouted > 0);
  for (net::FlowId id = 0; id < b.network().flow_count(); ++id) {
    CHECK(b.transfers()[id].done);
    for (net::PortId p : b.network().route_of(id)) {
      CHECK(b.network().routing().ports()[p].owner != spine);
      CHECK(b.network().routing().ports()[p].peer != spine);
    }
  }
  // The spine's own ports hold nothing and sent nothing after it went down.
  for (net::PortId p = 0; p < b.network().port_count(); ++p) {
    if (b.network().routing().ports()[p].owner == spine) {
      CHECK(b.network().port(p).queued_bytes() == 0);
      CHECK(b.network().port(p).down());
    }
  }
  check_conserved(c);
}

TEST_CASE("faults: a PFC storm pauses the upstream queue; the watchdog catches it") {
  // A 4 MiB buffer: the dynamic XOFF (1/8 of the free buffer) is reached within the storm.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 1, 1, Bytes{4 << 20}));
  spec.pfc.enabled = true;
  const net::NodeId nic = spec.gpus[1].nic;
  net::NetFault start;
  start.at = Time::us(20);
  start.kind = net::NetFaultKind::PfcStormStart;
  start.nic = nic;
  start.priority = 3;
  net::NetFault end = start;
  end.at = Time::us(520);
  end.kind = net::NetFaultKind::PfcStormEnd;
  auto run = [&](bool storm, bool watchdog) {
    spec.pfc.watchdog = watchdog;
    spec.pfc.watchdog_time = Time::us(100);
    Simulation sim(1);
    PacketBackend b(sim, spec);
    b.start(TransferRequest{0, 1, Bytes{2'000'000}, 3});
    if (storm) b.schedule_faults({start, end}, {});
    sim.queue().run();
    check_conserved(b.counters());
    struct Out {
      double finish_s;
      uint64_t pauses;
      uint64_t watchdog_drops;
      double paused_s;
    };
    double paused = 0;
    for (net::PortId p = 0; p < b.network().port_count(); ++p) {
      paused += b.network().port(p).paused_time(sim.now()).seconds();
    }
    return Out{b.transfers()[0].finish.seconds(), b.counters().pause_frames,
               b.counters().dropped(net::DropReason::PfcWatchdog), paused};
  };
  const auto clean = run(false, false);
  const auto stormed = run(true, false);
  // The leaf's port to the NIC stood paused for the storm's 500 us, the leaf's buffer filled past
  // XOFF and it paused the spine, which paused the sender's leaf: the message waits out the storm.
  CHECK(clean.pauses == 0);
  CHECK(stormed.pauses > 0);
  CHECK(stormed.paused_s >= 500e-6);
  CHECK(stormed.finish_s >= clean.finish_s + 400e-6);
  CHECK(stormed.watchdog_drops == 0);
  // With the watchdog on, the leaf's port stops honouring the pause after 100 us and drops.
  const auto watched = run(true, true);
  CHECK(watched.watchdog_drops > 0);
}

TEST_CASE("faults: same seed, same faults, identical results") {
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 2, 2));
  auto run = [&] {
    Simulation sim(7);
    PacketBackend b(sim, spec);
    for (uint32_t s = 0; s < 2; ++s) b.start(TransferRequest{s, s + 2, Bytes{1'000'000}, 0});
    b.schedule_faults(
        {link_fault(Time::us(30), net::NetFaultKind::LinkDown, link_on_route(b, 0, 2)),
         link_fault(Time::us(90), net::NetFaultKind::LinkUp, link_on_route(b, 0, 2))},
        {Time::us(10)});
    sim.queue().run();
    std::vector<int64_t> out{static_cast<int64_t>(sim.queue().executed()),
                             b.counters().bytes_dropped, b.counters().bytes_injected};
    for (const TransferRecord& t : b.transfers()) out.push_back(t.finish.picoseconds());
    return out;
  };
  CHECK(run() == run());
}

TEST_CASE(
    "faults: flow level: a 25% link takes 4x, a dead link stalls its flow until convergence") {
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 1, 2));
  // Find the spine the flow uses from the packet model's route (the same ECMP function).
  Simulation probe_sim(1);
  PacketBackend probe(probe_sim, spec);
  probe.start(TransferRequest{0, 1, Bytes{16'000'000}, 0});
  const uint32_t cable = link_on_route(probe, 0, 2);
  auto timed = [&](const std::vector<net::NetFault>& faults) {
    Simulation sim(1);
    FlowBackend b(sim, spec);
    b.start(TransferRequest{0, 1, Bytes{16'000'000}, 0});
    if (!faults.empty()) b.schedule_faults(faults, {Time::us(50)});
    sim.queue().run();
    REQUIRE(b.transfers()[0].done);
    CHECK(b.counters().bytes_delivered == 16'000'000);
    return std::make_pair(b.transfers()[0].finish.seconds(), b.counters());
  };
  const double full = timed({}).first;
  const double quarter =
      timed({link_fault(Time::zero(), net::NetFaultKind::LinkRate, cable, 0.25)}).first;
  CHECK(quarter / full == doctest::Approx(4.0).epsilon(0.01));
  // Down at 100 us: stalled for the 50 us of convergence, then on the other spine at full rate.
  const auto [down, counters] =
      timed({link_fault(Time::us(100), net::NetFaultKind::LinkDown, cable)});
  CHECK(down == doctest::Approx(full + 50e-6).epsilon(1e-4));
  CHECK(counters.flows_rerouted == 1);
  CHECK(counters.route_convergences == 1);
}

TEST_CASE("faults: flow level: a connection's next message takes the path and rate a fault left") {
  // The flow backend keeps each queue pair's route and its timing for the connection's next
  // message; a fault voids them. Message B on connection 0 after message A and a fault must take
  // exactly as long as B alone on a fabric where the fault happened before anything was sent.
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 1, 2));
  Simulation probe_sim(1);
  PacketBackend probe(probe_sim, spec);
  probe.start(TransferRequest{0, 1, Bytes{64'000}, 0, 0});
  const uint32_t cable = link_on_route(probe, 0, 2);  // the connection's spine, as ECMP picks it
  // B's duration: B starts at 1 ms, the fault at 100 us, routing converges at 150 us; when `first`,
  // message A at 0 and A2 at 120 us (after the fault, before the convergence) go first.
  auto b_duration = [&](bool first, const net::NetFault& fault) {
    Simulation sim(1);
    FlowBackend b(sim, spec);
    if (first) {
      b.start(TransferRequest{0, 1, Bytes{64'000}, 0, 0});
      sim.queue().schedule_fn(Time::us(120), [&b] {
        b.start(TransferRequest{0, 1, Bytes{64'000}, 0, 0});
      });
    }
    b.schedule_faults({fault}, {Time::us(50)});
    sim.queue().schedule_fn(Time::ms(1), [&b] {
      b.start(TransferRequest{0, 1, Bytes{64'000}, 0, 0});
    });
    sim.queue().run();
    const TransferRecord& last = b.transfers().back();
    REQUIRE(last.done);
    return (last.finish - last.start).picoseconds();
  };
  // A quarter of the rate on the connection's spine: B drains 4x as long, and pays no pipeline
  // latency beyond its drain (a stale timing would add the full-rate one).
  const net::NetFault slow = link_fault(Time::us(100), net::NetFaultKind::LinkRate, cable, 0.25);
  CHECK(b_duration(true, slow) == b_duration(false, slow));
  // The spine's cable down and routing converged: B goes over the other spine (a route cached
  // before the convergence, by A or A2, would leave it stalled on the dead cable for good).
  const net::NetFault down = link_fault(Time::us(100), net::NetFaultKind::LinkDown, cable);
  CHECK(b_duration(true, down) == b_duration(false, down));
}

TEST_CASE("faults: a NIC down for a while: its flow waits without a route, then completes") {
  // nic_down is its one cable going down (run/fault_run.cpp); with a duration, up again later.
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(2, 1, 2));
  const Time down_at = Time::us(100);
  const Time up_at = Time::us(400);
  const Time convergence = Time::us(50);
  Simulation sim(1);
  PacketBackend b(sim, spec);
  b.start(TransferRequest{0, 1, Bytes{4'000'000}, 0});  // ~330 us at 100G alone
  const uint32_t nic_link = link_on_route(b, 0, 0);     // the source NIC's own cable
  b.schedule_faults({link_fault(down_at, net::NetFaultKind::LinkDown, nic_link),
                     link_fault(up_at, net::NetFaultKind::LinkUp, nic_link)},
                    {convergence});
  sim.queue().run();
  const net::NetworkCounters& c = b.counters();
  REQUIRE(b.transfers()[0].done);
  // No path exists while the NIC is down: the flow was parked, not rerouted.
  CHECK(c.flows_unroutable >= 1);
  CHECK(c.dropped(net::DropReason::LinkDown) > 0);
  CHECK(c.bytes_delivered == 4'000'000);
  check_conserved(c);
  // It finished only after the NIC came back and routing converged again.
  CHECK(b.transfers()[0].finish > up_at + convergence);
}
