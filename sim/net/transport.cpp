// Reliable transports over the packet network: go-back-N RoCE on lossy priorities and a window-based
// TCP (DCTCP or NewReno), plus per-link impairments (jitter, random loss). Mechanisms and parameters:
// transport.hpp. Everything here hangs off a few hooks in network.cpp (flow start, NIC pull and
// receive, link transmit), so the lossless RoCE path is untouched.
#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"
#include "sim/net/network.hpp"

namespace syncsim::net {

namespace {
// Retransmission timeout of a flow in picoseconds.
int64_t rto_ps(const TransportParams& t, const ReliableFlowState& s) {
  if (!s.tcp) return t.gbn.timeout.picoseconds();
  // Linux: RTO = srtt + 4 rttvar, with rttvar floored so that RTO >= srtt + rto_min. In a data centre
  // the RTT (tens of us) is far below rto_min, so RTO ~ rto_min; the srtt term is left out.
  const int64_t base = t.tcp.rto_min.picoseconds();
  const int64_t cap = t.tcp.rto_max.picoseconds();
  int64_t rto = base;
  for (uint32_t i = 0; i < s.backoff && rto < cap; ++i) rto *= 2;
  return std::min(rto, cap);
}
}  // namespace

// ---------------------------------------------------------------- set-up

void Network::transport_start(FlowId id) {
  FlowRecord& f = flows_[id];
  const TransportParams& t = spec_.transport;
  // NVLink is credit-based and lossless: messages inside a host keep the plain model.
  const NodeId attachment = spec_.attachment_of_nic[f.src];
  if (attachment != kNoNode && spec_.nodes[attachment].role == SwitchRole::NvSwitch) return;
  const bool tcp = t.kind == TransportKind::Tcp;
  const bool lossless =
      spec_.pfc.enabled && ((static_cast<uint32_t>(spec_.pfc.lossless_mask) >> f.priority) & 1U) != 0;
  if (!tcp && (lossless || !t.gbn.enabled)) return;  // RoCE on a PFC-protected class: no ACKs modelled
  ReliableFlowState s;
  s.tcp = tcp;
  const auto mtu = static_cast<int64_t>(f.mtu_bytes);
  const int64_t packets = (f.size_bytes + mtu - 1) / mtu;
  SIM_CHECK(packets < static_cast<int64_t>(kNoSeq), "message too large for 32-bit PSNs");
  s.packets = static_cast<uint32_t>(packets);
  s.ack_route_begin = static_cast<uint32_t>(route_arena_.size());
  // The reverse of the data path: ports 2i and 2i+1 are the two directions of link i.
  for (uint32_t h = f.route_hops; h-- > 0;) {
    route_arena_.push_back(route_arena_[f.route_begin + h] ^ 1U);
  }
  if (tcp) {
    s.cwnd = static_cast<double>(std::max<uint32_t>(1, t.tcp.initial_window));
    s.received.assign(s.packets, false);
  }
  f.transport_state = static_cast<uint32_t>(transport_.size());
  transport_.push_back(std::move(s));
}

// ---------------------------------------------------------------- sender

bool Network::transport_can_send(const ReliableFlowState& s) const {
  if (!s.tcp) return s.nxt < s.packets;
  if (s.retx != kNoSeq) return true;
  if (s.nxt >= s.packets) return false;
  const double window = std::max(1.0, std::floor(s.cwnd));
  return static_cast<double>(s.nxt - s.una) < window;
}

PacketRef Nic::pull_reliable(FlowId id) {
  FlowRecord& f = net_.flow_mut(id);
  ReliableFlowState& s = net_.transport_flow(id);
  uint32_t seq = 0;
  if (s.tcp && s.retx != kNoSeq) {
    seq = s.retx;
    s.retx = kNoSeq;
  } else {
    seq = s.nxt++;
  }
  const int64_t offset = static_cast<int64_t>(seq) * f.mtu_bytes;
  const int64_t payload = std::min<int64_t>(f.mtu_bytes, f.size_bytes - offset);
  SIM_CHECK(payload > 0, "a reliable flow sent a PSN past its end");
  const PacketRef ref = net_.new_packet(id, f.route_begin, static_cast<uint32_t>(payload),
                                        f.priority, PacketKind::Data, false, false);
  Packet& p = net_.packet(ref);
  p.seq = seq;
  f.sent_bytes = std::min<int64_t>(f.size_bytes, static_cast<int64_t>(s.nxt) * f.mtu_bytes);
  account_injected(id, p);
  net_.transport_on_sent(id, seq, p.payload_bytes);
  if (!net_.transport_can_send(s)) {
    s.in_active = false;
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(next_));
  } else {
    ++next_;
  }
  return ref;
}

void Nic::deactivate(FlowId flow) {
  const auto it = std::find(active_.begin(), active_.end(), flow);
  if (it == active_.end()) return;
  const auto index = static_cast<std::size_t>(it - active_.begin());
  active_.erase(it);
  if (index < next_) --next_;
}

void Nic::reactivate(FlowId flow) {
  active_.push_back(flow);
  net_.egress(net_.routing().ports_of(id_)[0]).kick();
}

void Network::transport_on_sent(FlowId id, uint32_t seq, uint32_t payload) {
  ReliableFlowState& s = transport_flow(id);
  if (seq < s.high) {
    ++counters_.retransmitted_packets;
    counters_.retransmitted_bytes += payload;
  } else {
    s.high = seq + 1;
  }
  if (s.rto_deadline_ps == INT64_MAX) transport_arm_timer(id, s);
}

void Network::transport_arm_timer(FlowId id, ReliableFlowState& s) {
  s.rto_deadline_ps = now().picoseconds() + rto_ps(spec_.transport, s);
  if (s.timer_pending) return;  // the pending event re-arms itself at the new deadline
  s.timer_pending = true;
  queue().schedule(Time::ps(s.rto_deadline_ps), nics_[flows_[id].src], Nic::kRetransmitTimer, id,
                   &s.timer_token);
}

void Network::transport_reactivate(FlowId id, ReliableFlowState& s) {
  const bool can_send = transport_can_send(s);
  if (s.in_active && !can_send) {
    s.in_active = false;
    nics_[flows_[id].src]->deactivate(id);
  } else if (!s.in_active && can_send) {
    s.in_active = true;
    nics_[flows_[id].src]->reactivate(id);
  }
}

void Network::transport_timer(FlowId id) {
  ReliableFlowState& s = transport_flow(id);
  s.timer_pending = false;
  if (s.una >= s.packets || s.rto_deadline_ps == INT64_MAX) return;
  const int64_t t = now().picoseconds();
  if (t < s.rto_deadline_ps) {
    s.timer_pending = true;
    queue().schedule(Time::ps(s.rto_deadline_ps), nics_[flows_[id].src], Nic::kRetransmitTimer, id,
                   &s.timer_token);
    return;
  }
  // Nothing came back in time: resend from the oldest unacknowledged PSN.
  ++counters_.timeouts;
  if (s.tcp) {
    const double flight = static_cast<double>(s.nxt - s.una);
    s.ssthresh = std::max(flight / 2.0, 2.0);
    s.cwnd = 1.0;
    s.retx = kNoSeq;
    s.in_recovery = false;
    s.dupacks = 0;
    s.backoff = std::min<uint32_t>(s.backoff + 1, 30);
  }
  s.nxt = s.una;
  FlowRecord& f = flows_[id];
  f.sent_bytes = std::min<int64_t>(f.size_bytes, static_cast<int64_t>(s.nxt) * f.mtu_bytes);
  s.rto_deadline_ps = INT64_MAX;  // re-armed by the next packet sent
  transport_reactivate(id, s);
}

void Network::transport_on_ack(PacketRef packet) {
  const Packet& p = pool_[packet];
  const FlowId id = p.flow;
  const uint32_t ack = p.seq;
  const bool nak = p.kind == PacketKind::Nak;
  const bool ece = p.ecn_ce;
  pool_.release(packet);
  ReliableFlowState& s = transport_flow(id);
  FlowRecord& f = flows_[id];
  const bool dctcp = s.tcp && spec_.transport.tcp.cc == TcpCongestionControl::Dctcp;
  const uint32_t newly = ack > s.una ? ack - s.una : 0;
  if (dctcp) {
    // Every ACK acknowledges one segment's arrival (duplicates included), as Linux's delivered count.
    const uint64_t counted = std::max<uint32_t>(newly, 1);
    s.window_acked += counted;
    if (ece) s.window_marked += counted;
  }
  if (newly > 0) {
    s.una = ack;
    if (s.nxt < s.una) s.nxt = s.una;
    if (s.tcp) {
      s.dupacks = 0;
      s.backoff = 0;
      if (s.retx != kNoSeq && s.retx < s.una) s.retx = kNoSeq;
      if (s.in_recovery) {
        if (ack >= s.recover) {
          s.in_recovery = false;
          s.cwnd = s.ssthresh;
        } else {
          // NewReno partial ACK: the next hole is lost too; deflate by what was acknowledged.
          s.retx = s.una;
          s.cwnd = std::max(1.0, s.cwnd - static_cast<double>(newly) + 1.0);
        }
      } else if (s.cwnd < s.ssthresh) {
        s.cwnd += static_cast<double>(newly);  // slow start
      } else {
        s.cwnd += static_cast<double>(newly) / s.cwnd;  // congestion avoidance
      }
    }
    s.rto_deadline_ps = INT64_MAX;
    if (s.una < s.packets && (s.una < s.nxt || s.retx != kNoSeq)) transport_arm_timer(id, s);
    if (s.una >= s.packets && s.timer_pending) {
      // All acknowledged: drop the pending timer, so the run does not end on a dead event.
      s.timer_token.cancel_pending();
      s.timer_pending = false;
    }
  } else if (s.tcp && !nak && ack == s.una && s.una < s.nxt) {
    ++s.dupacks;
    if (s.dupacks == 3 && !s.in_recovery) {
      ++counters_.fast_retransmits;
      const double flight = static_cast<double>(s.nxt - s.una);
      s.ssthresh = std::max(flight / 2.0, 2.0);
      s.cwnd = s.ssthresh + 3.0;
      s.in_recovery = true;
      s.recover = s.nxt;
      s.retx = s.una;
    } else if (s.in_recovery) {
      s.cwnd += 1.0;  // window inflation: each duplicate ACK means a segment left the network
    }
  }
  if (dctcp) {
    if (s.una >= s.window_end && s.window_acked > 0) {
      const double g = spec_.transport.tcp.dctcp_g;
      const double fraction =
          static_cast<double>(s.window_marked) / static_cast<double>(s.window_acked);
      s.alpha = (1.0 - g) * s.alpha + g * fraction;
      s.window_acked = 0;
      s.window_marked = 0;
      s.window_end = s.nxt;
    }
    if (ece && !s.in_recovery && s.una >= s.cwr_end) {
      s.cwnd = std::max(2.0, s.cwnd * (1.0 - s.alpha / 2.0));  // Linux keeps at least 2 segments
      s.ssthresh = s.cwnd;
      s.cwr_end = s.nxt;
    }
  }
  if (nak && ack < s.nxt) {
    // Go-back-N: resend from the PSN the receiver expects.
    s.nxt = std::max(ack, s.una);
    f.sent_bytes = std::min<int64_t>(f.size_bytes, static_cast<int64_t>(s.nxt) * f.mtu_bytes);
  }
  transport_reactivate(id, s);
}

// ---------------------------------------------------------------- receiver

void Network::transport_send_control(FlowId id, PacketKind kind, uint32_t seq, bool ece) {
  const ReliableFlowState& s = transport_flow(id);
  const PortId first = route_arena_[s.ack_route_begin];
  // ACKs share the data's class (and its losses).
  const PacketRef ref = new_packet(id, s.ack_route_begin, control_frame_payload(*ports_[first]),
                                   flows_[id].priority, kind, ece, false);
  pool_[ref].seq = seq;
  ++(kind == PacketKind::Nak ? counters_.naks : counters_.acks);
  ports_[first]->enqueue(ref);
}

void Network::transport_on_data(PacketRef packet) {
  const Packet& p = pool_[packet];
  const FlowId id = p.flow;
  const uint32_t seq = p.seq;
  const bool ce = p.ecn_ce;
  // dcqcn_notify() allocates a CNP and may grow the packet pool: read `p` only before it.
  const uint32_t payload = p.payload_bytes;
  ReliableFlowState& s = transport_flow(id);
  if (!s.tcp) {
    if (ce && dcqcn_on_) dcqcn_notify(id);
    if (seq == s.rcv_nxt) {
      ++s.rcv_nxt;
      s.nak_sent = false;
      const bool ack_now = ++s.since_ack >= spec_.transport.gbn.ack_every || s.rcv_nxt == s.packets;
      if (ack_now) s.since_ack = 0;
      const uint32_t expected = s.rcv_nxt;
      // deliver() may complete the message, and its callback start new flows: `s` may move.
      deliver(packet);
      if (ack_now) transport_send_control(id, PacketKind::Ack, expected, false);
      return;
    }
    counters_.bytes_discarded += payload;
    pool_.release(packet);
    if (seq > s.rcv_nxt) {
      // Out of order: a packet before it was lost. One NAK per gap; the rest are discarded.
      if (!s.nak_sent) {
        s.nak_sent = true;
        transport_send_control(id, PacketKind::Nak, s.rcv_nxt, false);
      }
    } else {
      // A duplicate: the sender missed an ACK (or timed out); tell it where the receiver stands.
      transport_send_control(id, PacketKind::Ack, s.rcv_nxt, false);
    }
    return;
  }
  // TCP: one cumulative ACK per segment, echoing its CE mark (DCTCP's exact ECE feedback).
  if (seq < s.rcv_nxt || s.received[seq]) {
    counters_.bytes_discarded += payload;
    pool_.release(packet);
  } else {
    s.received[seq] = true;
    while (s.rcv_nxt < s.packets && s.received[s.rcv_nxt]) ++s.rcv_nxt;
    const uint32_t expected = s.rcv_nxt;
    deliver(packet);  // may start new flows (completion callback): `s` may move
    transport_send_control(id, PacketKind::Ack, expected, ce);
    return;
  }
  transport_send_control(id, PacketKind::Ack, s.rcv_nxt, ce);
}

// ---------------------------------------------------------------- link impairments

void Network::setup_impairments() {
  const ImpairmentParams& imp = spec_.impairments;
  if (!imp.active()) return;
  const uint8_t lossless = spec_.pfc.enabled ? spec_.pfc.lossless_mask : uint8_t{0};
  for (PortId p = 0; p < ports_.size(); ++p) {
    const LinkParams& link = routing_.link_of(p);
    const bool selected =
        imp.link_classes.empty()
            ? link.name != "nvlink"
            : std::find(imp.link_classes.begin(), imp.link_classes.end(), link.name) !=
                  imp.link_classes.end();
    if (!selected) continue;
    auto st = std::make_unique<LinkImpairmentState>();
    const auto delay = static_cast<double>(link.delay.picoseconds());
    st->jitter = imp.jitter;
    st->mean_ps = static_cast<double>(imp.jitter_mean.picoseconds()) + imp.jitter_mean_fraction * delay;
    st->stddev_ps =
        static_cast<double>(imp.jitter_stddev.picoseconds()) + imp.jitter_stddev_fraction * delay;
    if (st->mean_ps == 0.0 && st->stddev_ps == 0.0) st->jitter = JitterDistribution::None;
    st->loss_probability = imp.loss_probability;
    st->lossless_mask = lossless;
    // Streams per port (one direction of one cable), so adding a link never shifts another's draws.
    st->jitter_rng = sim_.rng(RngStreamKind::Jitter, (uint64_t{1} << 40) + 2 * uint64_t{p});
    st->loss_rng = sim_.rng(RngStreamKind::Jitter, (uint64_t{1} << 40) + 2 * uint64_t{p} + 1);
    ports_[p]->link().set_impairment(std::move(st));
  }
}

bool Link::impair(PacketRef packet, Time& arrival) {
  LinkImpairmentState& st = *impairment_;
  const Packet& p = net_.packet(packet);
  if (st.loss_probability > 0.0 && p.kind != PacketKind::Pause && p.kind != PacketKind::Cnp &&
      ((static_cast<uint32_t>(st.lossless_mask) >> p.priority) & 1U) == 0 &&
      st.loss_rng.uniform() < st.loss_probability) {
    net_.drop(packet, DropReason::LinkLoss);
    return false;
  }
  int64_t at = arrival.picoseconds();
  if (st.jitter != JitterDistribution::None) {
    double extra = 0.0;
    if (st.jitter == JitterDistribution::Normal) {
      // Box-Muller on our own uniforms (std:: distributions differ between standard libraries).
      const double u1 = 1.0 - st.jitter_rng.uniform();  // (0, 1]
      const double u2 = st.jitter_rng.uniform();
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
      extra = st.mean_ps + st.stddev_ps * z;
    } else {
      extra = st.mean_ps * -std::log(1.0 - st.jitter_rng.uniform());
    }
    const int64_t sent = net_.now().picoseconds();
    at = std::max(sent, at + static_cast<int64_t>(std::llround(extra)));
  }
  // FIFO: a link delivers in order, so a packet waits for the one ahead of it.
  at = std::max(at, st.last_arrival_ps);
  st.last_arrival_ps = at;
  arrival = Time::ps(at);
  return true;
}

}  // namespace syncsim::net
