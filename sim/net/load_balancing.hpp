#pragma once
// Per-packet load balancing at the switches (LoadBalancingParams, load_balancing_params.hpp): the
// next hop of a data packet chosen when a switch receives it, among the ECMP candidates
// (Routing::next_hop_candidates), instead of read from the flow's precomputed route. ECMP needs
// none of it (the Network then has no LoadBalancer and every packet follows its route).
//
// A data packet carries an `entropy` (packet.hpp), set by its source NIC when it leaves:
//   packet_spray: the packet's number within its flow (mod 2^16), retransmissions included;
//   flowlet:      the flow's flowlet number, bumped when the flow has sent nothing for
//                 flowlet_gap (detected at the source NIC: a switch on the path would see the same
//                 gaps, shifted by queueing; CONGA and LetFlow detect them at the leaf);
//   adaptive:     0 (unused).
// Control packets (ACK, NAK, CNP) keep the reverse of the flow's ECMP path; flows with a route
// override keep their route.
#include <cstdint>

#include "sim/net/load_balancing_params.hpp"
#include "sim/net/net_context.hpp"

namespace syncsim::net {

class LoadBalancer {
 public:
  LoadBalancer(const NetContext& ctx, const LoadBalancingParams& params)
      : ctx_(ctx), params_(params) {}

  // The entropy of flow `f`'s next data packet, leaving its NIC at `now` (advances the flow's
  // state; the NIC's clock, which in a windowed run is its partition's).
  uint16_t next_entropy(FlowRecord& f, Time now) const;
  // The egress port switch `at` sends data packet `p` out of (its hop already advanced). Reads
  // only the flow's fixed fields, the routing and switch `at`'s own ports, so a windowed run's
  // partitions share one balancer.
  PortId next_hop(const Packet& p, NodeId at) const;

 private:
  const NetContext& ctx_;
  LoadBalancingParams params_;
};

}  // namespace syncsim::net
