#include "sim/net/routing.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/core/rng.hpp"

namespace syncsim::net {

namespace {
constexpr uint32_t kRoceUdpPort = 4791;
constexpr uint32_t kUdpProtocol = 17;
constexpr uint8_t kUnreachable = 255;
}  // namespace

Routing::Routing(const NetworkSpec& spec) : spec_(spec) {
  node_ports_.resize(spec.nodes.size());
  ports_.reserve(spec.links.size() * 2);
  for (std::size_t i = 0; i < spec.links.size(); ++i) {
    const LinkSpec& l = spec.links[i];
    SIM_CHECK(l.a < spec.nodes.size() && l.b < spec.nodes.size(), "link endpoint out of range");
    const auto pa = static_cast<PortId>(ports_.size());
    const auto la = static_cast<uint32_t>(node_ports_[l.a].size());
    const auto lb = static_cast<uint32_t>(node_ports_[l.b].size());
    ports_.push_back(PortInfo{l.a, l.b, l.link_class, la, lb});
    ports_.push_back(PortInfo{l.b, l.a, l.link_class, lb, la});
    node_ports_[l.a].push_back(pa);
    node_ports_[l.b].push_back(pa + 1);
  }
  down_port_to_nic_.assign(spec.nodes.size(), UINT32_MAX);
  for (NodeId n = 0; n < spec.nodes.size(); ++n) {
    if (spec.nodes[n].kind != NodeKind::Nic) continue;
    SIM_CHECK(node_ports_[n].size() == 1, "a NIC must have exactly one link");
    // The reverse of the NIC's only egress port is the switch port facing it.
    down_port_to_nic_[n] = node_ports_[n][0] ^ 1u;
  }
}

uint64_t Routing::flow_hash(NodeId src, NodeId dst, uint32_t queue_pair) const {
  // RoCE v2 derives the UDP source port from the queue pair; the rest of the tuple is fixed.
  const uint64_t udp_src_port = 0xC000u | (mix64(queue_pair, 0x5EED) & 0x3FFFu);
  uint64_t h = mix64(spec_.ecmp_hash_seed, (static_cast<uint64_t>(src) << 32) | dst);
  h = mix64(h, (udp_src_port << 32) | (static_cast<uint64_t>(kRoceUdpPort) << 8) | kUdpProtocol);
  return h;
}

uint8_t Routing::hops_to(uint32_t component, uint32_t attachment, NodeId sw) const {
  const auto& c = spec_.components[component];
  const std::vector<uint8_t>& hops = live_hops_.empty() ? c.hops : live_hops_[component];
  return hops[static_cast<std::size_t>(attachment) * c.switches.size() + spec_.switch_index[sw]];
}

bool Routing::route(NodeId src, NodeId dst, uint64_t hash, std::vector<PortId>& out) const {
  SIM_CHECK(spec_.nodes[src].kind == NodeKind::Nic && spec_.nodes[dst].kind == NodeKind::Nic,
            "routes run between NICs");
  const uint32_t comp = spec_.component_of[src];
  if (comp != spec_.component_of[dst] || src == dst) return false;
  const NodeId dst_switch = spec_.attachment_of_nic[dst];
  const uint32_t dst_att = spec_.attachment_index[dst_switch];

  if (!port_up(node_ports_[src][0]) || !port_up(down_port_to_nic_[dst])) return false;
  out.push_back(node_ports_[src][0]);
  NodeId at = ports_[node_ports_[src][0]].peer;
  PortId candidates[256];
  for (int guard = 0; guard < 256; ++guard) {
    if (at == dst_switch) {
      out.push_back(down_port_to_nic_[dst]);
      return true;
    }
    const uint8_t here = hops_to(comp, dst_att, at);
    if (here == kUnreachable) return false;
    std::size_t n = 0;
    for (PortId p : node_ports_[at]) {
      const NodeId peer = ports_[p].peer;
      if (spec_.nodes[peer].kind != NodeKind::Switch || !port_up(p)) continue;
      if (hops_to(comp, dst_att, peer) + 1 == here && n < 256) candidates[n++] = p;
    }
    SIM_CHECK(n > 0, "no next hop towards a reachable destination");
    const uint64_t h = spec_.ecmp_per_switch_salt ? mix64(hash, at) : hash;
    // Fold the high bits in so a small candidate count still sees the whole hash.
    const PortId chosen = candidates[((h >> 32) ^ h) % n];
    out.push_back(chosen);
    at = ports_[chosen].peer;
  }
  return false;
}

bool Routing::route_via(NodeId src, NodeId dst, const std::vector<NodeId>& via, uint64_t hash,
                        std::vector<PortId>& out) const {
  const uint32_t comp = spec_.component_of[src];
  if (comp != spec_.component_of[dst] || src == dst) return false;
  if (!port_up(node_ports_[src][0]) || !port_up(down_port_to_nic_[dst])) return false;
  const std::size_t begin = out.size();
  out.push_back(node_ports_[src][0]);
  NodeId at = ports_[node_ports_[src][0]].peer;
  for (std::size_t w = 0; w <= via.size(); ++w) {
    const NodeId target = w < via.size() ? via[w] : spec_.attachment_of_nic[dst];
    if (target >= spec_.nodes.size() || spec_.nodes[target].kind != NodeKind::Switch ||
        spec_.component_of[target] != comp || spec_.attachment_index[target] == UINT32_MAX) {
      out.resize(begin);
      return false;
    }
    const uint32_t att = spec_.attachment_index[target];
    for (int guard = 0; at != target; ++guard) {
      const uint8_t here = hops_to(comp, att, at);
      if (here == kUnreachable || guard > 255) {
        out.resize(begin);
        return false;
      }
      PortId candidates[256];
      std::size_t n = 0;
      for (PortId p : node_ports_[at]) {
        const NodeId peer = ports_[p].peer;
        if (spec_.nodes[peer].kind != NodeKind::Switch || !port_up(p)) continue;
        if (hops_to(comp, att, peer) + 1 == here && n < 256) candidates[n++] = p;
      }
      SIM_CHECK(n > 0, "no next hop towards a reachable waypoint");
      const uint64_t h = spec_.ecmp_per_switch_salt ? mix64(hash, at) : hash;
      const PortId chosen = candidates[((h >> 32) ^ h) % n];
      out.push_back(chosen);
      at = ports_[chosen].peer;
    }
  }
  out.push_back(down_port_to_nic_[dst]);
  return true;
}

Bytes Routing::path_mtu(const PortId* route, std::size_t hops) const {
  Bytes mtu{INT64_MAX};
  for (std::size_t i = 0; i < hops; ++i) mtu = std::min(mtu, link_of(route[i]).mtu);
  return mtu;
}

}  // namespace syncsim::net
