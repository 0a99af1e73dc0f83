// InfiniBand credit-based flow control on the packet fabric (sim/net/ib_credits.*): lossless by
// credits where the same fabric without them drops, credits all back once idle, the idle path
// untouched by enough credits, and a link held to credits / round trip when they are short.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "sim/backends/packet_backend.hpp"
#include "sim/net/egress_port.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

struct IncastRun {
  net::NetworkCounters counters;
  std::vector<Time> finish;
  uint64_t credits_missing = 0;  // blocks not back at their senders once the run is over
  uint32_t ib_ports = 0;
};

// 15 senders of 600 KB into host 0 on one leaf (and a spine) with a 4 MiB switch buffer: 9 MB
// arrive for a buffer half that size. Auto credits: 4 MiB over 17 ports and 8 VLs, 30.8 KB per
// VL, just above the 29.2 KB credit round trip of a 100G port with 1 us cables.
IncastRun incast(net::LinkLayer layer, bool go_back_n = true, uint64_t seed = 1) {
  auto p = testing::spine_leaf_100g(1, 16, 1, Bytes{4 << 20});
  auto spec = topo::build_fabric(p);
  spec.link_layer = layer;
  spec.transport.gbn.enabled = go_back_n;
  Simulation sim(seed);
  PacketBackend backend(sim, spec);
  for (uint32_t s = 1; s < 16; ++s) backend.start(TransferRequest{s, 0, Bytes{600'000}, 3});
  sim.queue().run();
  IncastRun r;
  r.counters = backend.network().counters();
  for (const auto& t : backend.transfers()) r.finish.push_back(t.done ? t.finish : Time::max());
  const net::Network& net = backend.network();
  for (net::PortId port = 0; port < net.port_count(); ++port) {
    const net::IbCreditState& c = net.port(port).ib_credits();
    if (!c.enabled) continue;
    ++r.ib_ports;
    for (int64_t held : c.blocks) r.credits_missing += static_cast<uint64_t>(c.advertised - held);
  }
  return r;
}

}  // namespace

TEST_CASE("infiniband: an incast that drops without flow control is lossless with credits") {
  const IncastRun roce = incast(net::LinkLayer::Roce, /*go_back_n=*/false);
  CHECK(roce.counters.bytes_dropped > 0);

  const IncastRun ib = incast(net::LinkLayer::Infiniband);
  CHECK(ib.ib_ports == 34);  // 16 host cables and the leaf-spine cable, both directions
  CHECK(ib.counters.bytes_dropped == 0);
  CHECK(ib.counters.pause_frames == 0);
  CHECK(ib.counters.bytes_delivered == 15 * 600'000);
  CHECK(ib.counters.retransmitted_packets == 0);
  for (Time t : ib.finish) CHECK(t < Time::max());
  // Every credit is back at its sender once nothing is left in flight.
  CHECK(ib.credits_missing == 0);
  // The receiver's link is the bottleneck: the incast takes the payload at its rate.
  const Time last = *std::max_element(ib.finish.begin(), ib.finish.end());
  const double goodput = 15 * 600'000 * 8.0 / last.seconds();
  CHECK(goodput == doctest::Approx(100e9 * 4096.0 / 4160.0).epsilon(0.02));
  // The switch never holds more than its buffer: credits were advertised out of it.
  CHECK(ib.counters.max_queue_bytes <= 4 << 20);

  // Same seed, same result, to the picosecond.
  const IncastRun again = incast(net::LinkLayer::Infiniband);
  CHECK(again.finish == ib.finish);
}

TEST_CASE("infiniband: enough credits leave an idle path at its store-and-forward time") {
  auto p = testing::spine_leaf_100g(2, 1, 1);
  p.links.host.delay = Time::ns(200);
  p.links.fabric.delay = Time::ns(200);
  for (const net::LinkLayer layer : {net::LinkLayer::Roce, net::LinkLayer::Infiniband}) {
    CAPTURE(static_cast<int>(layer));
    auto spec = topo::build_fabric(p);
    spec.link_layer = layer;
    Simulation sim(1);
    PacketBackend backend(sim, spec);
    backend.start(TransferRequest{0, 1, Bytes{1'000'000}, 0});
    sim.queue().run();
    REQUIRE(backend.transfers()[0].done);
    const Bandwidth b = Bandwidth::gbps(100);
    const int64_t packets = (1'000'000 + 4095) / 4096;
    const int64_t last = 1'000'000 - (packets - 1) * 4096;
    const Time expected = b.tx_time(Bytes{4160}) * 3 + b.tx_time(Bytes{4160}) * (packets - 1) +
                          b.tx_time(Bytes{last + 64}) + Time::ns(200) * 4;
    CHECK(backend.transfers()[0].finish == expected);
  }
}

TEST_CASE("infiniband: a VL with fewer credits than the round trip runs at credits / round trip") {
  // One host-to-host flow across one leaf, 2 us cables: a credit returns 4 us + one packet time
  // after it was spent. 8 KiB of credits per VL hold one 4160 B packet at a time (two would need
  // 8320 B), so each hop sends one packet per round trip.
  auto p = testing::spine_leaf_100g(1, 2, 1);
  p.links.host.delay = Time::us(2);
  auto spec = topo::build_fabric(p);
  spec.link_layer = net::LinkLayer::Infiniband;
  spec.infiniband.vl_buffer_auto = false;
  spec.infiniband.vl_buffer = Bytes{8 * 1024};
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  const int64_t packets = 100;
  backend.start(TransferRequest{0, 1, Bytes{packets * 4096}, 0});
  sim.queue().run();
  REQUIRE(backend.transfers()[0].done);
  const Time tx = Bandwidth::gbps(100).tx_time(Bytes{4160});
  // The NIC sends a packet every tx + 2 x 2 us (its switch frees the buffer as the packet leaves,
  // one tx later; the credit travels back 2 us). Not the line rate: tx alone is 333 ns.
  const Time period = tx * 2 + Time::us(4);
  const Time finish = backend.transfers()[0].finish;
  CHECK(finish >= period * (packets - 1));
  CHECK(finish <= period * (packets + 1));
  // The configuration check says so before the run.
  const auto& findings = backend.network().findings();
  CHECK(std::any_of(findings.begin(), findings.end(), [](const net::ConfigurationFinding& f) {
    return f.kind == net::ConfigurationFindingKind::IbCreditsBelowBdp && f.link_class == "host";
  }));
}
