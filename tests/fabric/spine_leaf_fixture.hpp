#pragma once
// The small spine-leaf fabric most packet-network tests run on: 100G everywhere, 1 us cables,
// 4096 B MTU, 64 B headers, one GPU and NIC per host.
#include <cstdint>

#include "topologies/fabric_builder.hpp"

namespace syncsim::testing {

inline topo::FabricParams spine_leaf_100g(uint32_t leaves, uint32_t hosts_per_leaf, uint32_t spines,
                                          Bytes buffer = Bytes{64 << 20}) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = leaves;
  p.spine_leaf.hosts_per_leaf = hosts_per_leaf;
  p.spine_leaf.spines = spines;
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->bandwidth = Bandwidth::gbps(100);
    l->delay = Time::us(1);
    l->mtu = Bytes{4096};
    l->header = Bytes{64};
  }
  p.switch_params.buffer = buffer;
  return p;
}

}  // namespace syncsim::testing
