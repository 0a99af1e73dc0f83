// Timed faults at flow level (flow_backend.hpp, sim/net/fault.hpp): the flow model has no packets
// to lose, so a cable going down stalls the flows crossing it until routing converges; then every
// active flow takes the route the repaired tables give it (ECMP re-hashes, as in the packet
// model), and the rates are recomputed. A degraded cable shares out `fraction` of its capacity.
// PFC storms are packet-level only.
#include <algorithm>
#include <utility>

#include "sim/backends/flow_backend.hpp"
#include "sim/core/check.hpp"

namespace syncsim {

bool FlowBackend::schedule_faults(const std::vector<net::NetFault>& faults,
                                  const net::FaultParams& params) {
  SIM_CHECK(faults_.empty(), "faults are scheduled once per backend");
  faults_ = faults;
  fault_params_ = params;
  port_dead_.assign(capacity_Bps_.size(), 0);
  full_capacity_Bps_ = capacity_Bps_;
  EventQueue& q = simulation().queue();
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    for (uint32_t l : faults_[i].links) {
      SIM_CHECK(2 * std::size_t{l} + 1 < capacity_Bps_.size(), "fault on no link");
    }
    q.schedule(std::max(faults_[i].at, q.now()), this, kFault, i);
  }
  return true;
}

bool FlowBackend::crosses_dead_port(uint32_t slot) const {
  if (port_dead_.empty()) return false;
  for (uint32_t h = 0; h < route_hops_[slot]; ++h) {
    if (port_dead_[route_port(slot, h)] != 0) return true;
  }
  return false;
}

void FlowBackend::attach(uint32_t slot) {
  Flow& f = flows_[slot];
  f.stalled = false;
  for (uint32_t h = 0; h < route_hops_[slot]; ++h) {
    const net::PortId p = route_port(slot, h);
    hop_pos_[std::size_t{slot} * stride_ + h] = static_cast<uint32_t>(flows_on_[p].size());
    flows_on_[p].push_back(PortFlow{slot, h});
  }
  arrivals_.push_back(slot);
}

void FlowBackend::detach(uint32_t slot) {
  Flow& f = flows_[slot];
  const Time now = simulation().now();
  for (uint32_t h = 0; h < route_hops_[slot]; ++h) {
    const net::PortId p = route_port(slot, h);
    std::vector<PortFlow>& on = flows_on_[p];
    const uint32_t pos = hop_pos_[std::size_t{slot} * stride_ + h];
    const PortFlow moved = on.back();
    on[pos] = moved;
    hop_pos_[std::size_t{moved.slot} * stride_ + moved.hop] = pos;
    on.pop_back();
    seed_ports_.push_back(p);
  }
  f.remaining_bytes =
      std::max(0.0, f.remaining_bytes - rate_Bps_[slot] * (now - f.since).seconds());
  f.since = now;
  rate_Bps_[slot] = 0.0;
  completions_.erase(slot);  // its projected completion is void
  f.stalled = true;
}

void FlowBackend::apply_fault(const net::NetFault& fault) {
  ++path_epoch_;  // link rates change: the send queues' cached path timings are void
  switch (fault.kind) {
    case net::NetFaultKind::LinkDown:
    case net::NetFaultKind::LinkUp: {
      const bool up = fault.kind == net::NetFaultKind::LinkUp;
      for (uint32_t l : fault.links) {
        for (net::PortId p : {2 * l, 2 * l + 1}) {
          port_dead_[p] = up ? 0 : 1;
          capacity_Bps_[p] = full_capacity_Bps_[p];
          shared_Bps_[p] = capacity_Bps_[p];
          if (up) {
            seed_ports_.push_back(p);
            continue;
          }
          while (!flows_on_[p].empty()) detach(flows_on_[p].back().slot);
        }
      }
      route_updates_.emplace_back(fault.links, up);
      EventQueue& q = simulation().queue();
      q.schedule(q.now() + fault_params_.convergence, this, kConverge, route_updates_.size() - 1);
      break;
    }
    case net::NetFaultKind::LinkRate:
      for (uint32_t l : fault.links) {
        for (net::PortId p : {2 * l, 2 * l + 1}) {
          capacity_Bps_[p] = full_capacity_Bps_[p] * fault.fraction;
          shared_Bps_[p] = capacity_Bps_[p];
          seed_ports_.push_back(p);
        }
      }
      break;
    case net::NetFaultKind::PfcStormStart:
    case net::NetFaultKind::PfcStormEnd:
      return;  // no PFC at flow level (the runner says so)
  }
  update();
}

void FlowBackend::converge(uint64_t index) {
  const auto& [links, up] = route_updates_[index];
  for (uint32_t l : links) routing_.set_link_up(l, up);
  routing_.repair();
  ++path_epoch_;  // the queue pairs' kept routes are of the old routing
  ++counters_.route_convergences;
  for (uint32_t slot = 0; slot < flows_.size(); ++slot) {
    Flow& f = flows_[slot];
    if (!f.active) continue;
    route_scratch_.clear();
    const bool routed = routing_.route(f.src, f.dst, routing_.flow_hash(f.src, f.dst, f.queue_pair),
                                       route_scratch_);
    if (!routed) {
      if (!f.stalled) {
        detach(slot);
        ++counters_.flows_unroutable;
      }
      continue;
    }
    const auto hops = static_cast<uint16_t>(route_scratch_.size());
    bool same = hops == route_hops_[slot];
    for (uint32_t h = 0; same && h < hops; ++h) same = route_port(slot, h) == route_scratch_[h];
    if (same && !f.stalled) continue;
    if (!same) {
      if (!f.stalled) detach(slot);
      ensure_stride(hops);
      for (uint32_t h = 0; h < hops; ++h) {
        route_arena_[std::size_t{slot} * stride_ + h] = route_scratch_[h];
      }
      route_hops_[slot] = hops;
      ++counters_.flows_rerouted;
    }
    if (!crosses_dead_port(slot)) attach(slot);
  }
  update();
}

}  // namespace syncsim
