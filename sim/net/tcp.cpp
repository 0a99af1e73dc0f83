#include "sim/net/tcp.hpp"

#include <algorithm>
#include <cmath>

#include "sim/net/nic.hpp"

namespace syncsim::net {

void Tcp::init_flow(FlowId id, const ReliableFlowState& s) {
  const FlowRecord& f = ctx_.flows[id];
  bool reused = false;
  const uint32_t index = connections_.open(f.src, f.dst, f.queue_pair, f.persistent_qp, reused);
  TcpConnection& c = connections_[index];
  if (!reused) {
    c.cwnd = static_cast<double>(std::max<uint32_t>(1, params_.initial_window));
  } else if (c.last_send_ps != INT64_MIN && c.in_flight == 0) {
    // New data on a connection with nothing in flight: Linux restarts the window if it sent nothing
    // for longer than the RTO (the model's RTO is rto_min, see rto_ps).
    restart_after_idle(c, ctx_.now().picoseconds() - c.last_send_ps, params_.rto_min.picoseconds(),
                       params_.initial_window);
  }
  c.messages.push_back(id);
  TcpFlowState& t = tcp_.emplace_back();
  t.connection = index;
  received_.emplace_back(s.packets, false);
}

uint64_t Tcp::count_in_flight(const TcpConnection& c) const {
  uint64_t flight = 0;
  for (const FlowId m : c.messages) {
    const ReliableFlowState& s = state(m);
    flight += s.nxt - s.una;
  }
  return flight;
}

uint64_t Tcp::sent_mark(const TcpConnection& c) const {
  uint64_t sent = c.finished_packets;
  for (const FlowId m : c.messages) sent += state(m).nxt;
  return sent;
}

bool Tcp::can_send(FlowId id) const {
  const ReliableFlowState& s = state(id);
  const TcpFlowState& t = tcp(id);
  if (t.retx != kNoSeq) return true;
  if (s.nxt >= s.packets) return false;
  const TcpConnection& c = connections_[t.connection];
  const double window = std::max(1.0, std::floor(c.cwnd));
  return static_cast<double>(c.in_flight) < window;
}

void Tcp::unlist_blocked(const TcpConnection& c, FlowId id) {
  for (const FlowId m : c.messages) {
    if (m == id) continue;
    ReliableFlowState& s = state(m);
    if (s.in_active && !s.parked && !can_send(m)) {
      s.in_active = false;
      nics_[ctx_.flows[m].src]->deactivate(m);
    }
  }
}

void Tcp::relist_others(const TcpConnection& c, FlowId id) {
  // By index: listing a message may let the NIC send at once, which only unlists (unlist_blocked).
  for (std::size_t i = 0; i < c.messages.size(); ++i) {
    const FlowId m = c.messages[i];
    if (m != id) update_listing(m, state(m));
  }
}

uint32_t Tcp::take_seq(FlowId id, ReliableFlowState& s) {
  TcpFlowState& t = tcp(id);
  TcpConnection& c = connections_[t.connection];
  c.last_send_ps = src_ctx(id).now().picoseconds();
  if (t.retx == kNoSeq) {
    const uint32_t seq = s.nxt++;
    ++c.in_flight;
    if (c.messages.size() > 1) unlist_blocked(c, id);
    return seq;
  }
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

void Tcp::on_timeout(FlowId id, ReliableFlowState& /*s*/) {
  TcpFlowState& t = tcp(id);
  TcpConnection& c = connections_[t.connection];
  const auto flight = static_cast<double>(c.in_flight);
  c.ssthresh = std::max(flight / 2.0, 2.0);
  c.cwnd = 1.0;
  t.retx = kNoSeq;
  t.dupacks = 0;
  t.backoff = std::min<uint32_t>(t.backoff + 1, 30);
  // The timeout ends every recovery on the connection (Linux enters the Loss state): the other
  // messages keep the hole they were about to resend.
  for (const FlowId m : c.messages) tcp(m).in_recovery = false;
  c.recovering = 0;
}

void Tcp::after_rewind(FlowId id) {
  // The flow's nxt went back to una: count the flight afresh and list the messages again (the
  // flow itself was listed against the count from before its rewind).
  TcpConnection& c = connections_[tcp(id).connection];
  c.in_flight = count_in_flight(c);
  relist_others(c, kAllMessages);
}

void Tcp::on_ack(const NetContext& at, PacketRef packet) {
  const Packet& p = at.packet(packet);
  const FlowId id = p.flow;
  const uint32_t ack = p.seq;
  const bool ece = p.ecn_ce;
  at.pool.release(packet);
  ReliableFlowState& s = state(id);
  TcpFlowState& t = tcp(id);
  TcpConnection& c = connections_[t.connection];
  const bool dctcp = params_.cc == TcpCongestionControl::Dctcp;
  const uint32_t newly = ack > s.una ? ack - s.una : 0;
  if (dctcp) {
    // Every ACK acknowledges one segment's arrival (duplicates included), as Linux's delivered
    // count.
    const uint64_t counted = std::max<uint32_t>(newly, 1);
    c.window_acked += counted;
    if (ece) c.window_marked += counted;
  }
  if (newly > 0) {
    const uint32_t flight_before = s.nxt - s.una;
    s.una = ack;
    c.acked += newly;
    if (s.nxt < s.una) s.nxt = s.una;
    c.in_flight = c.in_flight - flight_before + (s.nxt - s.una);
    t.dupacks = 0;
    t.backoff = 0;
    if (t.retx != kNoSeq && t.retx < s.una) t.retx = kNoSeq;
    if (t.in_recovery) {
      if (ack >= t.recover) {
        t.in_recovery = false;
        if (--c.recovering == 0) c.cwnd = c.ssthresh;
      } else {
        // NewReno partial ACK: the next hole is lost too; deflate by what was acknowledged.
        t.retx = s.una;
        c.cwnd = std::max(1.0, c.cwnd - static_cast<double>(newly) + 1.0);
      }
    } else if (c.recovering > 0) {
      // Another message of the connection is recovering a loss: the window does not grow.
    } else if (c.cwnd < c.ssthresh) {
      c.cwnd += static_cast<double>(newly);  // slow start
    } else {
      c.cwnd += static_cast<double>(newly) / c.cwnd;  // congestion avoidance
    }
    restart_timer(id, s, s.una < s.nxt || t.retx != kNoSeq);
  } else if (ack == s.una && s.una < s.nxt) {
    ++t.dupacks;
    if (t.dupacks == 3 && !t.in_recovery) {
      ++at.counters.fast_retransmits;
      if (c.recovering == 0) {
        // One cut per loss episode of the connection: a message that finds another one
        // recovering resends its hole without cutting again.
        const auto flight = static_cast<double>(c.in_flight);
        c.ssthresh = std::max(flight / 2.0, 2.0);
        c.cwnd = c.ssthresh + 3.0;
      }
      ++c.recovering;
      t.in_recovery = true;
      t.recover = s.nxt;
      t.retx = s.una;
    } else if (t.in_recovery) {
      c.cwnd += 1.0;  // window inflation: each duplicate ACK means a segment left the network
    }
  }
  if (s.una >= s.packets) {
    // Acknowledged to the end: the message leaves its connection.
    const auto it = std::find(c.messages.begin(), c.messages.end(), id);
    if (it != c.messages.end()) {
      c.messages.erase(it);
      c.finished_packets += s.packets;
    }
  }
  if (dctcp) {
    if (c.acked >= c.window_end && c.window_acked > 0) {
      const double g = params_.dctcp_g;
      const double fraction =
          static_cast<double>(c.window_marked) / static_cast<double>(c.window_acked);
      c.alpha = (1.0 - g) * c.alpha + g * fraction;
      c.window_acked = 0;
      c.window_marked = 0;
      c.window_end = sent_mark(c);
    }
    if (ece && c.recovering == 0 && c.acked >= c.cwr_end) {
      c.cwnd = std::max(2.0, c.cwnd * (1.0 - c.alpha / 2.0));  // Linux keeps at least 2 segments
      c.ssthresh = c.cwnd;
      c.cwr_end = sent_mark(c);
    }
  }
  update_listing(id, s);
  if (!c.messages.empty()) relist_others(c, id);
}

void Tcp::on_data(const NetContext& at, PacketRef packet) {
  const Packet& p = at.packet(packet);
  const FlowId id = p.flow;
  const uint32_t seq = p.seq;
  const bool ce = p.ecn_ce;
  const uint32_t payload = p.payload_bytes;
  ReliableReceiverState& s = receiver(id);
  std::vector<bool>& received = received_[index_of(id)];
  // One cumulative ACK per segment, echoing its CE mark (DCTCP's exact ECE feedback).
  if (seq < s.rcv_nxt || received[seq]) {
    at.counters.bytes_discarded += payload;
    at.pool.release(packet);
    send_control(id, PacketKind::Ack, s.rcv_nxt, ce);
    return;
  }
  received[seq] = true;
  while (s.rcv_nxt < s.packets && received[s.rcv_nxt]) ++s.rcv_nxt;
  const uint32_t expected = s.rcv_nxt;
  // May start new flows (a completion callback; in a windowed run, after the window).
  at.deliver(packet);
  send_control(id, PacketKind::Ack, expected, ce);
}

}  // namespace syncsim::net
