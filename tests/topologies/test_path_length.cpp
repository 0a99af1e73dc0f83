// links_between_gpus against breadth-first search on the built fabric: the estimate's packet hops
// count on it, so it must say what the builders build.
#include <doctest/doctest.h>

#include <cstdint>
#include <deque>
#include <vector>

#include "sim/net/network_spec.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/path_length.hpp"

using namespace syncsim;

namespace {

// Hop distances from `from` to every node (UINT32_MAX where unreachable).
std::vector<uint32_t> distances(const net::NetworkSpec& spec, net::NodeId from) {
  std::vector<std::vector<net::NodeId>> next(spec.nodes.size());
  for (const net::LinkSpec& l : spec.links) {
    next[l.a].push_back(l.b);
    next[l.b].push_back(l.a);
  }
  std::vector<uint32_t> d(spec.nodes.size(), UINT32_MAX);
  std::deque<net::NodeId> todo{from};
  d[from] = 0;
  while (!todo.empty()) {
    const net::NodeId n = todo.front();
    todo.pop_front();
    for (net::NodeId m : next[n]) {
      if (d[m] != UINT32_MAX) continue;
      d[m] = d[n] + 1;
      todo.push_back(m);
    }
  }
  return d;
}

// Every GPU pair: inside a host over the NVLink ports, between hosts over the GPUs' NICs.
void check_all_pairs(const topo::FabricParams& p) {
  const net::NetworkSpec spec = topo::build_fabric(p);
  uint64_t compared = 0;
  for (uint32_t a = 0; a < spec.gpus.size(); ++a) {
    const auto& ga = spec.gpus[a];
    const bool nvlink = ga.nvlink_port != net::kNoNode;
    const std::vector<uint32_t> via_nic = distances(spec, ga.nic);
    const std::vector<uint32_t> via_nvlink =
        nvlink ? distances(spec, ga.nvlink_port) : std::vector<uint32_t>{};
    for (uint32_t b = 0; b < spec.gpus.size(); ++b) {
      const auto& gb = spec.gpus[b];
      uint32_t expected = 0;
      if (a == b) {
        expected = 0;
      } else if (ga.host == gb.host) {
        expected = via_nvlink.at(gb.nvlink_port);
      } else {
        expected = via_nic.at(gb.nic);
        if (expected == UINT32_MAX) continue;  // different planes: no fabric path
      }
      CAPTURE(a);
      CAPTURE(b);
      CHECK(topo::links_between_gpus(p, a, b) == expected);
      ++compared;
    }
  }
  CHECK(compared > spec.gpus.size());
}

}  // namespace

TEST_CASE("path length: spine-leaf with multi-NIC hosts, one and two planes") {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = 3;
  p.spine_leaf.hosts_per_leaf = 2;
  p.spine_leaf.spines = 2;
  p.host.gpus = 4;
  p.host.nics = 2;
  check_all_pairs(p);
  p.planes = 2;
  check_all_pairs(p);
}

TEST_CASE("path length: fat tree by k and by pods, one GPU and several per host") {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::FatTree;
  p.fat_tree.k = 4;
  check_all_pairs(p);
  p.fat_tree.k.reset();
  p.fat_tree.pods = 3;
  p.fat_tree.leaves_per_pod = 2;
  p.fat_tree.spines_per_pod = 2;
  p.fat_tree.hosts_per_leaf = 2;
  p.fat_tree.cores = 2;
  p.host.gpus = 2;
  p.host.nics = 2;
  check_all_pairs(p);
}

TEST_CASE("path length: rail-optimized groups") {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::RailOptimized;
  p.rail.groups = 2;
  p.rail.hosts_per_group = 3;
  p.rail.spines = 2;
  p.host.gpus = 4;
  p.host.nics = 4;
  check_all_pairs(p);
}
