// The flow backend's max-min fair rates: which flows a start or finish touches (the region),
// progressive filling over them, the check that widens a local region until its rates are the
// max-min ones, and applying the new rates to the flows' projected finishes. The bookkeeping of
// flows, queue pairs and events stays in flow_backend.cpp.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "sim/backends/flow_backend.hpp"
#include "sim/core/check.hpp"

namespace syncsim {

void FlowBackend::begin_region() {
  component_flows_.clear();
  component_ports_.clear();
  if (++epoch_ == 0) {
    std::fill(port_mark_.begin(), port_mark_.end(), 0u);
    std::fill(flow_mark_.begin(), flow_mark_.end(), 0u);
    epoch_ = 1;
  }
}

void FlowBackend::collect_all() {
  begin_region();
  for (uint32_t s = 0; s < flows_.size(); ++s) {
    if (flows_[s].active) add_to_region(s);
  }
}

void FlowBackend::collect_component() {
  begin_region();
  port_stack_.clear();
  auto visit_port = [this](net::PortId p) {
    if (port_mark_[p] == epoch_) return;
    port_mark_[p] = epoch_;
    port_stack_.push_back(p);
  };
  for (net::PortId p : seed_ports_) visit_port(p);
  for (uint32_t s : arrivals_) {
    if (!flows_[s].active) continue;
    for (uint32_t h = 0; h < route_hops_[s]; ++h) visit_port(route_port(s, h));
  }
  // Breadth over the bipartite graph: a port brings in its flows, a flow brings in its ports.
  while (!port_stack_.empty()) {
    const net::PortId p = port_stack_.back();
    port_stack_.pop_back();
    component_ports_.push_back(p);
    for (const PortFlow& pf : flows_on_[p]) {
      if (flow_mark_[pf.slot] == epoch_) continue;
      flow_mark_[pf.slot] = epoch_;
      component_flows_.push_back(pf.slot);
      for (uint32_t h = 0; h < route_hops_[pf.slot]; ++h) visit_port(route_port(pf.slot, h));
    }
  }
}

void FlowBackend::add_to_region(uint32_t slot) {
  if (flow_mark_[slot] == epoch_) return;
  flow_mark_[slot] = epoch_;
  component_flows_.push_back(slot);
  for (uint32_t h = 0; h < route_hops_[slot]; ++h) {
    const net::PortId p = route_port(slot, h);
    if (port_mark_[p] != epoch_) {
      port_mark_[p] = epoch_;
      component_ports_.push_back(p);
    }
  }
}

void FlowBackend::solve_local() {
  // Max-min fairness is characterised by bottlenecks: an allocation is the max-min fair one iff
  // every link is within capacity and every flow crosses a saturated link on which no flow has a
  // higher rate. The region starts as the flows on the links an arrival or completion touched; it
  // is refilled with the rates of everyone else held fixed (so every link stays within capacity,
  // and every region flow gets a saturated bottleneck). Then each link the region crosses is
  // checked: a flow outside whose bottleneck it is must still see it saturated and be the fastest
  // there, and a region flow bottlenecked there must not be slower than an outside flow. Where a
  // check fails, the flows on that link join the region and it is refilled. It ends at the latest
  // when the region is the whole component (nothing outside to check), so the result is the
  // max-min allocation; checks use a 1e-9 relative tolerance against floating-point residue.
  constexpr double kTol = 1e-9;
  begin_region();
  for (uint32_t s : arrivals_) {
    if (flows_[s].active) add_to_region(s);
  }
  if (correction_.enabled) {
    // An arrival changes its links' flow counts, so their corrected capacity: every flow on them
    // is refilled, as on a completion's links.
    for (uint32_t s : arrivals_) {
      if (!flows_[s].active) continue;
      for (uint32_t h = 0; h < route_hops_[s]; ++h) seed_ports_.push_back(route_port(s, h));
    }
  }
  // A port is seeded once per flow that ended or started on it: synchronised collectives end
  // thousands of flows on one port at one instant, so each port's flows are walked once only
  // (walking them again adds no flow, so the region's order is the same).
  if (++seed_epoch_ == 0) {
    std::fill(seed_mark_.begin(), seed_mark_.end(), 0u);
    seed_epoch_ = 1;
  }
  for (net::PortId p : seed_ports_) {
    if (seed_mark_[p] == seed_epoch_) continue;
    seed_mark_[p] = seed_epoch_;
    for (const PortFlow& pf : flows_on_[p]) add_to_region(pf.slot);
  }
  if (component_flows_.empty()) return;
  ++recomputations_;
  for (;;) {
    flows_recomputed_ += component_flows_.size();
    fill_component();
    violators_.clear();
    for (std::size_t i = 0; i < component_ports_.size(); ++i) {
      const net::PortId p = component_ports_[i];
      double load = 0.0;
      double fastest_inside = 0.0;
      double fastest_outside = 0.0;
      bool has_outside = false;
      for (const PortFlow& pf : flows_on_[p]) {
        if (flow_mark_[pf.slot] == epoch_) {
          load += new_rate_[pf.slot];
          fastest_inside = std::max(fastest_inside, new_rate_[pf.slot]);
        } else {
          has_outside = true;
          load += rate_Bps_[pf.slot];
          fastest_outside = std::max(fastest_outside, rate_Bps_[pf.slot]);
        }
      }
      if (!has_outside) continue;
      const bool saturated = load >= shared_Bps_[p] * (1.0 - kTol);
      // Only a corrected capacity can shrink under flows held fixed outside the region.
      bool broken = correction_.enabled && load > shared_Bps_[p] * (1.0 + kTol);
      for (const PortFlow& pf : flows_on_[p]) {
        const uint32_t s = pf.slot;
        if (flow_mark_[s] == epoch_) {
          if (new_bottleneck_[s] == p && new_rate_[s] < fastest_outside * (1.0 - kTol))
            broken = true;
        } else if (bottleneck_[s] == p &&
                   (!saturated || rate_Bps_[s] < fastest_inside * (1.0 - kTol))) {
          broken = true;
        }
      }
      if (broken) {
        for (const PortFlow& pf : flows_on_[p]) {
          if (flow_mark_[pf.slot] != epoch_) violators_.push_back(pf.slot);
        }
      }
    }
    if (violators_.empty()) break;
    for (uint32_t s : violators_) add_to_region(s);
  }
  apply_rates();
}

void FlowBackend::fill_component() {
  // Progressive filling: repeatedly take the link whose equal share among its unfrozen flows is the
  // smallest, give that share to those flows, and remove them from every link they cross. A link's
  // share never decreases as flows freeze elsewhere, so a lazy min-heap of shares suffices (a scan
  // of a few links does the same at less cost). Ties break by port id, so the order (and every
  // floating-point operation) on one component is the same whether or not other components are
  // filled in the same pass.
  // Flows outside the region (Local mode only) keep their rates: the region shares what they leave.
  heap_.clear();
  for (net::PortId p : component_ports_) {
    double outside = 0.0;
    uint32_t inside = 0;
    for (const PortFlow& pf : flows_on_[p]) {
      if (flow_mark_[pf.slot] == epoch_) {
        ++inside;
      } else {
        outside += rate_Bps_[pf.slot];
      }
    }
    if (correction_.enabled) shared_Bps_[p] = shared_capacity(p);
    link_left_[p] = std::max(0.0, shared_Bps_[p] - outside);
    link_unfrozen_[p] = inside;
    if (inside > 0) heap_.push_back(Candidate{link_left_[p] / inside, p});
  }
  for (uint32_t s : component_flows_) frozen_[s] = 0;
  std::size_t unfrozen = component_flows_.size();
  // Gives link p's share to its region flows still unfrozen; `touched(q)` sees each other link
  // whose share that changes.
  auto freeze_on = [&](net::PortId p, double share, auto&& touched) {
    for (const PortFlow& pf : flows_on_[p]) {
      const uint32_t s = pf.slot;
      if (flow_mark_[s] != epoch_ || frozen_[s]) continue;
      frozen_[s] = 1;
      --unfrozen;
      new_rate_[s] = share;
      new_bottleneck_[s] = p;
      for (uint32_t h = 0; h < route_hops_[s]; ++h) {
        const net::PortId q = route_port(s, h);
        link_left_[q] = std::max(0.0, link_left_[q] - share);
        --link_unfrozen_[q];
        if (q != p && link_unfrozen_[q] > 0) touched(q);
      }
    }
  };
  if (heap_.size() <= kScannedLinks) {
    // A few links (a local refill's usual region: 4.4 on a 256-GPU step): scanning them for the
    // least share costs less than a heap push per flow and hop, and takes the same link each time
    // (the least fresh share, ties by port id), so every rate is the heap's to the bit.
    while (unfrozen > 0) {
      constexpr std::size_t kNoLink = SIZE_MAX;
      std::size_t best = kNoLink;
      double best_share = 0.0;
      for (std::size_t i = 0; i < heap_.size();) {
        const net::PortId q = heap_[i].port;
        if (link_unfrozen_[q] == 0) {  // every region flow on it has its rate
          heap_[i] = heap_.back();
          heap_.pop_back();
          continue;
        }
        const double share = link_left_[q] / link_unfrozen_[q];
        if (best == kNoLink || share < best_share ||
            (share == best_share && q < heap_[best].port)) {
          best = i;
          best_share = share;
        }
        ++i;
      }
      if (best == kNoLink) break;
      freeze_on(heap_[best].port, best_share, [](net::PortId) {});
    }
  } else {
    auto later = [](const Candidate& a, const Candidate& b) {
      return a.share > b.share || (a.share == b.share && a.port > b.port);
    };
    std::make_heap(heap_.begin(), heap_.end(), later);
    while (unfrozen > 0 && !heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), later);
      const Candidate c = heap_.back();
      heap_.pop_back();
      const net::PortId p = c.port;
      if (link_unfrozen_[p] == 0) continue;
      const double share = link_left_[p] / link_unfrozen_[p];
      if (share != c.share) continue;  // stale: a fresher entry for this port is in the heap
      freeze_on(p, share, [&](net::PortId q) {
        heap_.push_back(Candidate{link_left_[q] / link_unfrozen_[q], q});
        std::push_heap(heap_.begin(), heap_.end(), later);
      });
    }
  }
  SIM_CHECK(unfrozen == 0, "progressive filling left flows without a rate");
}

double FlowBackend::shared_capacity(net::PortId p) {
  const std::vector<PortFlow>& on = flows_on_[p];
  if (on.size() < 2) return capacity_Bps_[p];
  // A queue can build only where the links feeding this one can deliver more than it drains: sum
  // the capacity of the distinct upstream links its flows come in over. Flows on their first hop
  // come from the NIC itself, which never outruns its own link.
  if (++upstream_epoch_ == 0) {
    std::fill(upstream_mark_.begin(), upstream_mark_.end(), 0u);
    upstream_epoch_ = 1;
  }
  double inflow = 0.0;
  for (const PortFlow& pf : on) {
    if (pf.hop == 0) return capacity_Bps_[p];  // a NIC's port: every flow on it is on hop 0
    const net::PortId q = route_port(pf.slot, pf.hop - 1);
    if (upstream_mark_[q] == upstream_epoch_) continue;
    upstream_mark_[q] = upstream_epoch_;
    inflow += capacity_Bps_[q];
  }
  if (inflow <= capacity_Bps_[p] * (1.0 + 1e-9)) return capacity_Bps_[p];
  return capacity_Bps_[p] * correction_.efficiency(on.size());
}

void FlowBackend::apply_rates() {
  const Time now = simulation().now();
  for (uint32_t s : component_flows_) {
    Flow& f = flows_[s];
    const double rate = new_rate_[s];
    SIM_CHECK(rate > 0, "an active flow has no rate");
    bottleneck_[s] = new_bottleneck_[s];
    if (rate == rate_Bps_[s]) continue;  // its projected finish stands
    f.remaining_bytes = std::max(0.0, f.remaining_bytes - rate_Bps_[s] * (now - f.since).seconds());
    f.since = now;
    rate_Bps_[s] = rate;
    project_finish(s, now);
  }
}

void FlowBackend::project_finish(uint32_t slot, Time now) {
  // Rounded up to a picosecond: a flow never completes before its last byte has drained.
  const double rate = rate_Bps_[slot];
  const auto drain_ps = static_cast<int64_t>(std::ceil(flows_[slot].remaining_bytes / rate * 1e12));
  completions_.set(slot, (now + Time::ps(drain_ps)).picoseconds());
}

}  // namespace syncsim
