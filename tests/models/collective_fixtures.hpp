#pragma once
// Fixtures shared by the collective tests (plans, runner, pipelining, rails).
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::collective_fixtures {

// Rank r on GPU r.
inline std::vector<uint32_t> identity(uint32_t n) {
  std::vector<uint32_t> v(n);
  for (uint32_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// `leaves` leaves with one single-GPU host each and one spine, every link at `bw` with `delay`:
// every pair of ranks is 4 hops apart over identical links.
inline topo::FabricParams one_host_per_leaf(uint32_t leaves, Bandwidth bw, Time delay) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = leaves;
  p.spine_leaf.hosts_per_leaf = 1;
  p.spine_leaf.spines = 1;
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->bandwidth = bw;
    l->delay = delay;
    l->mtu = Bytes{4096};
    l->header = Bytes{64};
  }
  p.switch_params.buffer = Bytes{64 << 20};
  return p;
}

}  // namespace syncsim::collective_fixtures
