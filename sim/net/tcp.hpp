#pragma once
// TCP on a lossy priority (transport.hpp, `tcp`): a window-based byte stream with one cumulative
// ACK per data packet, fast retransmit on 3 duplicate ACKs with NewReno recovery (SACK-less), RTO
// with RTOmin and exponential backoff, a receiver that keeps out-of-order segments, and DCTCP (ECN
// echoes, alpha once per window, at most one cut per window) or Reno congestion control. The window
// belongs to the connection (tcp_connection.hpp): the messages of a persistent queue pair share it
// and it outlives them, with Linux's restart after idle.
#include <cstdint>
#include <vector>

#include "sim/core/stable_vector.hpp"
#include "sim/net/reliable_transport.hpp"
#include "sim/net/tcp_connection.hpp"
#include "sim/net/transport.hpp"

namespace syncsim::net {

// One message's sender state: its loss recovery (the window is its connection's). The receiver's
// out-of-order segments are kept apart (Tcp::received_): in a windowed run the two ends work in two
// partitions, on two threads.
struct TcpFlowState {
  uint32_t retx = kNoSeq;  // one segment to retransmit before new data
  uint32_t backoff = 0;    // RTO doubles per consecutive timeout
  uint32_t dupacks = 0;
  bool in_recovery = false;
  uint32_t recover = 0;     // NewReno: recovery ends when this PSN is acknowledged
  uint32_t connection = 0;  // index in the connection table
};

class Tcp final : public ReliableTransport {
 public:
  Tcp(const NetContext& ctx, const std::vector<Nic*>& nics, NicPacing* pacing,
      const TcpParams& params)
      : ReliableTransport(ctx, nics, pacing), params_(params) {}
  bool can_send(FlowId id) const override;
  // `at`: the receiving NIC's context (the destination's for data, the source's for ACKs). A
  // connection's state is the sender's alone (its messages share one source NIC), the received
  // segments the receiver's, so a windowed run may put the two ends in two partitions.
  void on_data(const NetContext& at, PacketRef packet) override;
  void on_ack(const NetContext& at, PacketRef packet) override;
  // The connection a flow's message is on, for tests and traces.
  const TcpConnection& connection_of(FlowId id) const { return connections_[tcp(id).connection]; }
  // Packets in flight (sent, not acknowledged) over all the connection's unfinished messages,
  // counted afresh (TcpConnection::in_flight keeps the same count as PSNs move).
  uint64_t count_in_flight(const TcpConnection& c) const;

 private:
  void init_flow(FlowId id, const ReliableFlowState& s) override;
  uint32_t take_seq(FlowId id, ReliableFlowState& s) override;
  int64_t rto_ps(FlowId id) const override;
  void on_timeout(FlowId id, ReliableFlowState& s) override;
  void after_rewind(FlowId id) override;
  TcpFlowState& tcp(FlowId id) { return tcp_[index_of(id)]; }
  const TcpFlowState& tcp(FlowId id) const { return tcp_[index_of(id)]; }
  // Packets the connection has sent, counted as DCTCP's window marks are: its finished messages'
  // packets plus each unfinished message's next PSN.
  uint64_t sent_mark(const TcpConnection& c) const;
  // After message `id` sent a new PSN: the connection's other messages that the fuller window now
  // holds back leave their NIC's list (only unlisting: this runs inside the NIC's pull).
  void unlist_blocked(const TcpConnection& c, FlowId id);
  // After the window or the flight of the connection changed: list or unlist its messages other
  // than `id` (kAllMessages: all of them).
  static constexpr FlowId kAllMessages = UINT32_MAX;
  void relist_others(const TcpConnection& c, FlowId id);

  const TcpParams& params_;
  StableVector<TcpFlowState> tcp_;            // by transport state index, beside the shared state
  StableVector<std::vector<bool>> received_;  // receiver: out-of-order segments held, same index
  TcpConnectionTable connections_;
};

}  // namespace syncsim::net
