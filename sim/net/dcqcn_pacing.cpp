#include "sim/net/dcqcn_pacing.hpp"

#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/nic.hpp"

namespace syncsim::net {

void DcqcnPacing::add_flow(FlowId id, Bandwidth line_rate) {
  SIM_CHECK(id == flows_.size(), "DCQCN flows must be added in id order");
  DcqcnFlowState& d = flows_.emplace_back();
  d.rc = DcqcnRateController(params_, line_rate);
  d.next_send_ps = ctx_.now().picoseconds();
}

void DcqcnPacing::on_sent(FlowId id, uint32_t wire_bytes, uint32_t payload) {
  DcqcnFlowState& d = flows_[id];
  const FlowRecord& f = ctx_.flows[id];
  const int64_t now = ctx_.now().picoseconds();
  if (f.sent_bytes == f.size_bytes) d.rate_timer.cancel_pending();
  d.last_send_ps = now;
  d.last_wire_bytes = wire_bytes;
  // The byte counter runs only while the flow is rate-limited; its increases apply to this gap.
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
  DcqcnFlowState& d = flows_[id];
  const int64_t t = ctx_.now().picoseconds();
  if (d.last_cnp_ps != INT64_MIN && t - d.last_cnp_ps < params_.cnp_interval.picoseconds()) {
    return;
  }
  d.last_cnp_ps = t;
  const FlowRecord& f = ctx_.flows[id];
  std::vector<PortId>& routes = ctx_.routes;
  if (d.cnp_route_begin == UINT32_MAX) {
    // The reverse of the data path: port 2i and 2i+1 are the two directions of link i.
    d.cnp_route_begin = static_cast<uint32_t>(routes.size());
    for (uint32_t h = f.route_hops; h-- > 0;) routes.push_back(routes[f.route_begin + h] ^ 1U);
  }
  EgressPort& first = ctx_.egress(routes[d.cnp_route_begin]);
  // The highest class, ahead of data (ConnectX uses a dedicated CNP priority).
  const PacketRef ref = ctx_.new_packet(id, d.cnp_route_begin, control_frame_payload(first),
                                        cnp_priority_, PacketKind::Cnp, false);
  ++ctx_.counters.cnps;
  first.enqueue(ref);
}

void DcqcnPacing::on_cnp(FlowId id) {
  const FlowRecord& f = ctx_.flows[id];
  if (f.sent_bytes == f.size_bytes) return;  // nothing left to slow down
  DcqcnFlowState& d = flows_[id];
  if (!d.rc.on_cnp(ctx_.now())) return;
  ++ctx_.counters.rate_cuts;
  repace(id);
  // A cut restarts the rate-increase timer.
  d.rate_timer.cancel_pending();
  ctx_.queue.schedule(ctx_.now() + params_.rate_period, nics_[f.src], Nic::kRateTimer, id,
                      &d.rate_timer);
}

void DcqcnPacing::on_rate_timer(FlowId id) {
  DcqcnFlowState& d = flows_[id];
  const FlowRecord& f = ctx_.flows[id];
  if (f.sent_bytes == f.size_bytes) return;
  d.rc.on_rate_timer();
  repace(id);
  if (!d.rc.limited()) return;  // back at line rate: no timer until the next cut
  ctx_.queue.schedule(ctx_.now() + params_.rate_period, nics_[f.src], Nic::kRateTimer, id,
                      &d.rate_timer);
}

void DcqcnPacing::repace(FlowId id) {
  DcqcnFlowState& d = flows_[id];
  if (d.last_send_ps == INT64_MIN) return;
  const double gap =
      d.rc.limited() ? std::ceil(static_cast<double>(d.last_wire_bytes) * 8e12 / d.rc.rate_bps())
                     : 0.0;
  const int64_t next = d.last_send_ps + static_cast<int64_t>(gap);
  const bool earlier = next < d.next_send_ps;
  d.next_send_ps = next;
  const FlowRecord& f = ctx_.flows[id];
  if (earlier && f.sent_bytes < f.size_bytes) {
    nics_[f.src]->pacing_moved(std::max(next, ctx_.now().picoseconds()));
  }
}

}  // namespace syncsim::net
