#include "sim/net/network_faults.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/net/dcqcn_pacing.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/network.hpp"
#include "sim/net/nic.hpp"
#include "sim/net/partition_windows.hpp"
#include "sim/net/reliable_transport.hpp"

namespace syncsim::net {

FaultInjector::FaultInjector(Network& network, std::vector<NetFault> faults,
                             const FaultParams& params)
    : network_(network), faults_(std::move(faults)), params_(params) {
  EventQueue& q = network_.sim_.queue();
  for (std::size_t i = 0; i < faults_.size(); ++i) {
    const NetFault& f = faults_[i];
    for (uint32_t l : f.links) SIM_CHECK(l < network_.spec_.links.size(), "fault on no link");
    SIM_CHECK(f.kind != NetFaultKind::LinkRate || (f.fraction > 0 && f.fraction <= 1),
              "a degraded link's fraction must be in (0, 1]");
    const bool storm = f.kind == NetFaultKind::PfcStormStart || f.kind == NetFaultKind::PfcStormEnd;
    SIM_CHECK(!storm || (f.nic < network_.nics_.size() && network_.nics_[f.nic] != nullptr),
              "a PFC storm needs a NIC");
    q.schedule(std::max(f.at, q.now()), this, kApply, i);
  }
}

void FaultInjector::on_event(uint32_t kind, uint64_t arg) {
  // A windowed run is between windows here: every partition to now, with what was sent to it
  // taken in (so a link going down finds its packets on the wire), and a window from now after.
  if (network_.windows_) network_.windows_->bring_to_now();
  if (kind == kApply) {
    apply(faults_[arg]);
  } else {
    SIM_CHECK(kind == kConverge, "unknown fault event");
    const RouteUpdate& u = updates_[arg];
    for (uint32_t l : u.links) network_.routing_.set_link_up(l, u.up);
    network_.routing_.repair();
    ++network_.counters_.route_convergences;
    network_.reroute_flows();
  }
  if (network_.windows_) network_.windows_->wake();
}

void FaultInjector::apply(const NetFault& f) {
  auto& ports = network_.ports_;
  switch (f.kind) {
    case NetFaultKind::LinkDown:
    case NetFaultKind::LinkUp: {
      const bool up = f.kind == NetFaultKind::LinkUp;
      for (uint32_t l : f.links) {
        for (PortId p : {2 * l, 2 * l + 1}) {
          if (up) {
            ports[p]->set_rate_fraction(1.0);
            ports[p]->go_up();
          } else {
            ports[p]->go_down();
          }
        }
      }
      updates_.push_back(RouteUpdate{f.links, up});
      EventQueue& q = network_.sim_.queue();
      q.schedule(q.now() + params_.convergence, this, kConverge, updates_.size() - 1);
      return;
    }
    case NetFaultKind::LinkRate:
      for (uint32_t l : f.links) {
        ports[2 * l]->set_rate_fraction(f.fraction);
        ports[2 * l + 1]->set_rate_fraction(f.fraction);
      }
      return;
    case NetFaultKind::PfcStormStart:
    case NetFaultKind::PfcStormEnd:
      storm(f, f.kind == NetFaultKind::PfcStormStart);
      return;
  }
}

void FaultInjector::storm(const NetFault& f, bool on) {
  // A NIC stuck sending PAUSE (a host that stops draining its receive ring): modelled as one PAUSE
  // that holds until the RESUME at the storm's end, which is what back-to-back refreshes amount to.
  EgressPort& out = *network_.ports_[network_.routing_.ports_of(f.nic)[0]];
  const NetContext& ctx = network_.ctx_of(f.nic);
  const PacketRef ref = ctx.new_pause(control_frame_payload(out), f.priority, on, 0);
  if (on) ++ctx.counters.nic_pause_frames;
  out.send_control(ref);
}

void Network::schedule_faults(std::vector<NetFault> faults, const FaultParams& params) {
  SIM_CHECK(faults_ == nullptr, "faults are scheduled once per network");
  if (faults.empty()) return;
  // Faults act on the partitions at their own times: windows stop at them, flows start only now.
  if (starts_ahead_) {
    starts_ahead_ = false;
    windows_->set_bounded_by_global(true);
  }
  faults_ = std::make_unique<FaultInjector>(*this, std::move(faults), params);
}

void Network::reroute_flows() {
  for (FlowId id = 0; id < flows_.size(); ++id) {
    FlowRecord& f = flows_[id];
    if (f.done) continue;
    const auto begin = static_cast<uint32_t>(route_arena_.size());
    const uint64_t hash = routing_.flow_hash(f.src, f.dst, f.queue_pair);
    bool routed = false;
    for (const auto& o : spec_.route_overrides) {
      // A pinned path whose waypoints are cut off falls back to ECMP.
      if (o.src == f.src && o.dst == f.dst) {
        routed = routing_.route_via(f.src, f.dst, o.via, hash, route_arena_);
      }
    }
    if (!routed) {
      route_arena_.resize(begin);
      routed = routing_.route(f.src, f.dst, hash, route_arena_);
    }
    const bool has_transport = f.transport_state != kNoTransportState;
    if (!routed) {
      route_arena_.resize(begin);
      if (f.parked) continue;
      f.parked = true;
      ++counters_.flows_unroutable;
      if (has_transport) {
        transport_->park(id);
      } else {
        nics_[f.src]->deactivate(id);
      }
      continue;
    }
    const auto hops = static_cast<uint16_t>(route_arena_.size() - begin);
    const bool same =
        hops == f.route_hops && std::equal(route_arena_.begin() + begin, route_arena_.end(),
                                           route_arena_.begin() + f.route_begin);
    if (same) {
      route_arena_.resize(begin);
    } else {
      // The path MTU stays the flow's: packet sequence numbers are counted in it.
      f.route_begin = begin;
      f.route_hops = hops;
      ++counters_.flows_rerouted;
      if (has_transport) transport_->rerouted(id);
      if (dcqcn_) dcqcn_->rerouted(id);
    }
    if (!f.parked) continue;
    f.parked = false;
    if (has_transport) {
      transport_->unpark(id);
    } else if (f.sent_bytes < f.size_bytes && !f.queued) {
      // A message still queued behind its queue pair's head is listed when its turn comes.
      nics_[f.src]->reactivate(id);
    }
  }
}

}  // namespace syncsim::net
