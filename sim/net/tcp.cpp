#include "sim/net/tcp.hpp"

#include <algorithm>
#include <cmath>

namespace syncsim::net {

void Tcp::init_flow(FlowId /*id*/, const ReliableFlowState& s) {
  TcpFlowState& t = tcp_.emplace_back();
  t.cwnd = static_cast<double>(std::max<uint32_t>(1, params_.initial_window));
  t.received.assign(s.packets, false);
}

bool Tcp::can_send(FlowId id) const {
  const ReliableFlowState& s = state(id);
  const TcpFlowState& t = tcp(id);
  if (t.retx != kNoSeq) return true;
  if (s.nxt >= s.packets) return false;
  const double window = std::max(1.0, std::floor(t.cwnd));
  return static_cast<double>(s.nxt - s.una) < window;
}

uint32_t Tcp::take_seq(FlowId id, ReliableFlowState& s) {
  TcpFlowState& t = tcp(id);
  if (t.retx == kNoSeq) return s.nxt++;
  const uint32_t seq = t.retx;
  t.retx = kNoSeq;
  return seq;
}

int64_t Tcp::rto_ps(FlowId id) const {
  // Linux: RTO = srtt + 4 rttvar, with rttvar floored so that RTO >= srtt + rto_min. In a data
  // centre the RTT (tens of us) is far below rto_min, so RTO ~ rto_min; the srtt term is left out.
  const int64_t base = params_.rto_min.picoseconds();
  const int64_t cap = params_.rto_max.picoseconds();
  const uint32_t backoff = tcp(id).backoff;
  int64_t rto = base;
  for (uint32_t i = 0; i < backoff && rto < cap; ++i) rto *= 2;
  return std::min(rto, cap);
}

void Tcp::on_timeout(FlowId id, ReliableFlowState& s) {
  TcpFlowState& t = tcp(id);
  const double flight = static_cast<double>(s.nxt - s.una);
  t.ssthresh = std::max(flight / 2.0, 2.0);
  t.cwnd = 1.0;
  t.retx = kNoSeq;
  t.in_recovery = false;
  t.dupacks = 0;
  t.backoff = std::min<uint32_t>(t.backoff + 1, 30);
}

void Tcp::on_ack(PacketRef packet) {
  const Packet& p = ctx_.packet(packet);
  const FlowId id = p.flow;
  const uint32_t ack = p.seq;
  const bool ece = p.ecn_ce;
  ctx_.pool.release(packet);
  ReliableFlowState& s = state(id);
  TcpFlowState& t = tcp(id);
  const bool dctcp = params_.cc == TcpCongestionControl::Dctcp;
  const uint32_t newly = ack > s.una ? ack - s.una : 0;
  if (dctcp) {
    // Every ACK acknowledges one segment's arrival (duplicates included), as Linux's delivered
    // count.
    const uint64_t counted = std::max<uint32_t>(newly, 1);
    t.window_acked += counted;
    if (ece) t.window_marked += counted;
  }
  if (newly > 0) {
    s.una = ack;
    if (s.nxt < s.una) s.nxt = s.una;
    t.dupacks = 0;
    t.backoff = 0;
    if (t.retx != kNoSeq && t.retx < s.una) t.retx = kNoSeq;
    if (t.in_recovery) {
      if (ack >= t.recover) {
        t.in_recovery = false;
        t.cwnd = t.ssthresh;
      } else {
        // NewReno partial ACK: the next hole is lost too; deflate by what was acknowledged.
        t.retx = s.una;
        t.cwnd = std::max(1.0, t.cwnd - static_cast<double>(newly) + 1.0);
      }
    } else if (t.cwnd < t.ssthresh) {
      t.cwnd += static_cast<double>(newly);  // slow start
    } else {
      t.cwnd += static_cast<double>(newly) / t.cwnd;  // congestion avoidance
    }
    restart_timer(id, s, s.una < s.nxt || t.retx != kNoSeq);
  } else if (ack == s.una && s.una < s.nxt) {
    ++t.dupacks;
    if (t.dupacks == 3 && !t.in_recovery) {
      ++ctx_.counters.fast_retransmits;
      const double flight = static_cast<double>(s.nxt - s.una);
      t.ssthresh = std::max(flight / 2.0, 2.0);
      t.cwnd = t.ssthresh + 3.0;
      t.in_recovery = true;
      t.recover = s.nxt;
      t.retx = s.una;
    } else if (t.in_recovery) {
      t.cwnd += 1.0;  // window inflation: each duplicate ACK means a segment left the network
    }
  }
  if (dctcp) {
    if (s.una >= t.window_end && t.window_acked > 0) {
      const double g = params_.dctcp_g;
      const double fraction =
          static_cast<double>(t.window_marked) / static_cast<double>(t.window_acked);
      t.alpha = (1.0 - g) * t.alpha + g * fraction;
      t.window_acked = 0;
      t.window_marked = 0;
      t.window_end = s.nxt;
    }
    if (ece && !t.in_recovery && s.una >= t.cwr_end) {
      t.cwnd = std::max(2.0, t.cwnd * (1.0 - t.alpha / 2.0));  // Linux keeps at least 2 segments
      t.ssthresh = t.cwnd;
      t.cwr_end = s.nxt;
    }
  }
  update_listing(id, s);
}

void Tcp::on_data(PacketRef packet) {
  const Packet& p = ctx_.packet(packet);
  const FlowId id = p.flow;
  const uint32_t seq = p.seq;
  const bool ce = p.ecn_ce;
  const uint32_t payload = p.payload_bytes;
  ReliableFlowState& s = state(id);
  TcpFlowState& t = tcp(id);
  // One cumulative ACK per segment, echoing its CE mark (DCTCP's exact ECE feedback).
  if (seq < s.rcv_nxt || t.received[seq]) {
    ctx_.counters.bytes_discarded += payload;
    ctx_.pool.release(packet);
    send_control(id, PacketKind::Ack, s.rcv_nxt, ce);
    return;
  }
  t.received[seq] = true;
  while (s.rcv_nxt < s.packets && t.received[s.rcv_nxt]) ++s.rcv_nxt;
  const uint32_t expected = s.rcv_nxt;
  ctx_.deliver(packet);  // may start new flows (completion callback)
  send_control(id, PacketKind::Ack, expected, ce);
}

}  // namespace syncsim::net
