#include "sim/net/reliable_transport.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/nic.hpp"

namespace syncsim::net {

void ReliableTransport::rerouted(FlowId id) {
  receiver(id).ack_route_begin = ctx_.append_reverse_route(ctx_.flows[id]);
}

void ReliableTransport::park(FlowId id) {
  ReliableFlowState& s = state(id);
  if (s.parked) return;
  s.parked = true;
  s.timer_token.cancel_pending();
  s.timer_pending = false;
  s.rto_deadline_ps = INT64_MAX;
  if (s.in_active) {
    s.in_active = false;
    nics_[ctx_.flows[id].src]->deactivate(id);
  }
}

void ReliableTransport::unpark(FlowId id) {
  ReliableFlowState& s = state(id);
  if (!s.parked) return;
  s.parked = false;
  // Still behind an earlier message of its queue pair: it has sent nothing, and admit() lists it.
  if (ctx_.flows[id].queued) return;
  if (s.una >= s.packets) return;
  on_timeout(id, s);
  s.nxt = s.una;
  rewound(id, s);
  update_listing(id, s);
  after_rewind(id);
}

void ReliableTransport::add_flow(FlowId id) {
  FlowRecord& f = ctx_.flows[id];
  ReliableFlowState s;
  const auto mtu = static_cast<int64_t>(f.mtu_bytes);
  const int64_t packets = (f.size_bytes + mtu - 1) / mtu;
  // PSNs here are offsets into the message, so the bound is per message; the queue pair's wire PSN
  // (24 bits) wraps across its messages (send_queue.hpp).
  SIM_CHECK(packets < static_cast<int64_t>(kNoSeq), "message too large for 32-bit PSNs");
  s.packets = static_cast<uint32_t>(packets);
  ReliableReceiverState r;
  r.packets = s.packets;
  r.ack_route_begin = ctx_.append_reverse_route(f);
  s.in_active = !f.queued;
  f.transport_state = static_cast<uint32_t>(flows_.size());
  init_flow(id, s);
  flows_.push_back(s);
  receivers_.push_back(r);
}

PacketRef ReliableTransport::next_packet(FlowId id) {
  FlowRecord& f = ctx_.flows[id];
  ReliableFlowState& s = state(id);
  const uint32_t seq = take_seq(id, s);
  const int64_t offset = static_cast<int64_t>(seq) * f.mtu_bytes;
  const int64_t payload = std::min<int64_t>(f.mtu_bytes, f.size_bytes - offset);
  SIM_CHECK(payload > 0, "a reliable flow sent a PSN past its end");
  const NetContext& at = src_ctx(id);
  const PacketRef ref = at.new_packet(id, f.route_begin, static_cast<uint32_t>(payload), f.priority,
                                      PacketKind::Data, false);
  at.packet(ref).seq = seq;
  f.sent_bytes = std::min<int64_t>(f.size_bytes, static_cast<int64_t>(s.nxt) * f.mtu_bytes);
  return ref;
}

bool ReliableTransport::on_sent(FlowId id, uint32_t seq, uint32_t payload) {
  ReliableFlowState& s = state(id);
  bool last_new = false;
  if (seq < s.high) {
    NetworkCounters& c = src_ctx(id).counters;
    ++c.retransmitted_packets;
    c.retransmitted_bytes += payload;
  } else {
    s.high = seq + 1;
    last_new = s.high == s.packets;
  }
  if (s.rto_deadline_ps == INT64_MAX) arm_timer(id, s);
  return last_new;
}

bool ReliableTransport::admit(FlowId id) {
  ReliableFlowState& s = state(id);
  s.in_active = !s.parked && can_send(id);
  return s.in_active;
}

void ReliableTransport::arm_timer(FlowId id, ReliableFlowState& s) {
  if (s.parked) return;
  const NetContext& at = src_ctx(id);
  s.rto_deadline_ps = at.now().picoseconds() + rto_ps(id);
  if (s.timer_pending) return;  // the pending event re-arms itself at the new deadline
  s.timer_pending = true;
  at.queue.schedule(Time::ps(s.rto_deadline_ps), nics_[ctx_.flows[id].src], Nic::kRetransmitTimer,
                    id, &s.timer_token);
}

void ReliableTransport::restart_timer(FlowId id, ReliableFlowState& s, bool outstanding) {
  s.rto_deadline_ps = INT64_MAX;
  if (s.una < s.packets && outstanding) arm_timer(id, s);
  if (s.una >= s.packets && s.timer_pending) {
    // All acknowledged: drop the pending timer, so the run does not end on a dead event.
    s.timer_token.cancel_pending();
    s.timer_pending = false;
  }
}

void ReliableTransport::update_listing(FlowId id, ReliableFlowState& s) {
  // Listed again by unpark(); a message queued behind its queue pair's head, by admit().
  if (s.parked || ctx_.flows[id].queued) return;
  const bool may_send = can_send(id);
  if (s.in_active && !may_send) {
    s.in_active = false;
    nics_[ctx_.flows[id].src]->deactivate(id);
  } else if (!s.in_active && may_send) {
    s.in_active = true;
    nics_[ctx_.flows[id].src]->reactivate(id);
  }
}

void ReliableTransport::rewound(FlowId id, const ReliableFlowState& s) {
  FlowRecord& f = ctx_.flows[id];
  f.sent_bytes = std::min<int64_t>(f.size_bytes, static_cast<int64_t>(s.nxt) * f.mtu_bytes);
}

void ReliableTransport::on_timer(FlowId id) {
  ReliableFlowState& s = state(id);
  s.timer_pending = false;
  if (s.una >= s.packets || s.rto_deadline_ps == INT64_MAX) return;
  const NetContext& at = src_ctx(id);
  if (at.now().picoseconds() < s.rto_deadline_ps) {
    s.timer_pending = true;
    at.queue.schedule(Time::ps(s.rto_deadline_ps), nics_[ctx_.flows[id].src], Nic::kRetransmitTimer,
                      id, &s.timer_token);
    return;
  }
  // Nothing came back in time: resend from the oldest unacknowledged PSN.
  ++at.counters.timeouts;
  on_timeout(id, s);
  s.nxt = s.una;
  rewound(id, s);
  s.rto_deadline_ps = INT64_MAX;  // re-armed by the next packet sent
  update_listing(id, s);
  after_rewind(id);
}

void ReliableTransport::send_control(FlowId id, PacketKind kind, uint32_t seq, bool ece) {
  const ReliableReceiverState& r = receiver(id);
  const NetContext& at = dst_ctx(id);
  EgressPort& first = at.egress(at.routes[r.ack_route_begin]);
  // ACKs share the data's class (and its losses).
  const PacketRef ref = at.new_packet(id, r.ack_route_begin, control_frame_payload(first),
                                      ctx_.flows[id].priority, kind, ece);
  at.packet(ref).seq = seq;
  ++(kind == PacketKind::Nak ? at.counters.naks : at.counters.acks);
  first.enqueue(ref);
}

}  // namespace syncsim::net
