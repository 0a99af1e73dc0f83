#include "sim/net/dcqcn_pacing.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/nic.hpp"

namespace syncsim::net {

void DcqcnPacing::add_flow(FlowId id, Bandwidth line_rate, bool persistent,
                           uint32_t persistent_qp) {
  SIM_CHECK(id == qp_of_flow_.size(), "DCQCN flows must be added in id order");
  uint32_t qp = UINT32_MAX;
  if (persistent) {
    const auto it = persistent_.find(persistent_qp);
    if (it != persistent_.end()) qp = it->second;
  }
  if (qp == UINT32_MAX) {
    qp = static_cast<uint32_t>(qps_.size());
    DcqcnQpState& d = qps_.emplace_back();
    last_cnp_ps_.push_back(INT64_MIN);
    d.src = ctx_.flows[id].src;
    d.params = d.src < params_of_.size() ? params_of_[d.src] : nullptr;
    // Without DCQCN at the source the default controller is never limited: no pacing.
    if (d.params != nullptr) d.rc = DcqcnRateController(*d.params, line_rate);
    d.next_send_ps = ctx_.now().picoseconds();
    d.persistent = persistent;
    if (persistent) persistent_.emplace(persistent_qp, qp);
  }
  SIM_CHECK(qps_[qp].src == ctx_.flows[id].src, "a queue pair belongs to one source NIC");
  qp_of_flow_.push_back(qp);
  // A windowed run lays the CNP route out now, from the simulation's thread.
  cnp_route_of_flow_.push_back(node_ctx_ != nullptr ? ctx_.append_reverse_route(ctx_.flows[id])
                                                    : UINT32_MAX);
  DcqcnQpState& d = qps_[qp];
  if (d.sending_flows++ == 0) {
    catch_up(qp);
    if (d.rc.limited() && !d.timer_armed) arm_timer(qp, d.timer_due_ps);
  }
  const double start_rate =
      d.params != nullptr ? d.rc.rate_bps() : static_cast<double>(line_rate.bits_per_second());
  flow_stats_.push_back({.cnps = 0, .rate_cuts = 0, .min_rate_bps = start_rate});
}

void DcqcnPacing::catch_up(uint32_t qp) {
  DcqcnQpState& d = qps_[qp];
  if (!d.rc.limited() || d.timer_due_ps == INT64_MIN) return;
  const int64_t now = ctx_of(d.src).now().picoseconds();
  const int64_t period = d.params->rate_period.picoseconds();
  bool changed = false;
  // Each missed expiry is one increase event; a QP back at line rate stops counting. Bounded by
  // the idle time over the rate period.
  while (d.timer_due_ps <= now && d.rc.limited()) {
    d.rc.on_rate_timer();
    d.timer_due_ps += period;
    changed = true;
  }
  if (changed) repace(qp);
}

void DcqcnPacing::arm_timer(uint32_t qp, int64_t due_ps) {
  DcqcnQpState& d = qps_[qp];
  d.timer_due_ps = due_ps;
  d.rate_timer.cancel_pending();
  d.timer_armed = true;
  const NetContext& at = ctx_of(d.src);
  at.queue.schedule(Time::ps(std::max(due_ps, at.now().picoseconds())), nics_[d.src],
                    Nic::kRateTimer, qp, &d.rate_timer);
}

void DcqcnPacing::on_sent(FlowId id, uint32_t wire_bytes, uint32_t payload) {
  const uint32_t qp = qp_of_flow_[id];
  DcqcnQpState& d = qps_[qp];
  const FlowRecord& f = ctx_.flows[id];
  const int64_t now = ctx_of(d.src).now().picoseconds();
  if (f.sent_bytes == f.size_bytes && --d.sending_flows == 0) {
    // Nothing left to pace: the timer's missed expiries are applied when the QP sends again.
    d.rate_timer.cancel_pending();
    d.timer_armed = false;
  }
  d.last_send_ps = now;
  d.last_wire_bytes = wire_bytes;
  // The byte counter runs only while the QP is rate-limited; its increases apply to this gap.
  if (d.rc.limited()) d.rc.on_bytes_sent(payload);
  if (!d.rc.limited()) {
    // At line rate the port's serialization is the pacing.
    d.next_send_ps = now;
    return;
  }
  const double ps = static_cast<double>(wire_bytes) * 8e12 / d.rc.rate_bps();
  d.next_send_ps = now + static_cast<int64_t>(std::ceil(ps));
}

void DcqcnPacing::notify(FlowId id) {
  int64_t& last_cnp = last_cnp_ps_[qp_of_flow_[id]];
  const FlowRecord& f = ctx_.flows[id];
  // The notification point is the destination NIC's: without DCQCN there it sends no CNP.
  const DcqcnParams* np = f.dst < params_of_.size() ? params_of_[f.dst] : nullptr;
  if (np == nullptr) return;
  const NetContext& at = ctx_of(f.dst);
  const int64_t t = at.now().picoseconds();
  if (last_cnp != INT64_MIN && t - last_cnp < np->cnp_interval.picoseconds()) return;
  last_cnp = t;
  uint32_t& begin = cnp_route_of_flow_[id];
  if (begin == UINT32_MAX) begin = ctx_.append_reverse_route(ctx_.flows[id]);
  EgressPort& first = at.egress(at.routes[begin]);
  // The highest class, ahead of data (ConnectX uses a dedicated CNP priority).
  const PacketRef ref =
      at.new_packet(id, begin, control_frame_payload(first), cnp_priority_, PacketKind::Cnp, false);
  ++at.counters.cnps;
  ++flow_stats_[id].cnps;
  first.enqueue(ref);
}

void DcqcnPacing::on_cnp(FlowId id) {
  const uint32_t qp = qp_of_flow_[id];
  DcqcnQpState& d = qps_[qp];
  // A QP made for one flow that has sent everything has nothing left to slow down; a persistent
  // one carries the cut into its next messages.
  if (d.params == nullptr) return;  // the source NIC runs no DCQCN
  if (d.sending_flows == 0 && !d.persistent) return;
  if (d.sending_flows == 0) catch_up(qp);
  const NetContext& at = ctx_of(d.src);
  if (!d.rc.on_cnp(at.now())) return;
  ++at.counters.rate_cuts;
  DcqcnFlowStats& stats = flow_stats_[id];
  ++stats.rate_cuts;
  stats.min_rate_bps = std::min(stats.min_rate_bps, d.rc.rate_bps());
  repace(qp);
  // A cut restarts the rate-increase timer (scheduled only while the QP has a flow sending).
  const int64_t due = at.now().picoseconds() + d.params->rate_period.picoseconds();
  if (d.sending_flows > 0) {
    arm_timer(qp, due);
  } else {
    d.rate_timer.cancel_pending();
    d.timer_armed = false;
    d.timer_due_ps = due;
  }
}

void DcqcnPacing::on_rate_timer(uint32_t qp) {
  DcqcnQpState& d = qps_[qp];
  d.timer_armed = false;
  if (d.sending_flows == 0) return;
  d.rc.on_rate_timer();
  repace(qp);
  d.timer_due_ps += d.params->rate_period.picoseconds();
  if (!d.rc.limited()) return;  // back at line rate: no timer until the next cut
  arm_timer(qp, d.timer_due_ps);
}

void DcqcnPacing::repace(uint32_t qp) {
  DcqcnQpState& d = qps_[qp];
  if (d.last_send_ps == INT64_MIN) return;
  const double gap =
      d.rc.limited() ? std::ceil(static_cast<double>(d.last_wire_bytes) * 8e12 / d.rc.rate_bps())
                     : 0.0;
  const int64_t next = d.last_send_ps + static_cast<int64_t>(gap);
  const bool earlier = next < d.next_send_ps;
  d.next_send_ps = next;
  if (earlier && d.sending_flows > 0) {
    nics_[d.src]->pacing_moved(std::max(next, ctx_of(d.src).now().picoseconds()));
  }
}

}  // namespace syncsim::net
