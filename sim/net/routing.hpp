#pragma once
// Ports and routes over a NetworkSpec, shared by every backend so that packet, analytic and (later)
// flow fidelity send a given flow over the same ECMP path.
//
// Each cable becomes two egress ports: port 2i sends a -> b on link i, port 2i+1 sends b -> a. A
// route is the list of egress ports a flow's packets leave through, from the source NIC to the last
// switch.
#include <cstdint>
#include <vector>

#include "sim/net/network_spec.hpp"

namespace syncsim::net {

using PortId = uint32_t;

struct PortInfo {
  NodeId owner;
  NodeId peer;
  uint32_t link_class;
  uint32_t local_index;       // index among the owner's ports
  uint32_t peer_local_index;  // index of the reverse port among the peer's ports
};

class Routing {
 public:
  explicit Routing(const NetworkSpec& spec);

  const NetworkSpec& spec() const { return spec_; }
  const std::vector<PortInfo>& ports() const { return ports_; }
  const std::vector<PortId>& ports_of(NodeId n) const { return node_ports_[n]; }
  const LinkParams& link_of(PortId p) const { return spec_.link_classes[ports_[p].link_class]; }

  // The ECMP hash of a flow's 5-tuple (src, dst, UDP source port from the queue pair, 4791, UDP).
  uint64_t flow_hash(NodeId src, NodeId dst, uint32_t queue_pair) const;

  // Appends the egress ports from src NIC to dst NIC to `out`; returns false if dst is unreachable.
  // At each switch the candidates are every port towards a neighbour one hop closer to the
  // destination's attachment switch; the flow hash picks one (mixed with the switch id when
  // per-switch salt is on, otherwise every switch hashes alike and choices can polarize). With
  // RoutingAlgorithm::Ftree the choice is D-mod-K instead (ftree_index below), and `hash` is
  // unused.
  bool route(NodeId src, NodeId dst, uint64_t hash, std::vector<PortId>& out) const;
  // The same through the switches `via` in order (NetworkSpec::RouteOverride): shortest paths from
  // waypoint to waypoint, ECMP by `hash`. False if a waypoint has no NICs attached or is
  // unreachable.
  bool route_via(NodeId src, NodeId dst, const std::vector<NodeId>& via, uint64_t hash,
                 std::vector<PortId>& out) const;

  // Every route above walks the same "choose the next hop among candidates" step (per-packet load
  // balancing, load_balancing.hpp, walks it at each switch instead):
  //   candidates: every port of switch `at` towards a switch one hop closer to NIC `dst`'s
  //   attachment switch, or the attachment's port down to `dst` when `at` is that switch. Writes at
  //   most kMaxCandidates ports to `out` and returns how many; 0 when `dst` is unreachable from
  //   `at`.
  static constexpr std::size_t kMaxCandidates = 256;
  std::size_t next_hop_candidates(NodeId at, NodeId dst, PortId* out) const;
  //   the ECMP pick among `n` candidates at switch `at` by a flow hash (mixed with the switch id
  //   when per-switch salt is on).
  PortId hash_choice(const PortId* candidates, std::size_t n, uint64_t hash, NodeId at) const;

  // Route number `index` of the shortest paths from src to dst, with no hash: at each switch the
  // next digit of `index` in the mixed radix of the candidate counts picks the candidate (so
  // indices 0 .. path_count - 1 enumerate distinct paths, spread evenly over the first hop's
  // choices). `path_count` (if given) receives the number of paths that radix spans along this
  // route. False if dst is unreachable. For multipath flow fidelity (flow_backend.cpp).
  bool route_indexed(NodeId src, NodeId dst, uint64_t index, std::vector<PortId>& out,
                     uint64_t* path_count = nullptr) const;
  // The destination index D-mod-K routing divides (RoutingAlgorithm::Ftree): NICs numbered leaf by
  // leaf (switches in NodeId order, each switch's NICs in port order), as OpenSM's ftree routing
  // walks the leaves' host ports, so the hosts of one leaf have consecutive indices.
  uint32_t ftree_index(NodeId nic) const { return ftree_index_[nic]; }

  // Smallest MTU along a route: the source segments to it, as RoCE path-MTU discovery would.
  Bytes path_mtu(const PortId* route, std::size_t hops) const;

  // Link faults as routing sees them once it has converged (routing_repair.cpp): a cable marked
  // down is skipped wherever candidates are built, and the hop distances are recomputed over the
  // cables still up, so ECMP groups shrink to the next hops that still reach the destination.
  // Routes are unchanged until a cable is marked down (one "is this port up" mask).
  bool port_up(PortId p) const { return port_down_.empty() || port_down_[p] == 0; }
  // Marks both directions of cable `link`; call repair() after a batch of changes.
  void set_link_up(uint32_t link, bool up);
  // Recomputes the hop distances over the cables up (BFS per destination attachment switch).
  void repair();

 private:
  uint8_t hops_to(uint32_t component, uint32_t attachment, NodeId sw) const;
  // Candidates at `at` towards attachment switch index `att` of component `comp` (not the last
  // hop down to a NIC); 0 if unreachable.
  std::size_t candidates_towards(uint32_t comp, uint32_t att, NodeId at, PortId* out) const;
  // The walk from src's NIC to dst's NIC, `choose(candidates, n, at)` picking each switch hop.
  template <typename Choose>
  bool walk(NodeId src, NodeId dst, std::vector<PortId>& out, Choose&& choose) const;

  const NetworkSpec& spec_;
  std::vector<PortInfo> ports_;
  std::vector<std::vector<PortId>> node_ports_;
  std::vector<PortId> down_port_to_nic_;  // per NIC node: the attachment switch's port facing it
  std::vector<uint32_t> ftree_index_;     // per NIC node: its D-mod-K destination index
  std::vector<uint8_t> port_down_;        // per port: 1 when routing treats it as down; empty: none
  // Per component, hop distances over the cables up (RoutingComponent::hops' layout); empty while
  // every cable is up (the topology builder's tables hold).
  std::vector<std::vector<uint8_t>> live_hops_;
};

}  // namespace syncsim::net
