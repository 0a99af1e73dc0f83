#include "sim/net/go_back_n.hpp"

#include <algorithm>
#include <utility>

#include "sim/net/nic_pacing.hpp"

namespace syncsim::net {

namespace {
bool is_placed(const std::vector<uint64_t>& bits, uint32_t seq) {
  return ((bits[seq / 64] >> (seq % 64)) & 1U) != 0;
}
}  // namespace

void GoBackN::init_flow(FlowId id, const ReliableFlowState& s) {
  GoBackNFlowState g;
  g.lossless = ((static_cast<uint32_t>(lossless_mask_) >> ctx_.flows[id].priority) & 1U) != 0;
  GoBackNReceiverState r;
  r.lossless = g.lossless;
  if (params_.out_of_order) r.placed.assign((std::size_t{s.packets} + 63) / 64, 0);
  gbn_.push_back(g);
  gbn_receivers_.push_back(std::move(r));
}

void GoBackN::place(PacketRef packet, FlowId id, uint32_t seq, uint32_t payload) {
  std::vector<uint64_t>& bits = gbn_receivers_[index_of(id)].placed;
  if (is_placed(bits, seq)) {
    // A duplicate (the sender went back over PSNs placed already): tell it where we stand.
    const NetContext& at = dst_ctx(id);
    at.counters.bytes_discarded += payload;
    at.pool.release(packet);
    ack(id, receiver(id).rcv_nxt);
    return;
  }
  bits[seq / 64] |= uint64_t{1} << (seq % 64);
  // Never the message's last byte: rcv_nxt is still missing, so this cannot complete the flow.
  dst_ctx(id).deliver(packet);
}

bool GoBackN::can_send(FlowId id) const {
  const ReliableFlowState& s = state(id);
  return s.nxt < s.packets && !gbn_[index_of(id)].failed;
}

void GoBackN::retried(FlowId id, GoBackNFlowState& g) {
  if (!g.lossless || g.failed) return;
  if (++g.retries > params_.lossless_retry_count) {
    g.failed = true;
    ++src_ctx(id).counters.rc_retry_exceeded;
  }
}

uint32_t GoBackN::take_seq(FlowId /*id*/, ReliableFlowState& s) { return s.nxt++; }

int64_t GoBackN::rto_ps(FlowId id) const {
  return gbn_[index_of(id)].lossless ? params_.lossless_timeout.picoseconds()
                                     : params_.timeout.picoseconds();
}

void GoBackN::on_timeout(FlowId id, ReliableFlowState& /*s*/) { retried(id, gbn_[index_of(id)]); }

void GoBackN::on_ack(const NetContext& at, PacketRef packet) {
  const Packet& p = at.packet(packet);
  const FlowId id = p.flow;
  const uint32_t ack_seq = p.seq;
  const bool nak = p.kind == PacketKind::Nak;
  at.pool.release(packet);
  acknowledged(id, ack_seq, nak);
}

void GoBackN::acknowledged(FlowId id, uint32_t ack_seq, bool nak) {
  ReliableFlowState& s = state(id);
  GoBackNFlowState& g = gbn_[index_of(id)];
  if (ack_seq > s.una) {
    g.retries = 0;
    s.una = ack_seq;
    if (s.nxt < s.una) s.nxt = s.una;
    restart_timer(id, s, s.una < s.nxt);
  }
  if (nak && ack_seq < s.nxt) {
    // Go-back-N: resend from the PSN the receiver expects.
    s.nxt = std::max(ack_seq, s.una);
    rewound(id, s);
    retried(id, g);
  }
  update_listing(id, s);
}

void GoBackN::ack(FlowId id, uint32_t expected) {
  if (gbn_receivers_[index_of(id)].lossless) {
    const NetContext& from = dst_ctx(id);
    const NetContext& to = src_ctx(id);
    if (&from == &to) {
      acknowledged(id, expected, false);
    } else {
      from.post(to, from.now() + from.lookahead, this, kOffWireAck, flow_and_seq(id, expected));
    }
  } else {
    send_control(id, PacketKind::Ack, expected, false);
  }
}

void GoBackN::on_data_lost(const NetContext& at, const Packet& packet) {
  const FlowRecord& f = ctx_.flows[packet.flow];
  if (f.transport_state == kNoTransportState) return;
  // The sender's copy of the flag: the receiver's state may be another partition's.
  if (!gbn_[f.transport_state].lossless) return;
  const NetContext& to = dst_ctx(packet.flow);
  if (&at == &to) {
    note_loss(packet.flow, packet.seq, at.now().picoseconds());
  } else {
    at.post(to, at.now() + at.lookahead, this, kLossNotice, flow_and_seq(packet.flow, packet.seq));
  }
}

void GoBackN::note_loss(FlowId id, uint32_t seq, int64_t lost_ps) {
  GoBackNReceiverState& g = gbn_receivers_[index_of(id)];
  if (seq < receiver(id).rcv_nxt) return;
  if (g.loss_at_ps == INT64_MAX) {
    g.loss_at_ps = lost_ps;
    g.loss_high = seq;
  } else {
    g.loss_high = std::max(g.loss_high, seq);
  }
}

void GoBackN::on_event(uint32_t kind, uint64_t arg) {
  const auto id = static_cast<FlowId>(arg >> 32);
  const auto seq = static_cast<uint32_t>(arg);
  if (kind == kOffWireAck) {
    acknowledged(id, seq, false);
  } else {
    // Posted exactly one lookahead after the loss.
    const NetContext& at = dst_ctx(id);
    note_loss(id, seq, at.now().picoseconds() - at.lookahead.picoseconds());
  }
}

void GoBackN::on_data(const NetContext& at, PacketRef packet) {
  const Packet& p = at.packet(packet);
  const FlowId id = p.flow;
  const uint32_t seq = p.seq;
  const bool ce = p.ecn_ce;
  // notify() allocates a CNP and may grow the packet pool: read `p` only before it.
  const uint32_t payload = p.payload_bytes;
  ReliableReceiverState& s = receiver(id);
  GoBackNReceiverState& g = gbn_receivers_[index_of(id)];
  if (ce && pacing_ != nullptr) pacing_->notify(id);
  if (seq > s.rcv_nxt) ++at.counters.out_of_order_packets;
  if (seq > s.rcv_nxt && params_.out_of_order) {
    place(packet, id, seq, payload);
    return;
  }
  if (seq == s.rcv_nxt) {
    ++s.rcv_nxt;
    if (params_.out_of_order) {
      // The cumulative point jumps over the PSNs placed ahead of it.
      const std::vector<uint64_t>& bits = g.placed;
      while (s.rcv_nxt < s.packets && is_placed(bits, s.rcv_nxt)) ++s.rcv_nxt;
    }
    g.nak_sent = false;
    if (g.loss_at_ps != INT64_MAX && s.rcv_nxt > g.loss_high) {
      // Every packet lost since the recovery began has now arrived.
      const int64_t took = at.now().picoseconds() - g.loss_at_ps;
      g.loss_at_ps = INT64_MAX;
      NetworkCounters& c = at.counters;
      ++c.rc_recoveries;
      c.rc_recovery_time_ps += took;
      c.rc_recovery_max_ps = std::max(c.rc_recovery_max_ps, took);
      ctx_.flows[id].rc_recovery_ps += took;
    }
    const bool ack_now = ++g.since_ack >= params_.ack_every || s.rcv_nxt == s.packets;
    if (ack_now) g.since_ack = 0;
    const uint32_t expected = s.rcv_nxt;
    // deliver() may complete the message, and its callback start new flows.
    at.deliver(packet);
    if (ack_now) ack(id, expected);
    return;
  }
  at.counters.bytes_discarded += payload;
  at.pool.release(packet);
  if (seq > s.rcv_nxt) {
    // Out of order: a packet before it was lost. One NAK per gap; the rest are discarded.
    if (!g.nak_sent) {
      g.nak_sent = true;
      send_control(id, PacketKind::Nak, s.rcv_nxt, false);
    }
  } else {
    // A duplicate: the sender missed an ACK (or timed out); tell it where the receiver stands.
    ack(id, s.rcv_nxt);
  }
}

}  // namespace syncsim::net
