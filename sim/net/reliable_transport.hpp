#pragma once
// What go-back-N RoCE (go_back_n.hpp) and TCP (tcp.hpp) share: packet sequence numbers (PSNs) per
// message (offsets into it; a persistent queue pair's wire PSNs run on across its messages,
// send_queue.hpp), the reverse route their ACKs take, the retransmission timer, and keeping the
// flow listed at its source NIC exactly while it may send. Mechanisms and parameters:
// transport.hpp. A Network has at most one reliable transport (the fabric's), and only flows that
// need one (lossy priorities, inter-host) get its state; the lossless RoCE path never comes here.
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/stable_vector.hpp"
#include "sim/net/net_context.hpp"

namespace syncsim::net {

class NicPacing;
class Nic;

inline constexpr uint32_t kNoSeq = UINT32_MAX;

// The sender's side of a flow (its source NIC's).
struct ReliableFlowState {
  uint32_t packets = 0;        // packets of the message (PSNs 0 .. packets-1)
  uint32_t una = 0;            // oldest PSN not cumulatively acknowledged
  uint32_t nxt = 0;            // next PSN to send (rewound by NAK / timeout)
  uint32_t high = 0;           // one past the highest PSN ever sent: below it is a retransmission
  bool in_active = true;       // listed in the source NIC's active flows (not while queued)
  bool timer_pending = false;  // an RTO event is in the queue
  bool parked = false;         // no route (network_faults.hpp): not listed, no timer
  int64_t rto_deadline_ps = INT64_MAX;  // INT64_MAX: nothing outstanding, no timeout armed
  CancelToken timer_token{};  // cancels the pending RTO event once everything is acknowledged
};

// The receiver's side (its destination NIC's), kept apart: in a windowed run
// (partition_windows.hpp) the two ends work on different threads, and state one writes per packet
// must not share a cache line with state the other reads. Hence its own copy of the packet count.
struct ReliableReceiverState {
  uint32_t rcv_nxt = 0;          // next in-order PSN expected
  uint32_t packets = 0;          // packets of the message
  uint32_t ack_route_begin = 0;  // reverse route (dst -> src) in the route arena
};

class ReliableTransport {
 public:
  // `nics`: by NodeId, null for switches. `pacing`: the NICs' congestion control (DCQCN or IB CC),
  // null when off.
  ReliableTransport(const NetContext& ctx, const std::vector<Nic*>& nics, NicPacing* pacing)
      : ctx_(ctx), nics_(nics), pacing_(pacing) {}
  virtual ~ReliableTransport() = default;
  ReliableTransport(const ReliableTransport&) = delete;
  ReliableTransport& operator=(const ReliableTransport&) = delete;

  // A windowed run (partition_windows.hpp): the context of each node's partition, by NodeId; the
  // sender's side then works in its source NIC's partition and the receiver's in its destination
  // NIC's. Unset: every node's context is the one given at construction.
  void set_node_contexts(const std::vector<const NetContext*>* by_node) { node_ctx_ = by_node; }
  // Gives flow `id` its state (FlowRecord::transport_state) and its reverse route.
  void add_flow(FlowId id);
  // Source NIC: the flow's next data packet (a new PSN or a retransmission); moves its sent_bytes.
  PacketRef next_packet(FlowId id);
  // Source NIC sent PSN `seq` of flow `id` now. Returns whether it was the message's last PSN,
  // sent for the first time (its queue pair's next message may follow: send_queue.hpp).
  bool on_sent(FlowId id, uint32_t seq, uint32_t payload);
  virtual bool can_send(FlowId id) const = 0;
  // A message that waited behind an earlier one of its queue pair may send (send_queue.hpp):
  // returns whether the source NIC lists it now; otherwise the transport lists it when it may send
  // (a TCP connection's window opens) or its route comes back.
  bool admit(FlowId id);
  // The source NIC unlisted the flow after its last allowed packet.
  void unlisted(FlowId id) { state(id).in_active = false; }
  // Destination NIC: a data packet of a reliable flow; source NIC: an ACK or NAK. `at`: the
  // receiving NIC's context, whose pool holds the packet.
  virtual void on_data(const NetContext& at, PacketRef packet) = 0;
  virtual void on_ack(const NetContext& at, PacketRef packet) = 0;
  // The flow's retransmission timer (Nic::kRetransmitTimer).
  void on_timer(FlowId id);
  // Link faults (network_faults.hpp). The flow's data route changed: its ACKs take the reverse of
  // the new one.
  void rerouted(FlowId id);
  // No route is left: the flow stops sending and its timer stops, until unpark() (a route came
  // back), which resends from the oldest unacknowledged PSN as a timeout would.
  void park(FlowId id);
  void unpark(FlowId id);

 protected:
  // The context where the flow's sender (source NIC) or receiver (destination NIC) works.
  const NetContext& src_ctx(FlowId id) const {
    return node_ctx_ == nullptr ? ctx_ : *(*node_ctx_)[ctx_.flows[id].src];
  }
  const NetContext& dst_ctx(FlowId id) const {
    return node_ctx_ == nullptr ? ctx_ : *(*node_ctx_)[ctx_.flows[id].dst];
  }
  ReliableFlowState& state(FlowId id) { return flows_[ctx_.flows[id].transport_state]; }
  ReliableReceiverState& receiver(FlowId id) { return receivers_[ctx_.flows[id].transport_state]; }
  const ReliableFlowState& state(FlowId id) const { return flows_[ctx_.flows[id].transport_state]; }
  uint32_t index_of(FlowId id) const { return ctx_.flows[id].transport_state; }
  // Per-mechanism hooks: the flow's own state is created, the PSN to send, the retransmission
  // timeout, and what a timeout does beyond rewinding to the oldest unacknowledged PSN.
  virtual void init_flow(FlowId id, const ReliableFlowState& s) = 0;
  virtual uint32_t take_seq(FlowId id, ReliableFlowState& s) = 0;
  virtual int64_t rto_ps(FlowId id) const = 0;
  virtual void on_timeout(FlowId id, ReliableFlowState& s) = 0;
  // After a timeout (or unpark) rewound flow `id` and listed it again: a mechanism whose flows
  // share state (TCP's connections) lists or unlists the others.
  virtual void after_rewind(FlowId /*id*/) {}

  void arm_timer(FlowId id, ReliableFlowState& s);
  // After an ACK covered new PSNs: re-arm the timer while something is outstanding, drop it once
  // everything is acknowledged.
  void restart_timer(FlowId id, ReliableFlowState& s, bool outstanding);
  // Lists or unlists the flow at its source NIC after its sending state changed.
  void update_listing(FlowId id, ReliableFlowState& s);
  // The flow's sent_bytes after nxt moved back.
  void rewound(FlowId id, const ReliableFlowState& s);
  // An ACK or NAK (cumulative `seq`) from the destination NIC on the reverse route.
  void send_control(FlowId id, PacketKind kind, uint32_t seq, bool ece);

  const NetContext& ctx_;
  const std::vector<const NetContext*>* node_ctx_ = nullptr;
  const std::vector<Nic*>& nics_;
  NicPacing* pacing_;

 private:
  StableVector<ReliableFlowState> flows_;  // stable: completion callbacks add flows mid-handler
  StableVector<ReliableReceiverState> receivers_;
};

}  // namespace syncsim::net
