// Load balancing (sim/net/load_balancing.hpp) on a permutation that ECMP hashes onto shared spine
// links: spraying and adaptive routing against ECMP, flowlets, go-back-N's reaction to reordering
// and out-of-order placement, determinism, and the flow backend's multipath split.
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/flow_backend.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using net::LoadBalancing;

namespace {

constexpr uint32_t kHostsPerLeaf = 8;
constexpr int64_t kSize = 1 << 20;

// 2 leaves x 8 hosts, 8 spines, 100G everywhere: non-blocking. Host i of leaf 0 sends to host i of
// leaf 1. ECMP hash seed 0 puts several of those flows on one leaf0 -> spine link (checked below).
net::NetworkSpec fabric(LoadBalancing mode, bool out_of_order, uint64_t hash_seed = 0) {
  topo::FabricParams p = testing::spine_leaf_100g(2, kHostsPerLeaf, kHostsPerLeaf);
  p.ecmp_hash_seed = hash_seed;
  p.load_balancing.mode = mode;
  net::NetworkSpec spec = topo::build_fabric(p);
  spec.transport.gbn.out_of_order = out_of_order;
  return spec;
}

struct Outcome {
  std::vector<Time> finish;  // per transfer
  Time last = Time::zero();
  net::NetworkCounters counters;
  int64_t max_uplink_bytes = 0;  // most bytes any leaf0 -> spine port carried
};

Outcome run_permutation(const net::NetworkSpec& spec, Fidelity fidelity = Fidelity::Packet) {
  Simulation sim(1);
  const std::unique_ptr<TransferBackend> backend = make_backend(fidelity, sim, spec);
  backend->count_port_bytes(true);
  for (uint32_t i = 0; i < kHostsPerLeaf; ++i) {
    backend->start(TransferRequest{i, kHostsPerLeaf + i, Bytes{kSize}, 0});
  }
  sim.queue().run();
  Outcome o;
  for (const TransferRecord& r : backend->transfers()) {
    REQUIRE(r.done);
    o.finish.push_back(r.finish);
    o.last = std::max(o.last, r.finish);
  }
  o.counters = backend->counters();
  const net::Routing routing(spec);
  for (net::PortId p = 0; p < routing.ports().size(); ++p) {
    const net::PortInfo& info = routing.ports()[p];
    if (spec.nodes[info.owner].role == net::SwitchRole::Leaf &&
        spec.nodes[info.peer].role == net::SwitchRole::Spine &&
        spec.nodes[info.owner].name == "leaf0") {
      o.max_uplink_bytes = std::max(o.max_uplink_bytes, backend->port_bytes()[p]);
    }
  }
  return o;
}

// One transfer alone on an idle path: the line-rate oracle (store-and-forward pipeline).
Time alone(const net::NetworkSpec& spec) {
  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  backend.start(TransferRequest{0, kHostsPerLeaf, Bytes{kSize}, 0});
  sim.queue().run();
  return backend.transfers()[0].finish;
}

// Packet fidelity counts a transfer's bytes on its ECMP route (its first packet's path); under
// spraying that is not where they went, so only ECMP's figure says where flows collide.
int64_t flows_on_busiest_uplink(const Outcome& ecmp) { return ecmp.max_uplink_bytes / kSize; }

}  // namespace

TEST_CASE("load balancing: spraying and adaptive routing reach line rate where ECMP collides") {
  const Outcome ecmp = run_permutation(fabric(LoadBalancing::Ecmp, false));
  const Time ideal = alone(fabric(LoadBalancing::Ecmp, false));
  // The test means something only if ECMP puts two or more flows on one uplink.
  REQUIRE(flows_on_busiest_uplink(ecmp) >= 2);
  CHECK(ecmp.last.seconds() > 1.9 * ideal.seconds());

  const Outcome spray = run_permutation(fabric(LoadBalancing::PacketSpray, true));
  CHECK(spray.counters.retransmitted_packets == 0);
  CHECK(spray.last.seconds() < 1.15 * ideal.seconds());
  CHECK(spray.last < ecmp.last);

  const Outcome adaptive = run_permutation(fabric(LoadBalancing::Adaptive, true));
  CHECK(adaptive.last.seconds() < 1.05 * ideal.seconds());
  CHECK(adaptive.last < ecmp.last);
  for (const Outcome* o : {&ecmp, &spray, &adaptive}) {
    CHECK(o->counters.bytes_delivered == int64_t{kHostsPerLeaf} * kSize);
  }
}

TEST_CASE("load balancing: go-back-N retransmits reordered packets unless it places them") {
  // The RoCE receiver takes a sprayed packet that overtakes another for a loss: NAK, go back.
  const Outcome in_order = run_permutation(fabric(LoadBalancing::PacketSpray, false));
  CHECK(in_order.counters.out_of_order_packets > 0);
  CHECK(in_order.counters.naks > 0);
  CHECK(in_order.counters.retransmitted_packets > 0);
  CHECK(in_order.counters.bytes_discarded > 0);
  // Out-of-order placement: the same reordering, nothing sent twice, nothing discarded.
  const Outcome placed = run_permutation(fabric(LoadBalancing::PacketSpray, true));
  CHECK(placed.counters.out_of_order_packets > 0);
  CHECK(placed.counters.naks == 0);
  CHECK(placed.counters.retransmitted_packets == 0);
  CHECK(placed.counters.bytes_discarded == 0);
  CHECK(placed.counters.bytes_injected == placed.counters.bytes_delivered);
  CHECK(placed.last < in_order.last);
  // ECMP never reorders: the option changes nothing there.
  const Outcome ecmp = run_permutation(fabric(LoadBalancing::Ecmp, true));
  CHECK(ecmp.counters.out_of_order_packets == 0);
  CHECK(ecmp.finish == run_permutation(fabric(LoadBalancing::Ecmp, false)).finish);
}

TEST_CASE("load balancing: flowlets with an infinite gap are ECMP, a short gap re-routes") {
  const Outcome ecmp = run_permutation(fabric(LoadBalancing::Ecmp, false));
  net::NetworkSpec never = fabric(LoadBalancing::Flowlet, false);
  never.load_balancing.flowlet_gap = Time::max();
  const Outcome flowlet = run_permutation(never);
  CHECK(flowlet.finish == ecmp.finish);
  CHECK(flowlet.counters.packet_hops == ecmp.counters.packet_hops);
  CHECK(flowlet.counters.max_queue_bytes == ecmp.counters.max_queue_bytes);
  // A gap shorter than one packet's serialization makes every packet a flowlet of its own.
  net::NetworkSpec short_gap = fabric(LoadBalancing::Flowlet, true);
  short_gap.load_balancing.flowlet_gap = Time::ns(1);
  CHECK(run_permutation(short_gap).last < ecmp.last);
}

TEST_CASE("load balancing: spraying is deterministic per hash seed") {
  const Outcome a = run_permutation(fabric(LoadBalancing::PacketSpray, false));
  const Outcome b = run_permutation(fabric(LoadBalancing::PacketSpray, false));
  CHECK(a.finish == b.finish);
  CHECK(a.counters.retransmitted_packets == b.counters.retransmitted_packets);
  const Outcome c = run_permutation(fabric(LoadBalancing::PacketSpray, false, 7));
  CHECK(c.finish != a.finish);
}

TEST_CASE("load balancing: flow fidelity splits sprayed transfers over every path") {
  const Outcome ecmp = run_permutation(fabric(LoadBalancing::Ecmp, false), Fidelity::Flow);
  const Time ideal = alone(fabric(LoadBalancing::Ecmp, false));
  REQUIRE(flows_on_busiest_uplink(ecmp) >= 2);
  for (const LoadBalancing mode : {LoadBalancing::PacketSpray, LoadBalancing::Adaptive}) {
    const Outcome spread = run_permutation(fabric(mode, false), Fidelity::Flow);
    // Each uplink carries 1/8 of every flow of its leaf: exactly one flow's bytes.
    CHECK(spread.max_uplink_bytes == kSize);
    CHECK(spread.counters.bytes_delivered == int64_t{kHostsPerLeaf} * kSize);
    for (const Time t : spread.finish) CHECK(t.seconds() < 1.01 * ideal.seconds());
  }
  CHECK(ecmp.last.seconds() > 1.9 * ideal.seconds());
}
