#include "sim/net/load_balancing.hpp"

#include "sim/core/rng.hpp"
#include "sim/net/egress_port.hpp"

namespace syncsim::net {

FieldErrors LoadBalancingParams::check() const {
  FieldErrors errors;
  if (flowlet_gap <= Time::zero()) {
    errors.push_back({"flowlet_gap", "expected a positive time", time_text(flowlet_gap)});
  }
  return errors;
}

uint16_t LoadBalancer::next_entropy(FlowRecord& f, Time at) const {
  const int64_t now = at.picoseconds();
  switch (params_.mode) {
    case LoadBalancing::PacketSpray:
      return static_cast<uint16_t>(f.lb_packets++);
    case LoadBalancing::Flowlet:
      // The first packet opens flowlet 0 (the ECMP path); a pause longer than the gap opens the
      // next one. A gap of Time::max() never does.
      if (f.lb_packets++ > 0 && now - f.lb_last_sent_ps > params_.flowlet_gap.picoseconds()) {
        ++f.lb_flowlet;
      }
      f.lb_last_sent_ps = now;
      return f.lb_flowlet;
    case LoadBalancing::Ecmp:
    case LoadBalancing::Adaptive:
      break;
  }
  return 0;
}

PortId LoadBalancer::next_hop(const Packet& p, NodeId at) const {
  const FlowRecord& f = ctx_.flows[p.flow];
  if (f.pinned_route) return ctx_.route_hop(p);
  const Routing& routing = ctx_.routing;
  PortId candidates[Routing::kMaxCandidates];
  const std::size_t n = routing.next_hop_candidates(at, f.dst, candidates);
  if (n <= 1) return n == 1 ? candidates[0] : ctx_.route_hop(p);
  switch (params_.mode) {
    case LoadBalancing::PacketSpray:
      // Independent at every switch: the switch always enters the hash.
      return candidates[mix64(mix64(f.hash, p.entropy), at) % n];
    case LoadBalancing::Flowlet:
      // Flowlet 0 is the flow's ECMP path; later flowlets hash like ECMP with a new input.
      if (p.entropy == 0) return ctx_.route_hop(p);
      return routing.hash_choice(candidates, n, mix64(f.hash, p.entropy), at);
    case LoadBalancing::Adaptive: {
      // The least-loaded egress (bytes queued or in service); ties go to the ECMP candidate,
      // then to the next ones in port order after it, so an idle fabric routes as ECMP does.
      const PortId preferred = routing.hash_choice(candidates, n, f.hash, at);
      std::size_t start = 0;
      while (candidates[start] != preferred) ++start;
      PortId best = preferred;
      int64_t best_bytes = ctx_.egress(preferred).queued_bytes();
      for (std::size_t k = 1; k < n && best_bytes > 0; ++k) {
        const PortId c = candidates[(start + k) % n];
        const int64_t bytes = ctx_.egress(c).queued_bytes();
        if (bytes < best_bytes) {
          best = c;
          best_bytes = bytes;
        }
      }
      return best;
    }
    case LoadBalancing::Ecmp:
      break;
  }
  return ctx_.route_hop(p);
}

}  // namespace syncsim::net
