#include "sim/net/link.hpp"

#include <algorithm>

namespace syncsim::net {

void Link::accept(const RemoteArrival& arrival) {
  const PacketRef packet = ctx_.pool.allocate();
  ctx_.pool[packet] = arrival.packet;
  const bool was_idle = in_flight_.empty();
  in_flight_.push(InFlight{arrival.arrival_ps, packet});
  if (was_idle) {
    // Ordered among the events of its time as one queue would have: its arrival was scheduled when
    // it left the sender, or, had the packet before it still been on the wire then, when that one
    // arrived (only the head of a link has its arrival pending).
    if (arrival.sent_ps < last_arrival_ps_ && idle_renumbers_ == ctx_.queue.renumber_count()) {
      // The packet before it was still on the wire when it left and has arrived since: one queue
      // scheduled this arrival inside that one's arrival event. Taken in while that one was still
      // on the wire, it is scheduled there by on_event; taken in later, it gets that place here.
      ctx_.queue.schedule_at_mark(Time::ps(arrival.arrival_ps), idle_mark_, this, kArrival,
                                  packet_address(packet), &arrival_token_);
    } else {
      const int64_t scheduled_ps = std::max(arrival.sent_ps, last_arrival_ps_);
      ctx_.queue.schedule_as_of(Time::ps(arrival.arrival_ps), Time::ps(scheduled_ps), this,
                                kArrival, packet_address(packet), &arrival_token_);
    }
  }
  last_arrival_ps_ = arrival.arrival_ps;
}

void Link::on_event(uint32_t /*kind*/, uint64_t /*arg*/) {
  const InFlight head = in_flight_.pop();
  if (!in_flight_.empty()) {
    const InFlight& next = in_flight_.front();
    ctx_.queue.schedule(Time::ps(next.arrival_ps), this, kArrival, packet_address(next.packet),
                        &arrival_token_);
  } else if (marks_idle_) {
    idle_mark_ = ctx_.queue.take_sequence_mark();
    idle_renumbers_ = ctx_.queue.renumber_count();
  }
  peer_->receive(head.packet, peer_in_port_);
}

void Link::go_down() {
  down_ = true;
  arrival_token_.cancel_pending();
  while (!in_flight_.empty()) ctx_.drop(in_flight_.pop().packet, DropReason::LinkDown);
  // The next packet on this cable leaves onto an idle wire.
  last_arrival_ps_ = INT64_MIN;
  if (far_end_ != nullptr) far_end_->go_down();
}

}  // namespace syncsim::net
