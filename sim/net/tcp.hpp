#pragma once
// TCP on a lossy priority (transport.hpp, `tcp`): a window-based byte stream with one cumulative
// ACK per data packet, fast retransmit on 3 duplicate ACKs with NewReno recovery (SACK-less), RTO
// with RTOmin and exponential backoff, a receiver that keeps out-of-order segments, and DCTCP (ECN
// echoes, alpha once per window, at most one cut per window) or Reno congestion control.
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/net/reliable_transport.hpp"
#include "sim/net/transport.hpp"

namespace syncsim::net {

struct TcpFlowState {
  uint32_t retx = kNoSeq;  // one segment to retransmit before new data
  uint32_t backoff = 0;    // RTO doubles per consecutive timeout
  // Congestion control (windows in packets).
  double cwnd = 1;
  double ssthresh = 1e18;
  uint32_t dupacks = 0;
  bool in_recovery = false;
  uint32_t recover = 0;     // NewReno: recovery ends when this PSN is acknowledged
  double alpha = 1.0;       // DCTCP: Linux starts at 1 (dctcp_alpha_on_init = 1024)
  uint32_t window_end = 0;  // DCTCP: alpha is updated once per window of data
  uint64_t window_acked = 0;
  uint64_t window_marked = 0;
  uint32_t cwr_end = 0;          // DCTCP: at most one cut per window
  std::vector<bool> received{};  // receiver: out-of-order segments held
};

class Tcp final : public ReliableTransport {
 public:
  Tcp(const NetContext& ctx, const std::vector<Nic*>& nics, NicPacing* pacing,
      const TcpParams& params)
      : ReliableTransport(ctx, nics, pacing), params_(params) {}
  bool can_send(FlowId id) const override;
  void on_data(PacketRef packet) override;
  void on_ack(PacketRef packet) override;

 private:
  void init_flow(FlowId id, const ReliableFlowState& s) override;
  uint32_t take_seq(FlowId id, ReliableFlowState& s) override;
  int64_t rto_ps(FlowId id) const override;
  void on_timeout(FlowId id, ReliableFlowState& s) override;
  TcpFlowState& tcp(FlowId id) { return tcp_[index_of(id)]; }
  const TcpFlowState& tcp(FlowId id) const { return tcp_[index_of(id)]; }

  const TcpParams& params_;
  std::deque<TcpFlowState> tcp_;  // by transport state index, beside the shared state
};

}  // namespace syncsim::net
