#pragma once
// One direction of a cable: owns the propagation delay. Packets in flight sit in a FIFO with their
// arrival times; only the head has an event pending. Delivers to the peer Node's receive().
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/ring_queue.hpp"
#include "sim/net/link_impairment.hpp"
#include "sim/net/net_context.hpp"
#include "sim/net/remote_outbox.hpp"

namespace syncsim::net {

// A switch or a NIC: whatever sits at the far end of a link.
class Node {
 public:
  virtual ~Node() = default;
  virtual void receive(PacketRef packet, uint32_t in_port) = 0;
};

class Link final : public EventTarget {
 public:
  Link(const NetContext& ctx, Time delay, Node* peer, uint32_t peer_in_port)
      : ctx_(ctx), delay_(delay), peer_(peer), peer_in_port_(peer_in_port) {}
  // Puts a packet on the wire; false when the link's impairment lost it (dropped and counted).
  bool transmit(PacketRef packet) { return transmit(packet, ctx_.now()); }
  // The same for a packet whose last bit leaves at `departure` (no earlier than now): an egress
  // port that starts a packet with nothing behind it hands it over at once (egress_port.hpp). Not
  // for an impaired link, whose jitter and loss act when the packet leaves.
  [[gnu::always_inline]] inline bool transmit(PacketRef packet, Time departure);
  bool impaired() const { return impairment_ != nullptr; }
  void on_event(uint32_t kind, uint64_t arg) override;
  // A link into another partition: transmit() posts each packet to `outbox` and frees it here;
  // `far_end`, a Link of the same cable built with the receiving partition's context (and kept in
  // its memory, so that the two threads never write one cache line), takes it in with accept()
  // after the window (no sooner than the link's delay after it left, so never late).
  void set_remote(RemoteOutbox* outbox, Link* far_end) {
    outbox_ = outbox;
    far_end_ = far_end;
    far_end->marks_idle_ = true;
  }
  // The far end of a remote link: a packet posted to it arrives at `arrival.arrival_ps`.
  void accept(const RemoteArrival& arrival);
  Time delay() const { return delay_; }
  // Faults (network_faults.hpp): a link going down loses every packet on the wire and every one
  // handed to it until it comes back up. A link into another partition loses those its far end
  // holds (taken in already: the fault runs between windows, after PartitionWindows::bring_to_now).
  void go_down();
  void go_up() { down_ = false; }
  bool down() const { return down_; }
  // Jitter and random loss on this direction (link_impairment.hpp).
  void set_impairment(std::unique_ptr<LinkImpairment> impairment) {
    impairment_ = std::move(impairment);
  }

 private:
  struct InFlight {
    int64_t arrival_ps;
    PacketRef packet;
  };
  // The head's arrival event names its packet, which the receiver reads first: the event loop
  // starts loading it an event ahead (EventQueue::kPrefetchArg).
  static constexpr uint32_t kArrival = EventQueue::kPrefetchArg;
  uint64_t packet_address(PacketRef packet) const {
    return reinterpret_cast<uint64_t>(&ctx_.packet(packet));
  }
  // What a packet's transmission and arrival read first and together (a link is a member of its
  // egress port, whose cache lines are aligned: these fill the link's first line).
  const NetContext& ctx_;  // the sending side's
  RingQueue<InFlight> in_flight_;
  Time delay_;
  Node* peer_;
  uint32_t peer_in_port_;
  CancelToken arrival_token_;       // the head's arrival, cancelled when the link goes down
  RemoteOutbox* outbox_ = nullptr;  // set for a link into another partition, with its far end
  std::unique_ptr<LinkImpairment> impairment_;
  bool down_ = false;
  // The far end of a remote link: the place in its queue's order where it last went idle (its last
  // packet's arrival event, before that packet went on; EventQueue::take_sequence_mark) and the
  // queue's renumbering count then. A packet that left while that one was still on the wire had
  // its arrival scheduled right there on one queue, whichever window it is taken in.
  bool marks_idle_ = false;
  Link* far_end_ = nullptr;
  int64_t last_arrival_ps_ = INT64_MIN;  // the far end of a remote link: its last packet's arrival
  uint64_t idle_mark_ = 0;
  uint64_t idle_renumbers_ = 0;
};

// Inline: every hop calls it.
inline bool Link::transmit(PacketRef packet, Time departure) {
  if (down_) {
    ctx_.drop(packet, DropReason::LinkDown);
    return false;
  }
  ++ctx_.counters.packet_hops;
  Time arrival = departure + delay_;
  if (impairment_ && !impairment_->apply(ctx_.packet(packet), ctx_.now(), arrival)) {
    ctx_.drop(packet, DropReason::LinkLoss);
    return false;
  }
  if (outbox_ != nullptr) {
    outbox_->post(RemoteArrival{arrival.picoseconds(), ctx_.now().picoseconds(), far_end_,
                                ctx_.packet(packet)});
    ctx_.pool.release(packet);
    return true;
  }
  const bool was_idle = in_flight_.empty();
  in_flight_.push(InFlight{arrival.picoseconds(), packet});
  if (was_idle)
    ctx_.queue.schedule(arrival, this, kArrival, packet_address(packet), &arrival_token_);
  return true;
}

}  // namespace syncsim::net
