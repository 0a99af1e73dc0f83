#pragma once
// Go-back-N RoCE on a lossy priority (transport.hpp, `roce`): the receiver accepts only the
// expected PSN, answers the first out-of-order packet with a NAK, acknowledges every `ack_every`
// in-order packets and the last one, and answers a duplicate with an ACK of where it stands; the
// sender rewinds to a NAK'd PSN and, when nothing comes back for `timeout`, to the oldest
// unacknowledged PSN. The window is the whole message: the sender never waits for ACKs to send new
// PSNs. On a lossless class the same queue pair recovers the rare loss (RC recovery, with the RC
// ACK timeout); its ACKs are not put on the wire, and each recovery is timed. With `out_of_order`
// the receiver places PSNs past a gap instead of discarding them (transport.hpp).
//
// In a windowed run (partition_windows.hpp) the two ends of a flow may work in different
// partitions. There a lossless queue pair's off-wire ACK reaches the sender one lookahead after the
// receiver sent it (at once where both ends share a partition), and a lost packet's notice (which
// opens the timed RC recovery) reaches the receiver one lookahead after the loss, timed from the
// loss itself. Neither changes what is delivered when: the ACK only moves the sender's timer,
// and the notice arrives before any retransmission can.
#include <cstdint>
#include <vector>

#include "sim/core/stable_vector.hpp"
#include "sim/net/reliable_transport.hpp"
#include "sim/net/transport.hpp"

namespace syncsim::net {

// The sender's side of a go-back-N flow.
struct GoBackNFlowState {
  bool lossless = false;  // a PFC-protected class: ACKs are not put on the wire (transport.hpp)
  uint32_t retries = 0;   // lossless: retries since the last progress
  bool failed = false;    // lossless: the retry count ran out (the QP's error state)
};

// The receiver's side, apart from the sender's (ReliableReceiverState says why).
struct GoBackNReceiverState {
  uint32_t since_ack = 0;  // in-order packets since the last ACK
  bool nak_sent = false;   // a NAK for rcv_nxt is outstanding
  bool lossless = false;   // the sender's `lossless`, copied
  // An open RC recovery (lossless): when its first packet was lost, and the highest PSN lost since.
  int64_t loss_at_ps = INT64_MAX;
  uint32_t loss_high = 0;
  // Out-of-order placement: bit k set once PSN k is placed (empty without it).
  std::vector<uint64_t> placed;
};

class GoBackN final : public ReliableTransport, public DataLossListener, public EventTarget {
 public:
  // `lossless_mask`: the PFC-protected classes (0 when PFC is off).
  GoBackN(const NetContext& ctx, const std::vector<Nic*>& nics, NicPacing* pacing,
          const GoBackNParams& params, uint8_t lossless_mask)
      : ReliableTransport(ctx, nics, pacing), params_(params), lossless_mask_(lossless_mask) {}
  bool can_send(FlowId id) const override;
  void on_data(const NetContext& at, PacketRef packet) override;
  void on_ack(const NetContext& at, PacketRef packet) override;
  void on_data_lost(const NetContext& at, const Packet& packet) override;
  // The off-wire ACK and the loss notice, posted between partitions.
  void on_event(uint32_t kind, uint64_t arg) override;

 private:
  void init_flow(FlowId id, const ReliableFlowState& s) override;
  uint32_t take_seq(FlowId id, ReliableFlowState& s) override;
  int64_t rto_ps(FlowId id) const override;
  void on_timeout(FlowId id, ReliableFlowState& s) override;

  // The sender's side of a cumulative ACK (or NAK) of `ack`.
  void acknowledged(FlowId id, uint32_t ack, bool nak);
  // The receiver: an ACK on the wire, or (lossless) straight to the sender.
  void ack(FlowId id, uint32_t expected);
  // The receiver's side of a lost data packet (PSN `seq`) lost at `lost_ps`: opens or widens an RC
  // recovery.
  void note_loss(FlowId id, uint32_t seq, int64_t lost_ps);
  // A lossless queue pair retries once more; past the retry count it fails.
  void retried(FlowId id, GoBackNFlowState& g);
  // Out-of-order placement: a PSN past rcv_nxt arrived; places it unless it is a duplicate.
  void place(PacketRef packet, FlowId id, uint32_t seq, uint32_t payload);

  enum PostedKind : uint32_t { kOffWireAck = 0, kLossNotice = 1 };
  static uint64_t flow_and_seq(FlowId id, uint32_t seq) {
    return (static_cast<uint64_t>(id) << 32) | seq;
  }

  const GoBackNParams& params_;
  uint8_t lossless_mask_;
  StableVector<GoBackNFlowState> gbn_;  // by transport state index, beside the shared state
  StableVector<GoBackNReceiverState> gbn_receivers_;
};

}  // namespace syncsim::net
