// Packet-level fabric against closed forms and invariants.
#include <doctest/doctest.h>

#include <algorithm>
#include <vector>

#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

topo::FabricParams small_spine_leaf(uint32_t leaves, uint32_t hosts_per_leaf, uint32_t spines) {
  return testing::spine_leaf_100g(leaves, hosts_per_leaf, spines);
}

}  // namespace

TEST_CASE(
    "network: one message over an idle multi-hop path matches the store-and-forward closed form") {
  const auto spec = topo::build_fabric(small_spine_leaf(2, 1, 1));
  const Bandwidth b = Bandwidth::gbps(100);
  const Time delay = Time::us(1);
  const int64_t hops = 4;  // NIC -> leaf0 -> spine -> leaf1 -> NIC

  for (int64_t size : {int64_t{1}, int64_t{4096}, int64_t{100'000}, int64_t{16'000'000}}) {
    CAPTURE(size);
    Simulation sim(1);
    PacketBackend backend(sim, spec);
    backend.start(TransferRequest{0, 1, Bytes{size}, 0});
    sim.queue().run();
    REQUIRE(backend.transfers()[0].done);
    const Time measured = backend.transfers()[0].finish;

    // Closed form, written independently of the backends: every link is equal, so packets leave
    // the source back to back; the last one then waits behind its full-size predecessor at every
    // later hop (store-and-forward), and propagation adds once per hop.
    const int64_t mtu = 4096, header = 64;
    const int64_t packets = (size + mtu - 1) / mtu;
    const int64_t last = size - (packets - 1) * mtu;
    const Time tx_full = b.tx_time(Bytes{mtu + header});
    const Time tx_last = b.tx_time(Bytes{last + header});
    const Time tx_first = packets == 1 ? tx_last : tx_full;
    const Time expected = tx_first * (hops - 1) + tx_full * (packets - 1) + tx_last + delay * hops;
    const Time one_packet = tx_full;
    CHECK(measured >= expected - one_packet);
    CHECK(measured <= expected + one_packet);
    CHECK(measured == expected);  // exact on an idle path

    Simulation sim2(1);
    AnalyticBackend analytic(sim2, spec);
    analytic.start(TransferRequest{0, 1, Bytes{size}, 0});
    sim2.queue().run();
    CHECK(analytic.transfers()[0].finish == expected);
  }
}

TEST_CASE("network: a faster bottleneck-free path is timed by its slowest link") {
  // Host links 100G, fabric 400G: the 100G hops dominate; analytic and packet agree exactly.
  auto p = small_spine_leaf(2, 1, 1);
  p.links.fabric.bandwidth = Bandwidth::gbps(400);
  const auto spec = topo::build_fabric(p);
  Simulation s1(1), s2(1);
  PacketBackend packet(s1, spec);
  AnalyticBackend analytic(s2, spec);
  packet.start(TransferRequest{0, 1, Bytes{1'000'000}, 0});
  analytic.start(TransferRequest{0, 1, Bytes{1'000'000}, 0});
  s1.queue().run();
  s2.queue().run();
  CHECK(packet.transfers()[0].finish == analytic.transfers()[0].finish);
  const double bytes_time = 1'000'000.0 * (4096.0 + 64.0) / 4096.0 * 8 / 100e9;
  CHECK(packet.transfers()[0].finish.seconds() == doctest::Approx(bytes_time).epsilon(0.01));
}

TEST_CASE("network: incast N -> 1 delivers at the receiver's link rate") {
  // Senders 1..7 share the receiver's leaf; 8..15 arrive through the two spines.
  for (uint32_t senders : {2u, 7u, 15u}) {
    CAPTURE(senders);
    const auto spec = topo::build_fabric(small_spine_leaf(2, 8, 2));
    Simulation sim(1);
    PacketBackend backend(sim, spec);
    const int64_t size = 2'000'000;
    for (uint32_t s = 1; s <= senders; ++s) {
      backend.start(TransferRequest{s, 0, Bytes{size}, 0});
    }
    sim.queue().run();
    const auto& c = backend.counters();
    REQUIRE(c.bytes_dropped == 0);
    REQUIRE(c.bytes_delivered == size * senders);
    Time first_finish = Time::max(), last_finish = Time::zero();
    for (const auto& t : backend.transfers()) {
      first_finish = std::min(first_finish, t.finish);
      last_finish = std::max(last_finish, t.finish);
    }
    // Goodput over the whole incast (start at 0): payload share of the 100G wire rate.
    const double goodput = static_cast<double>(c.bytes_delivered) * 8 / last_finish.seconds();
    const double expected = 100e9 * 4096.0 / (4096.0 + 64.0);
    CHECK(goodput == doctest::Approx(expected).epsilon(0.02));
    CHECK(goodput <= expected * 1.0001);  // never faster than the wire
    if (senders <= 7) {
      // One input port per sender and a FIFO at the bottleneck: senders finish close together.
      CHECK((last_finish - first_finish).seconds() < 0.1 * last_finish.seconds());
    } else {
      // The FIFO shares the bottleneck per input port, not per flow: four flows behind one
      // spine port get a quarter of a local sender's rate, so remote senders finish last.
      CHECK((last_finish - first_finish).seconds() > 0.3 * last_finish.seconds());
    }
    CHECK(c.max_queue_bytes > 0);
  }
}

TEST_CASE("network: a small buffer tail-drops and bytes are conserved") {
  auto p = small_spine_leaf(1, 16, 1);
  p.switch_params.buffer = Bytes{64 * 1024};
  const auto spec = topo::build_fabric(p);
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  for (uint32_t s = 1; s < 16; ++s) backend.start(TransferRequest{s, 0, Bytes{500'000}, 0});
  sim.queue().run();
  const auto c = backend.counters();
  CHECK(c.bytes_dropped > 0);
  // Lossy RoCE runs go-back-N: every message completes, retransmissions count as injected, and
  // out-of-order arrivals are discarded at the receiver.
  const auto& nc = backend.network().counters();
  CHECK(nc.flows_completed == 15);
  CHECK(nc.retransmitted_packets > 0);
  CHECK(c.bytes_delivered == 15 * 500'000);
  CHECK(c.bytes_injected == c.bytes_delivered + c.bytes_dropped + nc.bytes_discarded);
  CHECK(backend.network().packets_in_flight() == 0);
  CHECK(c.max_queue_bytes <= 64 * 1024 + 4160);
}

TEST_CASE("network: ECMP spreads flows, and the hash seed changes the choices") {
  auto spines_for = [](uint64_t seed) {
    auto p = small_spine_leaf(2, 16, 4);
    p.ecmp_hash_seed = seed;
    const auto spec = topo::build_fabric(p);
    Simulation sim(1);
    PacketBackend backend(sim, spec);
    for (uint32_t h = 0; h < 16; ++h) backend.start(TransferRequest{h, 16 + h, Bytes{4096}, 0});
    sim.queue().run();
    const auto& net = backend.network();
    std::vector<net::NodeId> spine_of_flow;
    for (net::FlowId f = 0; f < net.flow_count(); ++f) {
      const auto route = net.route_of(f);
      REQUIRE(route.size() == 4);
      // Hop 1 leaves the source leaf towards a spine.
      spine_of_flow.push_back(net.routing().ports()[route[1]].peer);
    }
    return spine_of_flow;
  };
  const auto a = spines_for(1);
  CHECK(a == spines_for(1));
  std::vector<net::NodeId> distinct = a;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  CHECK(distinct.size() >= 2);
  bool some_seed_differs = false;
  for (uint64_t seed = 2; seed < 6; ++seed) some_seed_differs |= spines_for(seed) != a;
  CHECK(some_seed_differs);
}
