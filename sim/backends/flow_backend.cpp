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

void FlowBackend::schedule_timer() {
  const Time next = completions_.empty() ? Time::max() : Time::ps(completions_.top().key);
  if (next == timer_at_) return;
  timer_token_.cancel_pending();
  timer_at_ = next;
  if (next != Time::max()) simulation().queue().schedule(next, this, kTimer, 0, &timer_token_);
}

}  // namespace syncsim
