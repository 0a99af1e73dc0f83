// Subnet-manager fat-tree routing (RoutingAlgorithm::Ftree, D-mod-K in sim/net/routing.cpp):
// shift permutations share no link on non-blocking 2- and 3-tier trees where ECMP hashing
// collides, and the flow backend, which asks the same Routing for its paths, sees the difference.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "flow_fixtures.hpp"
#include "sim/backends/flow_backend.hpp"
#include "sim/net/routing.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

// The most flows any one egress port carries when GPU i sends to GPU i + shift (mod n).
uint32_t max_flows_per_link(const net::NetworkSpec& spec, uint32_t shift) {
  const net::Routing routing(spec);
  const auto n = static_cast<uint32_t>(spec.gpus.size());
  std::map<net::PortId, uint32_t> load;
  std::vector<net::PortId> route;
  for (uint32_t i = 0; i < n; ++i) {
    const net::NodeId src = spec.gpus[i].nic;
    const net::NodeId dst = spec.gpus[(i + shift) % n].nic;
    route.clear();
    REQUIRE(routing.route(src, dst, routing.flow_hash(src, dst, i), route));
    for (net::PortId p : route) ++load[p];
  }
  uint32_t most = 0;
  for (const auto& [port, flows] : load) most = std::max(most, flows);
  return most;
}

topo::FabricParams two_tier() {
  topo::FabricParams p;  // 4 leaves x 4 hosts, 4 spines: non-blocking
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = 4;
  p.spine_leaf.hosts_per_leaf = 4;
  p.spine_leaf.spines = 4;
  return p;
}

topo::FabricParams three_tier() {
  topo::FabricParams p;  // k = 4 fat tree: 4 pods x 2 leaves x 2 hosts, 2 spines per pod, 4 cores
  p.kind = topo::TopologyKind::FatTree;
  p.fat_tree.k = 4;
  return p;
}

}  // namespace

TEST_CASE("ftree routing: D-mod-K gives every shift permutation disjoint links, ECMP collides") {
  for (const topo::FabricParams& p : {two_tier(), three_tier()}) {
    net::NetworkSpec spec = topo::build_fabric(p);
    const auto n = static_cast<uint32_t>(spec.gpus.size());
    REQUIRE(n == 16);
    uint32_t ecmp_colliding_shifts = 0;
    for (uint32_t shift = 1; shift < n; ++shift) {
      CAPTURE(shift);
      spec.routing_algorithm = net::RoutingAlgorithm::Ftree;
      CHECK(max_flows_per_link(spec, shift) == 1);
      spec.routing_algorithm = net::RoutingAlgorithm::Ecmp;
      if (max_flows_per_link(spec, shift) > 1) ++ecmp_colliding_shifts;
    }
    // Hashing 16 flows onto 4 (or 4 x 2) up-ports almost never comes out a permutation.
    CHECK(ecmp_colliding_shifts >= 10);
  }
}

TEST_CASE("ftree routing: the flow backend runs a shift permutation at line rate, ECMP slower") {
  auto p = testing::flow_test_fabric(4, 4, 4, Bandwidth::gbps(100), Bandwidth::gbps(100));
  const int64_t size = 10'000'000;
  Time finish[2];
  for (int ftree = 0; ftree < 2; ++ftree) {
    net::NetworkSpec spec = topo::build_fabric(p);
    spec.routing_algorithm =
        ftree != 0 ? net::RoutingAlgorithm::Ftree : net::RoutingAlgorithm::Ecmp;
    Simulation sim(1);
    FlowBackend backend(sim, spec);
    for (uint32_t i = 0; i < 16; ++i)
      backend.start(TransferRequest{i, (i + 5) % 16, Bytes{size}, 0});
    sim.queue().run();
    finish[ftree] = Time::zero();
    for (const auto& t : backend.transfers()) {
      REQUIRE(t.done);
      finish[ftree] = std::max(finish[ftree], t.finish);
    }
  }
  // D-mod-K: every flow alone on its links, at the payload share of 100 Gb/s (plus the path's
  // latency). ECMP: some uplink carries two flows, which then take twice as long.
  const double alone_s = static_cast<double>(size) * 8 / (100e9 * 4096.0 / 4160.0);
  CHECK(finish[1].seconds() == doctest::Approx(alone_s).epsilon(0.01));
  CHECK(finish[0].seconds() > 1.9 * alone_s);
}
