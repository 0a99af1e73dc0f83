// Checks every topology shares: parameter ranges, sizes that must fit 32-bit ids and the routing
// table, and connectivity of the built fabric.
#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "topologies/fabric_detail.hpp"

namespace syncsim::topo::detail {

std::string path(std::string_view section, std::string_view field) {
  std::string p{section};
  p += '.';
  p += field;
  return p;
}

std::string fmt_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void require_at_least_one(std::string_view section, std::string_view field, uint32_t value,
                          std::string_view what) {
  if (value == 0) {
    throw TopologyError(path(section, field),
                        "expected at least 1 " + std::string{what} + ", got 0");
  }
}

namespace {

// The first broken range rule of a parameter struct, as a TopologyError at section.field.
void throw_first(const FieldErrors& errors, const std::string& section) {
  if (!errors.empty()) {
    throw TopologyError(path(section, errors.front().field), errors.front().text());
  }
}

}  // namespace

void validate_link(const net::LinkParams& link, std::string_view key) {
  throw_first(link.check(), "links." + std::string{key});
}

uint32_t narrow_count(uint64_t v, std::string_view section, std::string_view what) {
  if (v > kMaxNodes) {
    throw TopologyError(std::string{section}, "expected at most " + std::to_string(kMaxNodes) +
                                                  " " + std::string{what} + ", got " +
                                                  std::to_string(v));
  }
  return static_cast<uint32_t>(v);
}

Totals check_sizes(const Shape& s, const HostParams& host) {
  const uint64_t nodes_per_host = add(host.nics, host.gpus > 1 ? add(host.gpus, 1) : 0);
  const uint64_t switches = add(add(s.leaves, s.spines), s.cores);
  const uint64_t nodes = add(switches, mul(s.hosts, nodes_per_host));
  const std::string section{s.section};
  if (nodes > kMaxNodes) {
    throw TopologyError(section, "expected at most " + std::to_string(kMaxNodes) +
                                     " nodes (NodeId is 32-bit), this fabric has " +
                                     std::to_string(nodes));
  }
  const uint64_t gpus = mul(s.hosts, host.gpus);
  if (gpus > UINT32_MAX) {
    throw TopologyError(section, "expected at most " + std::to_string(UINT32_MAX) +
                                     " GPUs, this fabric has " + std::to_string(gpus));
  }
  const uint64_t host_links = mul(s.hosts, add(host.nics, host.gpus > 1 ? host.gpus : 0));
  const uint64_t links = add(host_links, s.fabric_links);
  if (links > kMaxLinks) {
    throw TopologyError(section, "expected at most " + std::to_string(kMaxLinks) +
                                     " links, this fabric has " + std::to_string(links));
  }
  const uint64_t hops = mul(s.attachment_leaves, switches);
  if (hops > kMaxHopsEntries) {
    throw TopologyError(section, "expected a routing table of at most " +
                                     std::to_string(kMaxHopsEntries) +
                                     " entries (leaves x switches), "
                                     "this fabric needs " +
                                     std::to_string(hops));
  }
  return Totals{.nodes = nodes, .links = links};
}

void validate_params(const FabricParams& params) {
  throw_first(params.host.check(), "host");
  const bool fat_tree = params.kind == TopologyKind::FatTree;
  const bool nvlink = params.host.gpus > 1;
  validate_link(params.links.host, "host");
  validate_link(params.links.fabric, "fabric");
  if (fat_tree) {
    validate_link(params.links.core, "core");
  }
  if (nvlink) {
    validate_link(params.links.nvlink, "nvlink");
  }
  throw_first(params.switch_params.check(), "switch");
  if (params.planes == 0 || params.host.nics % params.planes != 0) {
    throw TopologyError("planes", "expected a plane count >= 1 that divides fabric.host.nics (" +
                                      std::to_string(params.host.nics) +
                                      "; NIC i sits on plane i mod planes), got " +
                                      std::to_string(params.planes));
  }
}

void check_connected(const net::NetworkSpec& spec) {
  // One reference NIC per plane: planes are disjoint by design, so a NIC must reach its own
  // plane's NICs only.
  std::vector<NodeId> references(std::max<uint32_t>(spec.planes, 1), kNoNode);
  for (std::size_t id = 0; id < spec.nodes.size(); ++id) {
    const net::NodeSpec& node = spec.nodes[id];
    if (node.kind != NodeKind::Nic) {
      continue;
    }
    const NodeId attachment = spec.attachment_of_nic[id];
    if (spec.nodes[attachment].role == SwitchRole::NvSwitch) {
      continue;  // an NVLink port, not a host NIC
    }
    NodeId& reference = references[spec.plane_of_nic(static_cast<NodeId>(id))];
    if (reference == kNoNode) {
      reference = static_cast<NodeId>(id);
    } else if (spec.component_of[id] != spec.component_of[reference]) {
      throw TopologyError("topology", "expected a connected fabric, but " + node.name + " (on " +
                                          spec.nodes[attachment].name + ") cannot reach " +
                                          spec.nodes[reference].name + " (on " +
                                          spec.nodes[spec.attachment_of_nic[reference]].name + ")");
    }
  }
}

}  // namespace syncsim::topo::detail
