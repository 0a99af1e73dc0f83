// Persistent queue pairs: the ECMP hash and the DCQCN state of a connection outlive its messages
// (sim/backends/queue_pairs.hpp); transfers without a connection keep a QP of their own.
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/backends/flow_backend.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "sim/backends/queue_pairs.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

topo::FabricParams spine_leaf(uint32_t leaves, uint32_t hosts_per_leaf, uint32_t spines) {
  return testing::spine_leaf_100g(leaves, hosts_per_leaf, spines, Bytes{16 << 20});
}

// The spine a flow crosses (its second egress port: leaf -> spine).
net::PortId uplink(const net::Network& n, net::FlowId f) { return n.route_of(f).at(1); }

}  // namespace

TEST_CASE("queue pairs: one number per (NICs, priority, connection), fresh ones otherwise") {
  QueuePairTable t;
  const QueuePair a = t.resolve(7, 1, 2, 3, 0);
  CHECK(a.persistent);
  CHECK(t.resolve(8, 1, 2, 3, 0).number == a.number);  // a later transfer, same connection
  CHECK(t.resolve(9, 1, 2, 3, 1).number != a.number);  // another channel
  CHECK(t.resolve(9, 2, 1, 3, 0).number != a.number);  // the reverse direction
  CHECK(t.resolve(9, 1, 2, 0, 0).number != a.number);  // another traffic class
  CHECK(t.persistent_count() == 4);
  // The connection tag keeps all 32 bits (a communicator in the high half): another communicator
  // on the same channel is another queue pair.
  CHECK(t.resolve(9, 1, 2, 3, (1U << 16) | 0U).number != a.number);
  CHECK(t.resolve(9, 1, 2, 3, (1U << 16) | 0U).number == t.resolve(10, 1, 2, 3, 1U << 16).number);
  CHECK(t.persistent_count() == 5);
  const QueuePair own = t.resolve(42, 1, 2, 3, kNoConnection);
  CHECK_FALSE(own.persistent);
  CHECK(own.number == 42);  // the transfer id, as before persistent QPs existed
  CHECK(t.persistent_count() == 5);
  // Persistent numbers are 2^31 + a dense index in the order first resolved: the flow backend keeps
  // its send queues in an array indexed by it.
  CHECK(persistent_index(a.number) == 0);
  CHECK(persistent_index(t.resolve(11, 1, 2, 3, 1).number) == 1);
  CHECK(persistent_index(t.resolve(12, 7, 8, 0, 0).number) == 5);
}

TEST_CASE("queue pairs: the flow backend drains a queue pair's transfers one after another") {
  // 100 connections from GPU 0 to GPU 1, one 64 KB transfer each, and a second transfer on
  // connection 99: the first 100 share the NIC and end together; the second on 99 waits for its
  // queue pair's first and then drains alone at the link's payload rate.
  const auto spec = topo::build_fabric(spine_leaf(2, 1, 1));
  Simulation sim(1);
  FlowBackend flow(sim, spec);
  constexpr int64_t kBytes = 64'000;
  for (uint32_t c = 0; c < 100; ++c) flow.start(TransferRequest{0, 1, Bytes{kBytes}, 0, c});
  flow.start(TransferRequest{0, 1, Bytes{kBytes}, 0, 99});
  sim.queue().run();
  const auto& t = flow.transfers();
  REQUIRE(t.size() == 101);
  for (const TransferRecord& r : t) REQUIRE(r.done);
  for (std::size_t i = 1; i < 100; ++i) CHECK(t[i].finish == t[0].finish);
  // 100 Gb/s at 4096 B of payload per 4160 B on the wire.
  const double alone_s = kBytes * 8.0 / (100e9 * 4096.0 / 4160.0);
  const double gap_s = (t[100].finish - t[99].finish).seconds();
  CHECK(std::abs(gap_s / alone_s - 1.0) < 0.01);
}

TEST_CASE("queue pairs: a connection's messages keep one ECMP path; fresh QPs re-hash") {
  const auto spec = topo::build_fabric(spine_leaf(2, 1, 8));
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  // 24 back-to-back messages on connection 5, then 24 without a connection.
  for (int i = 0; i < 24; ++i) backend.start(TransferRequest{0, 1, Bytes{64'000}, 0, 5});
  for (int i = 0; i < 24; ++i) backend.start(TransferRequest{0, 1, Bytes{64'000}, 0});
  sim.queue().run();
  const net::Network& n = backend.network();
  REQUIRE(n.flow_count() == 48);
  std::set<net::PortId> persistent;
  std::set<net::PortId> fresh;
  for (net::FlowId f = 0; f < 24; ++f) persistent.insert(uplink(n, f));
  for (net::FlowId f = 24; f < 48; ++f) fresh.insert(uplink(n, f));
  CHECK(persistent.size() == 1);
  CHECK(fresh.size() >= 4);  // 24 hashes over 8 spines: all on <= 3 has probability < 1e-9
  for (std::size_t i = 0; i < 48; ++i) CHECK(backend.transfers()[i].done);

  // The flow backend hashes the same queue pairs.
  Simulation sim2(1);
  FlowBackend flow(sim2, spec);
  for (int i = 0; i < 4; ++i) flow.start(TransferRequest{0, 1, Bytes{64'000}, 0, 5});
  sim2.queue().run();
  for (std::size_t i = 0; i < 4; ++i) CHECK(flow.transfers()[i].done);
}

TEST_CASE("queue pairs: DCQCN state carries over to a connection's next message") {
  // 4 senders on leaf 1 -> host 0 on leaf 0 at 100G, lossless class 3, ECN at 20/60 KB: the
  // incast's CNPs cut every sender. Then one more message from host 4 to host 0: on the same
  // connection it starts at the rate the incast left its QP; on a QP of its own it starts at line
  // rate.
  auto spec = topo::build_fabric(spine_leaf(2, 4, 1));
  spec.pfc.enabled = true;
  spec.ecn.enabled = true;
  spec.ecn.kmin_auto = spec.ecn.kmax_auto = false;
  spec.ecn.kmin = Bytes{20'000};
  spec.ecn.kmax = Bytes{60'000};
  spec.ecn.pmax = 0.2;
  spec.nic.dcqcn = net::DcqcnParams::connectx();
  spec.nic.dcqcn.byte_counter = 0;  // the timer alone recovers: slow, so the cut is still visible
  for (const bool same_connection : {true, false}) {
    CAPTURE(same_connection);
    Simulation sim(1);
    PacketBackend backend(sim, spec);
    for (uint32_t src = 4; src < 8; ++src) {
      backend.start(TransferRequest{src, 0, Bytes{2'000'000}, 3, 0});
    }
    sim.queue().run();
    const net::Network& n = backend.network();
    REQUIRE(n.counters().rate_cuts > 0);
    const uint64_t cuts = n.counters().rate_cuts;
    backend.start(TransferRequest{4, 0, Bytes{4'096'000}, 3, same_connection ? 0 : kNoConnection});
    const net::FlowId next = static_cast<net::FlowId>(n.flow_count() - 1);
    const double rate = n.flow_rate_bps(next);
    MESSAGE("next message starts at " << rate / 1e9 << " Gb/s after " << cuts << " cuts");
    if (same_connection) {
      CHECK(rate < 0.9 * 100e9);
    } else {
      CHECK(rate == doctest::Approx(100e9));
    }
    sim.queue().run();
    CHECK(backend.transfers().back().done);
  }
}

TEST_CASE(
    "queue pairs: a connection's transfers of other sizes are timed as alone (cached routes)") {
  // The analytic and flow backends keep a queue pair's route and its timing at the last size
  // sent. Transfers of 64 KB, 1 MB and 64 KB again on connection 0, far apart, must each take what
  // the same size takes as the first transfer of a fresh backend; and two connections between the
  // same NICs share the way two transfers without a connection do (one spine: one route).
  const auto spec = topo::build_fabric(spine_leaf(2, 1, 1));
  for (const Fidelity fidelity : {Fidelity::Analytic, Fidelity::Flow}) {
    CAPTURE(std::string(fidelity_name(fidelity)));
    auto alone = [&](int64_t bytes) {
      Simulation sim(1);
      auto b = make_backend(fidelity, sim, spec);
      b->start(TransferRequest{0, 1, Bytes{bytes}, 0, 0});
      sim.queue().run();
      return (b->transfers()[0].finish - b->transfers()[0].start).picoseconds();
    };
    Simulation sim(1);
    auto b = make_backend(fidelity, sim, spec);
    const std::vector<int64_t> sizes{64'000, 1'000'000, 64'000};
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const int64_t bytes = sizes[i];
      sim.queue().schedule_fn(Time::ms(static_cast<int64_t>(i)), [&b, bytes] {
        b->start(TransferRequest{0, 1, Bytes{bytes}, 0, 0});
      });
    }
    sim.queue().run();
    REQUIRE(b->transfers().size() == sizes.size());
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const TransferRecord& t = b->transfers()[i];
      REQUIRE(t.done);
      CHECK((t.finish - t.start).picoseconds() == alone(sizes[i]));
    }
    auto pair_finishes = [&](uint32_t first, uint32_t second) {
      Simulation s(1);
      auto p = make_backend(fidelity, s, spec);
      p->start(TransferRequest{0, 1, Bytes{1'000'000}, 0, first});
      p->start(TransferRequest{0, 1, Bytes{1'000'000}, 0, second});
      s.queue().run();
      return std::make_pair(p->transfers()[0].finish, p->transfers()[1].finish);
    };
    const auto own = pair_finishes(kNoConnection, kNoConnection);
    CHECK(pair_finishes(0, 1) == own);
    // Analytic: the second waits behind the first; flow: the two share the link and end together.
    if (fidelity == Fidelity::Analytic) {
      CHECK(own.second > own.first);
    } else {
      CHECK(own.second == own.first);
    }
  }
}

TEST_CASE(
    "queue pairs: a connection's next transfer takes over its draining flow without a refill") {
  // Two connections from GPU 0 to GPU 1 on one path, sharing the NIC: four 1 MB transfers queued on
  // connection 1, one 4 MB transfer on connection 2. Each of connection 1's transfers drains at
  // half the link while the 4 MB one runs, and its successor starts in its place at that instant:
  // same links, same competitors, so the rates stand and nothing is refilled (Local mode, the
  // default). Component mode refills at every start; both give the same finishes.
  const auto spec = topo::build_fabric(spine_leaf(2, 1, 1));
  constexpr int64_t kBytes = 1'000'000;
  auto run = [&](FlowBackend::Recompute mode, uint64_t* recomputations, uint64_t* taken_over) {
    Simulation sim(1);
    FlowBackend flow(sim, spec, mode);
    for (int i = 0; i < 4; ++i) flow.start(TransferRequest{0, 1, Bytes{kBytes}, 0, 1});
    flow.start(TransferRequest{0, 1, Bytes{4 * kBytes}, 0, 2});
    sim.queue().run();
    *recomputations = flow.rate_recomputations();
    *taken_over = flow.transfers_taken_over();
    std::vector<Time> finish;
    for (const TransferRecord& r : flow.transfers()) {
      REQUIRE(r.done);
      finish.push_back(r.finish);
    }
    return finish;
  };
  uint64_t local_solves = 0, local_taken = 0, component_solves = 0, component_taken = 0;
  const std::vector<Time> local = run(FlowBackend::Recompute::Local, &local_solves, &local_taken);
  const std::vector<Time> component =
      run(FlowBackend::Recompute::Component, &component_solves, &component_taken);
  CHECK(local_taken == 3);
  CHECK(component_taken == 0);
  CHECK(local_solves == 1);      // the five starts at time zero; the take-overs refill nothing
  CHECK(component_solves == 4);  // and again at each of the three successors' starts
  REQUIRE(local.size() == 5);
  REQUIRE(component.size() == 5);
  for (std::size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(std::abs((local[i] - component[i]).picoseconds()) <= 1);
  }
  // Half of 100 Gb/s at 4096 B of payload per 4160 B on the wire: one 1 MB transfer every
  // 2 x 1 MB / payload rate; the 4 MB transfer drains with the last of them (its delivery differs
  // by its own pipeline tail, less than one packet's time on the link).
  const double per_transfer_s = 2.0 * kBytes * 8.0 / (100e9 * 4096.0 / 4160.0);
  for (std::size_t i = 1; i < 4; ++i) {
    CAPTURE(i);
    CHECK(std::abs((local[i] - local[i - 1]).seconds() / per_transfer_s - 1.0) < 1e-6);
  }
  CHECK(std::abs((local[4] - local[3]).seconds()) < 4160 * 8.0 / 100e9);
}
