#pragma once
// A host NIC (or a GPU's NVLink port): the transmit scheduler over its active flows (round robin,
// skipping paused priorities and, with DCQCN, flows whose pacing holds them back), the receive side
// (delivery, DCQCN notification point, reliable-transport receivers) and receiver-side PFC.
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/ring_queue.hpp"
#include "sim/net/link.hpp"
#include "sim/net/net_context.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::net {

class NicPacing;
class ReliableTransport;

class Nic final : public Node, public EventTarget {
 public:
  enum EventKind : uint32_t {
    kWake = 0,
    kRateTimer = 1,
    kRetransmitTimer = 2,
    kRxDrain = 3,
    kStart = 4
  };
  // `priorities` and `lossless_mask`: the classes receiver-side PFC pauses. `pacing` (DCQCN or IB
  // congestion control) and `transport` may be null (no congestion control; no reliable transport);
  // they outlive the NIC.
  Nic(const NetContext& ctx, NodeId id, const NicParams& params, uint32_t priorities,
      uint8_t lossless_mask, NicPacing* pacing, ReliableTransport* transport);
  void receive(PacketRef packet, uint32_t in_port) override;
  // The next data packet to send, round-robin over active flows whose priority is not paused
  // (bit p of `paused_mask`) and, with DCQCN, whose pacing allows (next_send_at <= now), or
  // kNoPacket. When only pacing holds flows back, a wake-up is scheduled at the earliest one.
  PacketRef pull(uint8_t paused_mask);
  void add_flow(FlowId flow);
  // Flow `flow`, set up already (Network::start_flow with a later start), starts at `at`: it is
  // posted to its queue pair's send queue `queue` (kNoSendQueue: none) and, at its head, listed.
  void start_at(Time at, FlowId flow, uint32_t queue);
  NodeId id() const { return id_; }
  // kWake: kick the NIC's port; kRateTimer: DCQCN rate-increase timer of flow `arg`;
  // kRetransmitTimer: the reliable transport's timer of flow `arg`; kRxDrain: receive buffer;
  // kStart: a flow set up ahead starts (start_at).
  void on_event(uint32_t kind, uint64_t arg) override;
  // Reliable transports: lists a flow again once it may send, and kicks the port.
  void reactivate(FlowId flow);
  // ... and unlists one that may no longer send (an ACK covered what it was about to resend).
  void deactivate(FlowId flow);
  // InfiniBand (ib_credits.cpp): this NIC's link runs credit-based flow control; it returns the
  // credits of what it receives as it consumes it (its receive buffer drains, with rx_pfc).
  void enable_ib() { ib_ = true; }
  // A paced flow's next send time moved earlier (its rate went up): make sure the NIC looks again.
  void pacing_moved(int64_t at_ps) { wake_at(at_ps); }
  // An engine inside its switch (in_switch_engine.hpp): a flow sends only while its egress port in
  // the switch has room.
  void set_in_switch_engine() { in_switch_engine_ = true; }

 private:
  void wake_at(int64_t at_ps);
  void start_flow(uint64_t arg);  // kStart
  // Flow `id` may not send now: its priority is paused, or (an in-switch engine) its port is full.
  bool held(FlowId id, uint8_t paused_mask) const;
  // The next packet of reliable flow active_[next_] (a new PSN or a retransmission).
  PacketRef pull_reliable(FlowId id);
  // Flow `id`, a message on a persistent queue pair, sent its last new packet: its queue pair's
  // next message, if it may be listed now (send_queue.hpp), else kNoFlow.
  FlowId successor(FlowId id);
  // An in-switch engine's active_[next_] sent a packet: `keep` (the flow itself, its queue pair's
  // next message, or kNoFlow) goes to the back of active_. Round robin from a shared position, as
  // a NIC serves its queue pairs, is not fair per destination when most destinations are full: the
  // engine then serves, to each port that has room, the first of that port's flows after the
  // position, which follows wherever the last send to any port left it, so that a few flows per
  // port took nearly all of it and a small flow could wait for the whole of the others (an NVLS
  // head's reduced slice behind the multicasts of other channels: 180 us on two GB200 racks,
  // 128 MiB). Least recently served first is round robin per destination, as the switch's
  // crossbar arbitrates between the streams bound for one port.
  void served_engine_flow(FlowId keep);
  // active_[next_] sent its last new packet and is done sending: the round-robin slot passes to its
  // queue pair's next message `next` (the queue pair keeps its turn), or is erased (kNoFlow).
  void retire_current(FlowId next);
  // A data packet of flow `id` leaves now: DCQCN pacing (when on) and the injection counters.
  void account_injected(FlowId id, const Packet& p);
  // Receiver-side PFC: accept a data packet into the receive buffer / drain its head.
  void rx_accept(PacketRef packet);
  void rx_drain();
  void rx_pfc(bool xoff);
  void consume(PacketRef packet);  // notification point + delivery
  void return_ib_credits(const Packet& p);

  const NetContext& ctx_;
  NodeId id_;
  PortId port_;  // the NIC's (first) egress port
  const NicParams& params_;
  uint32_t priorities_;
  uint8_t lossless_mask_;
  NicPacing* pacing_;
  ReliableTransport* transport_;
  RingQueue<PacketRef> rx_;
  int64_t rx_bytes_ = 0;
  bool rx_paused_ = false;  // this NIC has paused its switch
  bool rx_draining_ = false;
  bool ib_ = false;
  bool in_switch_engine_ = false;
  std::vector<FlowId> active_;
  std::size_t next_ = 0;
  CancelToken wake_token_;
  int64_t wake_at_ps_ = INT64_MAX;  // pending wake-up, INT64_MAX if none
};

}  // namespace syncsim::net
