#pragma once
// Go-back-N RoCE on a lossy priority (transport.hpp, `roce`): the receiver accepts only the
// expected PSN, answers the first out-of-order packet with a NAK, acknowledges every `ack_every`
// in-order packets and the last one, and answers a duplicate with an ACK of where it stands; the
// sender rewinds to a NAK'd PSN and, when nothing comes back for `timeout`, to the oldest
// unacknowledged PSN. The window is the whole message: the sender never waits for ACKs to send new
// PSNs.
#include <cstdint>
#include <deque>

#include "sim/net/reliable_transport.hpp"
#include "sim/net/transport.hpp"

namespace syncsim::net {

struct GoBackNFlowState {
  uint32_t since_ack = 0;  // receiver: in-order packets since the last ACK
  bool nak_sent = false;   // receiver: a NAK for rcv_nxt is outstanding
};

class GoBackN final : public ReliableTransport {
 public:
  GoBackN(const NetContext& ctx, const std::vector<Nic*>& nics, DcqcnPacing* dcqcn,
          const GoBackNParams& params)
      : ReliableTransport(ctx, nics, dcqcn), params_(params) {}
  bool can_send(FlowId id) const override;
  void on_data(PacketRef packet) override;
  void on_ack(PacketRef packet) override;

 private:
  void init_flow(FlowId id, const ReliableFlowState& s) override;
  uint32_t take_seq(FlowId id, ReliableFlowState& s) override;
  int64_t rto_ps(FlowId id) const override;
  void on_timeout(FlowId id, ReliableFlowState& s) override;

  const GoBackNParams& params_;
  std::deque<GoBackNFlowState> gbn_;  // by transport state index, beside the shared state
};

}  // namespace syncsim::net
