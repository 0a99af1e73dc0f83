#include "sim/backends/flow_backend.hpp"

#include <algorithm>
#include <cmath>

#include "sim/backends/path_time.hpp"
#include "sim/core/check.hpp"

namespace syncsim {

namespace {
// A flow counts as drained when less than this many bytes remain (floating-point residue).
constexpr double kDrainedBytes = 1e-3;
}  // namespace

FlowBackend::FlowBackend(Simulation& sim, const net::NetworkSpec& spec)
    : TransferBackend(sim, spec), routing_(spec) {
  const auto ports = routing_.ports().size();
  capacity_Bps_.resize(ports);
  for (net::PortId p = 0; p < ports; ++p) {
    const net::LinkParams& l = routing_.link_of(p);
    const auto mtu = static_cast<double>(l.mtu.count());
    const auto header = static_cast<double>(l.header.count());
    capacity_Bps_[p] = l.bandwidth.bytes_per_second() * mtu / (mtu + header);
  }
  link_left_.assign(ports, 0.0);
  link_unfrozen_.assign(ports, 0);
  flows_on_.resize(ports);
}

double FlowBackend::rate_bps(TransferId id) const {
  for (const ActiveFlow& f : active_) {
    if (f.transfer == id) return f.rate_Bps * 8.0;
  }
  return 0.0;
}

void FlowBackend::begin(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) {
  settle_to_now();
  const auto begin_at = static_cast<uint32_t>(route_arena_.size());
  const bool routed = routing_.route(src, dst, routing_.flow_hash(src, dst, id), route_arena_);
  SIM_CHECK(routed, "no route between the transfer's NICs");
  const auto hops = static_cast<uint16_t>(route_arena_.size() - begin_at);
  const net::PortId* route = route_arena_.data() + begin_at;

  // The pipeline latency beyond the fluid drain at the route's bottleneck rate.
  double bottleneck = capacity_Bps_[route[0]];
  for (std::size_t h = 1; h < hops; ++h) bottleneck = std::min(bottleneck, capacity_Bps_[route[h]]);
  const Time alone = idle_path_time(routing_, route, hops, r.size);
  const double drain_s = static_cast<double>(r.size.count()) / bottleneck;
  const Time drain = Time::ps(static_cast<int64_t>(std::ceil(drain_s * 1e12)));
  const Time tail = alone > drain ? alone - drain : Time::zero();

  active_.push_back(ActiveFlow{id, begin_at, hops, static_cast<double>(r.size.count()), 0.0, tail});
  const int64_t mtu = routing_.path_mtu(route, hops).count();
  counters_.packet_hops += static_cast<uint64_t>((r.size.count() + mtu - 1) / mtu) * hops;
  counters_.bytes_injected += r.size.count();
  if (!recompute_pending_) {
    // Transfers starting at one instant share one recomputation.
    recompute_pending_ = true;
    simulation().queue().schedule(simulation().now(), this, kRecompute);
  }
}

void FlowBackend::settle_to_now() {
  const Time now = simulation().now();
  const double dt = (now - last_settle_).seconds();
  if (dt > 0) {
    for (ActiveFlow& f : active_) f.remaining_bytes -= f.rate_Bps * dt;
  }
  last_settle_ = now;
}

void FlowBackend::on_event(uint32_t kind, uint64_t arg) {
  switch (kind) {
    case kRecompute:
      recompute_pending_ = false;
      settle_to_now();
      recompute_rates();
      schedule_next_drain();
      break;
    case kDrain: {
      settle_to_now();
      const Time now = simulation().now();
      // A flow whose drain time has come has at most a picosecond's worth of bytes left.
      std::size_t kept = 0;
      for (std::size_t i = 0; i < active_.size(); ++i) {
        ActiveFlow& f = active_[i];
        if (f.remaining_bytes <= kDrainedBytes + f.rate_Bps * 1e-12) {
          simulation().queue().schedule(now + f.tail_latency, this, kDeliver, f.transfer);
        } else {
          active_[kept++] = f;
        }
      }
      active_.resize(kept);
      recompute_rates();
      schedule_next_drain();
      break;
    }
    case kDeliver: {
      const auto id = static_cast<TransferId>(arg);
      counters_.bytes_delivered += transfers()[id].request.size.count();
      complete(id);
      break;
    }
    default:
      SIM_CHECK(false, "unknown flow backend event");
  }
}

void FlowBackend::recompute_rates() {
  ++recomputations_;
  // Progressive filling: repeatedly take the link whose equal share among its unfrozen flows is the
  // smallest, give that share to those flows, and remove them from every link they cross. A link's
  // share never decreases as flows freeze elsewhere, so a lazy min-heap of shares suffices.
  touched_.clear();
  for (uint32_t i = 0; i < active_.size(); ++i) {
    const ActiveFlow& f = active_[i];
    for (uint16_t h = 0; h < f.route_hops; ++h) {
      const net::PortId p = route_arena_[f.route_begin + h];
      if (flows_on_[p].empty()) {
        touched_.push_back(p);
        link_left_[p] = capacity_Bps_[p];
        link_unfrozen_[p] = 0;
      }
      flows_on_[p].push_back(i);
      ++link_unfrozen_[p];
    }
  }
  frozen_.assign(active_.size(), 0);
  auto later = [](const Candidate& a, const Candidate& b) {
    return a.share > b.share || (a.share == b.share && a.port > b.port);
  };
  heap_.clear();
  for (net::PortId p : touched_) {
    heap_.push_back(Candidate{link_left_[p] / link_unfrozen_[p], p});
  }
  std::make_heap(heap_.begin(), heap_.end(), later);
  std::size_t unfrozen = active_.size();
  while (unfrozen > 0 && !heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const Candidate c = heap_.back();
    heap_.pop_back();
    const net::PortId p = c.port;
    if (link_unfrozen_[p] == 0) continue;
    const double share = link_left_[p] / link_unfrozen_[p];
    if (share != c.share) continue;  // stale: a fresher entry for this port is in the heap
    for (uint32_t i : flows_on_[p]) {
      if (frozen_[i]) continue;
      frozen_[i] = 1;
      --unfrozen;
      ActiveFlow& f = active_[i];
      f.rate_Bps = share;
      for (uint16_t h = 0; h < f.route_hops; ++h) {
        const net::PortId q = route_arena_[f.route_begin + h];
        link_left_[q] = std::max(0.0, link_left_[q] - share);
        --link_unfrozen_[q];
        if (q != p && link_unfrozen_[q] > 0) {
          heap_.push_back(Candidate{link_left_[q] / link_unfrozen_[q], q});
          std::push_heap(heap_.begin(), heap_.end(), later);
        }
      }
    }
  }
  SIM_CHECK(unfrozen == 0, "progressive filling left flows without a rate");
  for (net::PortId p : touched_) flows_on_[p].clear();
}

void FlowBackend::schedule_next_drain() {
  drain_token_.cancel_pending();
  if (active_.empty()) return;
  double soonest_s = INFINITY;
  for (const ActiveFlow& f : active_) {
    SIM_CHECK(f.rate_Bps > 0, "an active flow has no rate");
    soonest_s = std::min(soonest_s, std::max(0.0, f.remaining_bytes) / f.rate_Bps);
  }
  const Time at = simulation().now() + Time::ps(static_cast<int64_t>(std::ceil(soonest_s * 1e12)));
  simulation().queue().schedule(at, this, kDrain, 0, &drain_token_);
}

}  // namespace syncsim
