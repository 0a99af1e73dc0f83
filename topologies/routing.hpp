#pragma once
// Internal to topologies/: fills the routing part of a NetworkSpec whose nodes and links are
// complete.
#include "sim/net/network_spec.hpp"

namespace syncsim::topo::detail {

// Fills components, component_of, switch_index, attachment_index and attachment_of_nic from
// spec.nodes and spec.links. Components are numbered by their lowest switch NodeId, so the
// builder's node order decides which component is the fabric. Every NIC must have exactly one link,
// to a switch.
void fill_routing(net::NetworkSpec& spec);

}  // namespace syncsim::topo::detail
