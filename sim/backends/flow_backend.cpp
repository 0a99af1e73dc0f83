#include "sim/backends/flow_backend.hpp"

#include <algorithm>
#include <cmath>

#include "sim/backends/path_time.hpp"
#include "sim/core/check.hpp"

namespace syncsim {

FlowBackend::FlowBackend(Simulation& sim, const net::NetworkSpec& spec, Recompute mode)
    : FlowBackend(sim, spec, mode, spec.flow_cc) {}

FlowBackend::FlowBackend(Simulation& sim, const net::NetworkSpec& spec, Recompute mode,
                         FlowCcCorrection correction)
    : TransferBackend(sim, spec), mode_(mode), correction_(correction), routing_(spec) {
  SIM_CHECK(!correction_.enabled ||
                (correction_.contended_efficiency > 0 && correction_.contended_efficiency <= 1),
            "flow CC correction: contended_efficiency must be in (0, 1]");
  const auto ports = routing_.ports().size();
  capacity_Bps_.resize(ports);
  for (net::PortId p = 0; p < ports; ++p) {
    const net::LinkParams& l = routing_.link_of(p);
    const auto mtu = static_cast<double>(l.mtu.count());
    const auto header = static_cast<double>(l.header.count());
    capacity_Bps_[p] = l.bandwidth.bytes_per_second() * mtu / (mtu + header);
  }
  shared_Bps_ = capacity_Bps_;
  if (correction_.enabled) upstream_mark_.assign(ports, 0);
  link_left_.assign(ports, 0.0);
  link_unfrozen_.assign(ports, 0);
  port_mark_.assign(ports, 0);
  seed_mark_.assign(ports, 0);
  flows_on_.resize(ports);
}

double FlowBackend::rate_bps(TransferId id) const {
  for (uint32_t s = 0; s < flows_.size(); ++s) {
    if (flows_[s].active && flows_[s].transfer == id) return rate_Bps_[s] * 8.0;
  }
  return 0.0;
}

std::vector<std::pair<TransferId, double>> FlowBackend::active_rates_bps() const {
  std::vector<std::pair<TransferId, double>> out;
  for (uint32_t s = 0; s < flows_.size(); ++s) {
    if (flows_[s].active) out.emplace_back(flows_[s].transfer, rate_Bps_[s] * 8.0);
  }
  return out;
}

std::vector<std::pair<TransferId, double>> FlowBackend::global_rates_bps() {
  collect_all();
  fill_component();
  std::vector<std::pair<TransferId, double>> out;
  for (uint32_t s = 0; s < flows_.size(); ++s) {
    if (flows_[s].active) out.emplace_back(flows_[s].transfer, new_rate_[s] * 8.0);
  }
  return out;
}

uint32_t FlowBackend::allocate_slot() {
  if (!free_slots_.empty()) {
    const uint32_t s = free_slots_.back();
    free_slots_.pop_back();
    return s;
  }
  const auto s = static_cast<uint32_t>(flows_.size());
  flows_.emplace_back();
  flow_mark_.push_back(0);
  frozen_.push_back(0);
  rate_Bps_.push_back(0.0);
  route_hops_.push_back(0);
  new_rate_.push_back(0.0);
  bottleneck_.push_back(0);
  new_bottleneck_.push_back(0);
  route_arena_.resize(flows_.size() * stride_);
  hop_pos_.resize(flows_.size() * stride_);
  return s;
}

void FlowBackend::ensure_stride(uint16_t hops) {
  if (hops <= stride_) return;
  // Rare (a route longer than any before): re-lay the per-slot arrays out at the wider stride.
  const uint32_t wider = std::max<uint32_t>(hops, stride_ * 2);
  std::vector<net::PortId> routes(flows_.size() * wider);
  std::vector<uint32_t> positions(flows_.size() * wider);
  for (std::size_t s = 0; s < flows_.size(); ++s) {
    for (uint32_t h = 0; h < route_hops_[s]; ++h) {
      routes[s * wider + h] = route_arena_[s * stride_ + h];
      positions[s * wider + h] = hop_pos_[s * stride_ + h];
    }
  }
  route_arena_ = std::move(routes);
  hop_pos_ = std::move(positions);
  stride_ = wider;
}

void FlowBackend::launch(TransferId id, net::NodeId src, net::NodeId dst, Bytes size, uint32_t qp,
                         uint32_t send_queue) {
  route_scratch_.clear();
  const net::LoadBalancing lb = spec().load_balancing.mode;
  if (lb == net::LoadBalancing::PacketSpray || lb == net::LoadBalancing::Adaptive) {
    // Per-packet balancing spreads the transfer over every shortest path: one fluid sub-flow per
    // path, the bytes split evenly (see the class comment).
    uint64_t paths = 1;
    const bool routed = routing_.route_indexed(src, dst, 0, route_scratch_, &paths);
    // Only a fault can leave two NICs without a route: the single-path code below parks the flow.
    SIM_CHECK(routed || !port_dead_.empty(), "no route between the transfer's NICs");
    const auto parts = !routed ? 1U
                               : static_cast<uint32_t>(std::min<uint64_t>(
                                     {paths, kMaxSubflows, static_cast<uint64_t>(size.count())}));
    if (parts > 1) {
      uint32_t group = 0;
      if (free_groups_.empty()) {
        group = static_cast<uint32_t>(group_left_.size());
        group_left_.push_back(parts);
      } else {
        group = free_groups_.back();
        free_groups_.pop_back();
        group_left_[group] = parts;
      }
      const int64_t share = size.count() / parts;
      const int64_t extra = size.count() % parts;
      if (send_queue != kNone) send_queues_[send_queue].draining = parts;
      for (uint32_t k = 0; k < parts; ++k) {
        if (k > 0) {
          route_scratch_.clear();
          routing_.route_indexed(src, dst, k, route_scratch_);
        }
        add_flow(id, Bytes{share + (k < extra ? 1 : 0)}, src, dst, qp, true, send_queue, group);
      }
      return;
    }
    route_scratch_.clear();
  }
  if (send_queue != kNone) {
    SendQueue& q = send_queues_[send_queue];
    q.draining = 1;
    const uint32_t index = persistent_index(qp);
    if (const auto kept = qp_routes_.find(index, path_epoch_); !kept.empty()) {
      route_scratch_.assign(kept.begin(), kept.end());
    } else {
      if (!routing_.route(src, dst, routing_.flow_hash(src, dst, qp), route_scratch_)) {
        // Only a fault can leave two NICs without a route: nothing kept, the flow waits.
        SIM_CHECK(!port_dead_.empty(), "no route between the transfer's NICs");
        route_scratch_.assign(1, routing_.ports_of(src)[0]);
        add_flow(id, size, src, dst, qp, false, send_queue);
        return;
      }
      qp_routes_.keep(index, route_scratch_, path_epoch_);
      q.timed_bytes = -1;  // timed on the route it had before
    }
    if (q.timed_bytes != size.count()) {
      q.timing =
          path_timing(route_scratch_.data(), static_cast<uint16_t>(route_scratch_.size()), size);
      q.timed_bytes = size.count();
    }
    const PathTiming timing = q.timing;
    add_flow(id, size, src, dst, qp, true, send_queue, kNoGroup, &timing);
    return;
  }
  const bool routed = routing_.route(src, dst, routing_.flow_hash(src, dst, qp), route_scratch_);
  // Only a fault can leave two NICs without a route (flow_backend_faults.cpp): the flow then waits
  // for one, on the NIC's own port for its timing.
  SIM_CHECK(routed || !port_dead_.empty(), "no route between the transfer's NICs");
  if (!routed) route_scratch_.assign(1, routing_.ports_of(src)[0]);
  add_flow(id, size, src, dst, qp, routed, send_queue);
}

FlowBackend::PathTiming FlowBackend::path_timing(const net::PortId* route, uint16_t hops,
                                                 Bytes size) const {
  // The pipeline latency beyond the fluid drain at the route's bottleneck rate.
  double bottleneck = capacity_Bps_[route[0]];
  for (std::size_t h = 1; h < hops; ++h) bottleneck = std::min(bottleneck, capacity_Bps_[route[h]]);
  const Time alone = idle_path_time(routing_, route, hops, size);
  const double drain_s = static_cast<double>(size.count()) / bottleneck;
  const Time drain = Time::ps(static_cast<int64_t>(std::ceil(drain_s * 1e12)));
  const int64_t mtu = routing_.path_mtu(route, hops).count();
  return PathTiming{alone > drain ? alone - drain : Time::zero(),
                    static_cast<uint64_t>((size.count() + mtu - 1) / mtu) * hops};
}

void FlowBackend::add_flow(TransferId id, Bytes size, net::NodeId src, net::NodeId dst, uint32_t qp,
                           bool routed, uint32_t send_queue, uint32_t group,
                           const PathTiming* timing) {
  const auto hops = static_cast<uint16_t>(route_scratch_.size());
  const net::PortId* route = route_scratch_.data();
  add_route_bytes(route, hops, size);
  const PathTiming path = timing != nullptr ? *timing : path_timing(route, hops, size);

  ensure_stride(hops);
  const uint32_t slot = allocate_slot();
  Flow& f = flows_[slot];
  f.transfer = id;
  f.group = group;
  f.send_queue = send_queue;
  f.bytes = size.count();
  route_hops_[slot] = hops;
  f.active = true;
  f.remaining_bytes = static_cast<double>(size.count());
  rate_Bps_[slot] = 0.0;
  f.since = simulation().now();
  f.tail_latency = path.tail_latency;
  f.src = src;
  f.dst = dst;
  f.queue_pair = qp;
  for (uint32_t h = 0; h < hops; ++h) route_arena_[std::size_t{slot} * stride_ + h] = route[h];
  ++active_count_;
  peak_active_ = std::max(peak_active_, active_count_);
  if (routed && !crosses_dead_port(slot)) {
    attach(slot);
  } else {
    f.stalled = true;
    if (!routed) ++counters_.flows_unroutable;
  }

  counters_.packet_hops += path.packet_hops;
  counters_.bytes_injected += size.count();
  if (!arrivals_pending_) {
    // Transfers starting at one instant share one recomputation.
    arrivals_pending_ = true;
    simulation().queue().schedule(simulation().now(), this, kArrivals);
  }
}

void FlowBackend::on_event(uint32_t kind, uint64_t arg) {
  switch (kind) {
    case kArrivals:
      arrivals_pending_ = false;
      update();
      break;
    case kTimer:
      timer_at_ = Time::max();
      update();
      break;
    case kDeliver: {
      const Delivery d = deliveries_[arg];
      free_deliveries_.push_back(static_cast<uint32_t>(arg));
      counters_.bytes_delivered += d.bytes;
      if (d.group != kNoGroup) {
        if (--group_left_[d.group] > 0) break;  // the transfer completes with its last sub-flow
        free_groups_.push_back(d.group);
      }
      const TransferId id = d.transfer;
      complete(id);
      break;
    }
    case kFault:
      apply_fault(faults_[arg]);
      break;
    case kConverge:
      converge(arg);
      break;
    default:
      SIM_CHECK(false, "unknown flow backend event");
  }
}

void FlowBackend::update() {
  update_rates();
  seed_ports_.clear();  // faults may seed ports before calling update()
}

void FlowBackend::update_rates() {
  const Time now = simulation().now();
  // Completions due now: the projected finish (rounded up to a picosecond) has come; of one
  // picosecond, by slot.
  while (!completions_.empty() && completions_.top().key <= now.picoseconds()) {
    const uint32_t slot = completions_.top().id;
    completions_.pop();
    Flow& f = flows_[slot];
    SIM_CHECK(f.active, "a finished flow was still due to complete");
    uint32_t delivery = 0;
    if (free_deliveries_.empty()) {
      delivery = static_cast<uint32_t>(deliveries_.size());
      deliveries_.push_back(Delivery{});
    } else {
      delivery = free_deliveries_.back();
      free_deliveries_.pop_back();
    }
    deliveries_[delivery] = Delivery{f.transfer, f.group, f.bytes};
    simulation().queue().schedule(now + f.tail_latency, this, kDeliver, delivery);
    if (take_over(slot)) continue;  // its queue pair's next transfer runs on in its place
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
    f.active = false;
    --active_count_;
    free_slots_.push_back(slot);
    if (f.send_queue != kNone && --send_queues_[f.send_queue].draining == 0) {
      released_.push_back(f.send_queue);
    }
  }
  // Queue pairs whose transfer has drained start their next one now (after the loop: starting a
  // flow may grow flows_). It joins this update's arrivals.
  start_released();
  if (seed_ports_.empty() && arrivals_.empty()) {
    schedule_timer();
    return;
  }
  if (mode_ == Recompute::Local) {
    solve_local();
    arrivals_.clear();
    schedule_timer();
    return;
  }
  if (mode_ == Recompute::Global) {
    collect_all();
  } else {
    collect_component();
  }
  arrivals_.clear();
  if (!component_flows_.empty()) {
    ++recomputations_;
    flows_recomputed_ += component_flows_.size();
    fill_component();
    apply_rates();
  }
  schedule_timer();
}

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
    const auto drain_ps = static_cast<int64_t>(std::ceil(f.remaining_bytes / rate * 1e12));
    completions_.set(s, (now + Time::ps(drain_ps)).picoseconds());
  }
}

void FlowBackend::schedule_timer() {
  const Time next = completions_.empty() ? Time::max() : Time::ps(completions_.top().key);
  if (next == timer_at_) return;
  timer_token_.cancel_pending();
  timer_at_ = next;
  if (next != Time::max()) simulation().queue().schedule(next, this, kTimer, 0, &timer_token_);
}

}  // namespace syncsim
