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
  ftree_index_.assign(spec.nodes.size(), 0);
  uint32_t next_index = 0;
  for (NodeId sw = 0; sw < spec.nodes.size(); ++sw) {
    if (spec.nodes[sw].kind != NodeKind::Switch) continue;
    for (PortId p : node_ports_[sw]) {
      // Host NICs only: a SHARP engine (a NIC of no host) left out keeps each leaf's hosts
      // consecutive, as D-mod-K needs.
      const NodeSpec& peer = spec.nodes[ports_[p].peer];
      if (peer.kind == NodeKind::Nic && peer.host != kNoHost)
        ftree_index_[ports_[p].peer] = next_index++;
    }
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

std::size_t Routing::candidates_towards(uint32_t comp, uint32_t att, NodeId at, PortId* out) const {
  const uint8_t here = hops_to(comp, att, at);
  if (here == kUnreachable) return 0;
  std::size_t n = 0;
  for (PortId p : node_ports_[at]) {
    const NodeId peer = ports_[p].peer;
    // A port that routing has seen go down (a link or switch fault, routing_repair.cpp) is skipped.
    if (spec_.nodes[peer].kind != NodeKind::Switch || !port_up(p)) continue;
    if (hops_to(comp, att, peer) + 1 == here && n < kMaxCandidates) out[n++] = p;
  }
  SIM_CHECK(n > 0, "no next hop towards a reachable destination");
  return n;
}

std::size_t Routing::next_hop_candidates(NodeId at, NodeId dst, PortId* out) const {
  const NodeId dst_switch = spec_.attachment_of_nic[dst];
  if (at == dst_switch) {
    out[0] = down_port_to_nic_[dst];
    return 1;
  }
  const uint32_t comp = spec_.component_of[dst];
  if (spec_.component_of[at] != comp) return 0;
  return candidates_towards(comp, spec_.attachment_index[dst_switch], at, out);
}

PortId Routing::hash_choice(const PortId* candidates, std::size_t n, uint64_t hash,
                            NodeId at) const {
  const uint64_t h = spec_.ecmp_per_switch_salt ? mix64(hash, at) : hash;
  // Fold the high bits in so a small candidate count still sees the whole hash.
  return candidates[((h >> 32) ^ h) % n];
}

template <typename Choose>
bool Routing::walk(NodeId src, NodeId dst, std::vector<PortId>& out, Choose&& choose) const {
  SIM_CHECK(spec_.nodes[src].kind == NodeKind::Nic && spec_.nodes[dst].kind == NodeKind::Nic,
            "routes run between NICs");
  const uint32_t comp = spec_.component_of[src];
  if (comp != spec_.component_of[dst] || src == dst) return false;
  if (!port_up(node_ports_[src][0]) || !port_up(down_port_to_nic_[dst])) return false;
  out.push_back(node_ports_[src][0]);
  NodeId at = ports_[node_ports_[src][0]].peer;
  PortId candidates[kMaxCandidates];
  for (int guard = 0; guard < 256; ++guard) {
    const std::size_t n = next_hop_candidates(at, dst, candidates);
    if (n == 0) return false;
    const PortId chosen = n == 1 ? candidates[0] : choose(candidates, n, at);
    out.push_back(chosen);
    if (chosen == down_port_to_nic_[dst]) return true;
    at = ports_[chosen].peer;
  }
  return false;
}

bool Routing::route(NodeId src, NodeId dst, uint64_t hash, std::vector<PortId>& out) const {
  if (spec_.routing_algorithm == RoutingAlgorithm::Ftree) {
    // D-mod-K (Zahavi, "D-Mod-K routing providing non-blocking traffic for shift permutations on
    // real life fat trees", CCIT report 776, Technion 2010; OpenSM's ftree routing,
    // opensm/osm_ucast_ftree.c): at the k-th choice among n_k ports the destination index d picks
    // port (d / (n_1 ... n_{k-1})) mod n_k. On a fat tree every choice going up is such a choice
    // and the way down is unique, so the hosts of one leaf, whose indices are consecutive, reach
    // distinct spines (and cores), and a shift permutation shares no link.
    const uint64_t dmodk = ftree_index_[dst];
    uint64_t divisor = 1;
    return walk(src, dst, out, [&](const PortId* c, std::size_t n, NodeId /*at*/) {
      const PortId chosen = c[(dmodk / divisor) % n];
      divisor = divisor > UINT32_MAX ? divisor : divisor * n;
      return chosen;
    });
  }
  return walk(src, dst, out, [&](const PortId* c, std::size_t n, NodeId at) {
    return hash_choice(c, n, hash, at);
  });
}

bool Routing::route_indexed(NodeId src, NodeId dst, uint64_t index, std::vector<PortId>& out,
                            uint64_t* path_count) const {
  uint64_t radix = 1;
  const bool ok = walk(src, dst, out, [&](const PortId* c, std::size_t n, NodeId /*at*/) {
    const PortId chosen = c[(index / radix) % n];
    radix = radix > UINT64_MAX / n ? UINT64_MAX : radix * n;
    return chosen;
  });
  if (path_count != nullptr) *path_count = radix;
  return ok;
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
      PortId candidates[kMaxCandidates];
      const std::size_t n = guard > 255 ? 0 : candidates_towards(comp, att, at, candidates);
      if (n == 0) {
        out.resize(begin);
        return false;
      }
      const PortId chosen = hash_choice(candidates, n, hash, at);
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
