// InfiniBand congestion control at the NICs: BECN generation, CCTI and pacing (mechanism:
// ib_congestion_control.hpp).
#include "sim/net/ib_congestion_control.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/nic.hpp"

namespace syncsim::net {

void IbCongestionControl::add_flow(FlowId id, Bandwidth line_rate, bool /*persistent*/,
                                   uint32_t /*queue_pair*/) {
  SIM_CHECK(id == flows_.size(), "IB congestion control flows must be added in id order");
  FlowState& f = flows_.emplace_back();
  f.cc = IbCcti(params_);
  f.line_rate = line_rate;
  f.next_send_ps = ctx_.now().picoseconds();
  // A windowed run lays the BECN route out now, from the simulation's thread.
  if (node_ctx_ != nullptr) f.becn_route = ctx_.append_reverse_route(ctx_.flows[id]);
}

void IbCongestionControl::on_sent(FlowId id, uint32_t wire_bytes, uint32_t /*payload*/) {
  FlowState& f = flows_[id];
  const int64_t end = ctx_of(ctx_.flows[id].src).now().picoseconds() +
                      f.line_rate.tx_time(Bytes{wire_bytes}).picoseconds();
  f.last_end_ps = end;
  f.last_wire_bytes = wire_bytes;
  // CCTI at its minimum with an empty table entry: the port's serialization is the pacing.
  f.next_send_ps = end + f.cc.delay().picoseconds();
}

void IbCongestionControl::notify(FlowId id) {
  FlowState& f = flows_[id];
  if (f.becn_route == UINT32_MAX) f.becn_route = ctx_.append_reverse_route(ctx_.flows[id]);
  const NetContext& at = ctx_of(ctx_.flows[id].dst);
  EgressPort& first = at.egress(at.routes[f.becn_route]);
  const PacketRef ref = at.new_packet(id, f.becn_route, control_frame_payload(first),
                                      becn_priority_, PacketKind::Cnp, false);
  ++at.counters.cnps;
  first.enqueue(ref);
}

void IbCongestionControl::on_cnp(FlowId id) {
  FlowState& f = flows_[id];
  const FlowRecord& rec = ctx_.flows[id];
  if (rec.sent_bytes >= rec.size_bytes) return;  // nothing left to slow down
  f.cc.on_becn();
  f.max_ccti = std::max(f.max_ccti, f.cc.index());
  ++ctx_of(rec.src).counters.rate_cuts;
  repace(id);
  if (!f.timer_armed && f.cc.above_min()) arm_timer(id);
}

void IbCongestionControl::arm_timer(FlowId id) {
  FlowState& f = flows_[id];
  f.timer_armed = true;
  const NodeId src = ctx_.flows[id].src;
  const NetContext& at = ctx_of(src);
  at.queue.schedule(at.now() + params_.ccti_timer, nics_[src], Nic::kRateTimer, id, &f.timer);
}

void IbCongestionControl::on_rate_timer(uint32_t flow) {
  FlowState& f = flows_[flow];
  f.timer_armed = false;
  const FlowRecord& rec = ctx_.flows[flow];
  if (!f.cc.on_timer()) return;
  repace(flow);
  // A flow that has sent everything stops its timer; its state goes with it.
  if (f.cc.above_min() && rec.sent_bytes < rec.size_bytes) arm_timer(flow);
}

void IbCongestionControl::repace(FlowId id) {
  FlowState& f = flows_[id];
  if (f.last_end_ps == INT64_MIN) return;
  const int64_t next = f.last_end_ps + f.cc.delay().picoseconds();
  const bool earlier = next < f.next_send_ps;
  f.next_send_ps = next;
  const FlowRecord& rec = ctx_.flows[id];
  if (earlier && rec.sent_bytes < rec.size_bytes) {
    nics_[rec.src]->pacing_moved(std::max(next, ctx_of(rec.src).now().picoseconds()));
  }
}

double IbCongestionControl::rate_bps(FlowId id) const {
  const FlowState& f = flows_[id];
  const auto line = static_cast<double>(f.line_rate.bits_per_second());
  if (f.last_wire_bytes == 0) return line;
  const auto tx = static_cast<double>(f.line_rate.tx_time(Bytes{f.last_wire_bytes}).picoseconds());
  const auto delay = static_cast<double>(f.cc.delay().picoseconds());
  return line * tx / (tx + delay);
}

}  // namespace syncsim::net
