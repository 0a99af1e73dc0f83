#include "sim/net/go_back_n.hpp"

#include <algorithm>

#include "sim/net/dcqcn_pacing.hpp"

namespace syncsim::net {

void GoBackN::init_flow(FlowId /*id*/, const ReliableFlowState& /*s*/) { gbn_.emplace_back(); }

bool GoBackN::can_send(FlowId id) const {
  const ReliableFlowState& s = state(id);
  return s.nxt < s.packets;
}

uint32_t GoBackN::take_seq(FlowId /*id*/, ReliableFlowState& s) { return s.nxt++; }

int64_t GoBackN::rto_ps(FlowId /*id*/) const { return params_.timeout.picoseconds(); }

void GoBackN::on_timeout(FlowId /*id*/, ReliableFlowState& /*s*/) {}

void GoBackN::on_ack(PacketRef packet) {
  const Packet& p = ctx_.packet(packet);
  const FlowId id = p.flow;
  const uint32_t ack = p.seq;
  const bool nak = p.kind == PacketKind::Nak;
  ctx_.pool.release(packet);
  ReliableFlowState& s = state(id);
  if (ack > s.una) {
    s.una = ack;
    if (s.nxt < s.una) s.nxt = s.una;
    restart_timer(id, s, s.una < s.nxt);
  }
  if (nak && ack < s.nxt) {
    // Go-back-N: resend from the PSN the receiver expects.
    s.nxt = std::max(ack, s.una);
    rewound(id, s);
  }
  update_listing(id, s);
}

void GoBackN::on_data(PacketRef packet) {
  const Packet& p = ctx_.packet(packet);
  const FlowId id = p.flow;
  const uint32_t seq = p.seq;
  const bool ce = p.ecn_ce;
  // notify() allocates a CNP and may grow the packet pool: read `p` only before it.
  const uint32_t payload = p.payload_bytes;
  ReliableFlowState& s = state(id);
  GoBackNFlowState& g = gbn_[index_of(id)];
  if (ce && dcqcn_ != nullptr) dcqcn_->notify(id);
  if (seq == s.rcv_nxt) {
    ++s.rcv_nxt;
    g.nak_sent = false;
    const bool ack_now = ++g.since_ack >= params_.ack_every || s.rcv_nxt == s.packets;
    if (ack_now) g.since_ack = 0;
    const uint32_t expected = s.rcv_nxt;
    // deliver() may complete the message, and its callback start new flows.
    ctx_.deliver(packet);
    if (ack_now) send_control(id, PacketKind::Ack, expected, false);
    return;
  }
  ctx_.counters.bytes_discarded += payload;
  ctx_.pool.release(packet);
  if (seq > s.rcv_nxt) {
    // Out of order: a packet before it was lost. One NAK per gap; the rest are discarded.
    if (!g.nak_sent) {
      g.nak_sent = true;
      send_control(id, PacketKind::Nak, s.rcv_nxt, false);
    }
  } else {
    // A duplicate: the sender missed an ACK (or timed out); tell it where the receiver stands.
    send_control(id, PacketKind::Ack, s.rcv_nxt, false);
  }
}

}  // namespace syncsim::net
