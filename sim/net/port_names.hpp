#pragma once
// Names of egress ports as scenarios and results write them: "owner->peer" ("leaf0->host0.nic0",
// "host3.nic1->rail1"). Port ids follow the link list (routing.cpp): link l gives port 2l (a->b)
// and 2l+1 (b->a), so names can be listed from a NetworkSpec without building the network.
// Parallel cables between the same two nodes share a name; the id tells them apart.
#include <string>
#include <string_view>
#include <vector>

#include "sim/net/network_spec.hpp"

namespace syncsim::net {

// "owner->peer" of egress port `port` (an id below 2 x spec.links.size()).
std::string egress_port_name(const NetworkSpec& spec, uint32_t port);
// Every egress port's name, indexed by port id.
std::vector<std::string> egress_port_names(const NetworkSpec& spec);
// The id of the first port named `name`, or UINT32_MAX.
uint32_t find_egress_port(const NetworkSpec& spec, std::string_view name);
// The existing port name closest to `name` (fewest single-character edits; ties: lowest id), for
// "did you mean" hints; empty when the fabric has no ports.
std::string closest_egress_port(const NetworkSpec& spec, std::string_view name);

}  // namespace syncsim::net
