#include "sim/net/egress_port.hpp"

#include <bit>

#include "sim/core/check.hpp"
#include "sim/net/nic.hpp"
#include "sim/net/switch.hpp"

namespace syncsim::net {

EgressPort::EgressPort(const NetContext& ctx, const LinkParams& link, uint32_t priorities,
                       Node* peer, uint32_t peer_in_port, Switch* owner, Nic* source)
    : ctx_(ctx),
      priorities_(static_cast<uint8_t>(priorities)),
      header_(link.header),
      owner_(owner),
      mmu_(owner != nullptr ? &owner->mmu() : nullptr),
      source_(source),
      link_(ctx, link.delay, peer, peer_in_port),
      bandwidth_(link.bandwidth),
      line_rate_(link.bandwidth),
      link_mtu_wire_(link.mtu.count() + link.header.count()) {
  SIM_CHECK(priorities >= 1 && priorities <= kMaxPriorities, "priority count out of range");
  SIM_CHECK(bandwidth_.bits_per_second() > 0, "a link needs a positive bandwidth");
}

void EgressPort::enqueue(PacketRef packet) {
  const Packet& p = ctx_.packet(packet);
  SIM_CHECK(p.priority < priorities_, "packet priority above the port's class count");
  const int64_t wire = p.payload_bytes + header_.count();
  settle_handed_over();
  if (down_) {
    drop_buffered(packet, DropReason::LinkDown);
    return;
  }
  if (storm_mask_ != 0 && pfc_.watchdog_drop && storm(p.priority)) {
    drop_buffered(packet);
    return;
  }
  if (ecn_enabled_ && ecn_on_enqueue_ && p.kind == PacketKind::Data &&
      ecn_mark(p.priority, p.ecn_ce)) {
    ctx_.packet(packet).ecn_ce = true;
  }
  queued_bytes_ += wire;
  if (from_internal(p)) {
    internal_bytes_ += wire;
    ctx_.note_queue_depth(queued_bytes_);
    internal_.push(packet);
    note_side_queues();
    if (in_service_ == kNoPacket) start_when_free();
    return;
  }
  const uint8_t priority = p.priority;
  prio_bytes_[priority] += wire;
  note_depth(priority);
  ctx_.note_queue_depth(queued_bytes_);
  if (in_service_ == kNoPacket && elided_bytes_ == 0 && queued_mask_ == 0 && !paused(priority) &&
      !credits_ && side_queues_ == 0) [[likely]] {
    // An idle port with nothing else waiting: what start_next() would pick, without the packet
    // passing through its class's FIFO (one cache line of the port and one of the FIFO's ring
    // fewer per hop).
    std::array<uint32_t, kMaxPriorities> head_wire{};
    head_wire[priority] = static_cast<uint32_t>(wire);
    const int chosen = ets_.pick(1U << priority, head_wire);
    SIM_CHECK(chosen == priority, "ETS picked a class with nothing to send");
    internal_turn_ = true;
    take_from_class(packet, priority);
    start(packet);
    return;
  }
  queues_[priority].push(packet);
  queued_mask_ = static_cast<uint8_t>(queued_mask_ | (1U << priority));
  if (in_service_ == kNoPacket) start_when_free();
}

void EgressPort::send_control(PacketRef packet) {
  if (down_) {
    ctx_.drop(packet, DropReason::LinkDown);
    return;
  }
  if (const Packet& p = ctx_.packet(packet);
      counters_ != nullptr && p.kind == PacketKind::Pause && p.pfc_xoff) {
    ++counters_[p.priority].pause_sent;
  }
  settle_handed_over();
  queued_bytes_ += ctx_.packet(packet).payload_bytes + header_.count();
  control_.push(packet);
  note_side_queues();
  if (in_service_ == kNoPacket) start_when_free();
}

bool EgressPort::ecn_mark(uint8_t priority, bool already_marked) {
  if (!ecn_.mark(prio_bytes_[priority], ecn_rng_)) return false;
  ++ctx_.counters.ecn_hop_marks;
  if (counters_ != nullptr) ++counters_[priority].ecn_marks;
  // A packet marked upstream stays marked (CE is sticky): it counts once, where first marked.
  if (!already_marked) ++ctx_.counters.ecn_marks;
  return true;
}

void EgressPort::start_when_free() {
  if (elided_bytes_ != 0) {
    if (ctx_.now().picoseconds() < busy_until_ps_) {
      if (!free_pending_ && anything_waits()) {
        free_pending_ = true;
        ctx_.queue.schedule(Time::ps(busy_until_ps_), this, kFree);
      }
      return;
    }
    // Its kRelease event, due at this instant, starts the next packet.
    if (release_pinned_) return;
    settle_handed_over();
  }
  start_next();
}

void EgressPort::pin_release(uint32_t ingress_port, uint8_t priority) {
  if (elided_bytes_ == 0 || release_pinned_ || release_ingress_ != ingress_port ||
      release_priority_ != priority) {
    return;
  }
  // The switch applied the releases due by now before its admission sent the PAUSE.
  SIM_CHECK(ctx_.now().picoseconds() < busy_until_ps_, "a due release was left pending at a PAUSE");
  release_pinned_ = true;
  ++ctx_.counters.pinned_releases;
  ctx_.queue.schedule(Time::ps(busy_until_ps_), this, kRelease);
}

void EgressPort::run_pinned_release() {
  SIM_CHECK(release_pinned_ && elided_bytes_ != 0, "a pinned release ran without its packet");
  release_pinned_ = false;
  queued_bytes_ -= elided_bytes_;
  elided_bytes_ = 0;
  owner_->note_release_pending(-1);
  // As at a transmission end: the XON threshold reads every release due by now.
  if (mmu_->xoff(release_ingress_, release_priority_)) owner_->settle_releases();
  if (mmu_->release(release_ingress_, release_priority_, Bytes{release_bytes_}) ==
      PfcSignal::Resume) {
    owner_->send_pfc(release_ingress_, release_priority_, false);
  }
  // The RESUME may have gone out of this very port and started it already.
  if (in_service_ == kNoPacket && elided_bytes_ == 0) start_next();
}

void EgressPort::decide_hand_over() {
  const bool yes =
      ctx_.hand_over && mmu_ != nullptr && !credits_ && !ib_release_ && !link_.impaired();
  hand_over_port_ = yes ? HandOver::Yes : HandOver::No;
}

void EgressPort::retire_handed_over() {
  queued_bytes_ -= elided_bytes_;
  elided_bytes_ = 0;
  const PfcSignal signal =
      mmu_->release(release_ingress_, release_priority_, Bytes{release_bytes_});
  SIM_CHECK(signal == PfcSignal::None, "a release left pending under a PAUSE signalled RESUME");
  owner_->note_release_pending(-1);
}

void EgressPort::hand_over(PacketRef packet, Time done_at, uint32_t wire) {
  SIM_CHECK(elided_bytes_ == 0, "a port handed over a packet while the last one was leaving");
  in_service_ = kNoPacket;
  busy_until_ps_ = done_at.picoseconds();
  elided_bytes_ = wire;
  const Packet& p = ctx_.packet(packet);
  count_sent(p);
  release_ingress_ = p.ingress_port;
  release_priority_ = p.priority;
  release_bytes_ = p.buffered_bytes;
  owner_->note_release_pending(1);
  put_on_link(packet, done_at);
}

bool EgressPort::put_on_link(PacketRef packet, Time departure) {
  const uint8_t priority = ctx_.packet(packet).priority;
  const bool link_down = link_.down();
  if (link_.transmit(packet, departure)) return true;
  if (counters_ != nullptr) {
    const DropReason why = link_down ? DropReason::LinkDown : DropReason::LinkLoss;
    ++counters_[priority].drops[static_cast<std::size_t>(why)];
  }
  return false;
}

void EgressPort::count_sent(const Packet& p) {
  if (counters_ != nullptr && p.kind != PacketKind::Pause) {
    ++counters_[p.priority].tx_packets;
    if (p.kind == PacketKind::Cnp) ++counters_[p.priority].tx_cnps;
    counters_[p.priority].tx_bytes += p.payload_bytes + header_.count();
  }
}

void EgressPort::start_next() {
  if (down_) return;
  PacketRef next = kNoPacket;
  if ((side_queues_ & kControlWaits) != 0) {
    next = control_.pop();
    note_side_queues();
  } else {
    // The classes with packets waiting and not paused, visited by their bits (usually one).
    uint32_t ready = static_cast<uint32_t>(queued_mask_ & ~paused_mask_);
    std::array<uint32_t, kMaxPriorities> head_wire{};
    const auto header = static_cast<uint32_t>(header_.count());
    for (uint32_t bits = ready; bits != 0; bits &= bits - 1) {
      const auto prio = static_cast<uint32_t>(std::countr_zero(bits));
      head_wire[prio] = ctx_.packet(queues_[prio].front()).payload_bytes + header;
      // InfiniBand: the head packet waits until its VL has credits for all of it.
      if (credits_ && !ib_.can_send(static_cast<uint8_t>(prio), head_wire[prio])) {
        ready &= ~(1U << prio);
      }
    }
    // An in-switch engine's packet goes when it is the engine's turn or nothing else is ready.
    // With link credits (NVLink) it waits for them like the port's own FIFOs.
    bool internal_ready = (side_queues_ & kInternalWaits) != 0;
    if (internal_ready) {
      const Packet& head = ctx_.packet(internal_.front());
      internal_ready = !paused(head.priority) &&
                       (!credits_ || ib_.can_send(head.priority, head.payload_bytes + header));
    }
    if (internal_ready && (internal_turn_ || ready == 0)) {
      next = internal_.pop();
      note_side_queues();
      internal_turn_ = false;
    } else if (const int chosen = ets_.pick(ready, head_wire); chosen >= 0) {
      internal_turn_ = true;
      const auto prio = static_cast<uint32_t>(chosen);
      next = queues_[prio].pop();
      if (queues_[prio].empty()) queued_mask_ = static_cast<uint8_t>(queued_mask_ & ~(1U << prio));
      take_from_class(next, static_cast<uint8_t>(prio));
    }
  }
  if (next == kNoPacket) {
    if (source_ == nullptr) return;
    // InfiniBand: flows whose VL cannot take a full-MTU packet wait for credits.
    next =
        source_->pull(credits_ ? static_cast<uint8_t>(paused_mask_ | ib_.blocked_mask(priorities_))
                               : paused_mask_);
    if (next == kNoPacket) return;
    queued_bytes_ += ctx_.packet(next).payload_bytes + header_.count();
  }
  start(next);
}

void EgressPort::take_from_class(PacketRef packet, uint8_t priority) {
  Packet& p = ctx_.packet(packet);
  // Dequeue marking sees the FIFO including the departing packet.
  if (ecn_enabled_ && !ecn_on_enqueue_ && p.kind == PacketKind::Data &&
      ecn_mark(priority, p.ecn_ce)) {
    p.ecn_ce = true;
  }
  prio_bytes_[priority] -= p.payload_bytes + header_.count();
  note_depth(priority);
}

void EgressPort::start(PacketRef next) {
  in_service_ = next;
  if (credits_) take_ib_credits(ctx_.packet(next));
  const uint32_t wire = ctx_.packet(next).payload_bytes + static_cast<uint32_t>(header_.count());
  const Time done_at = ctx_.now() + tx_time(wire);
  if (hand_over_at_start(ctx_.packet(next))) {
    hand_over(next, done_at, wire);
    return;
  }
  service_end_ps_ = done_at.picoseconds();
  // A transmission end reads a packet that has left the cache since: with packets waiting, the
  // head of the highest class (strict priority's pick, and usually the only class), which sat in
  // its FIFO since it was enqueued; with none, the packet leaving, which the end hands to its link.
  // The event names it so that the dispatch loop starts loading it an event ahead (kPrefetchArg; a
  // higher class arriving meanwhile only makes the hint useless). The head is loaded from now on
  // too.
  if (queued_mask_ != 0) {
    const auto prio = static_cast<uint32_t>(std::bit_width(queued_mask_) - 1);
    const PacketRef head = queues_[prio].front();
    __builtin_prefetch(&ctx_.packet(head));
    ctx_.queue.schedule(done_at, this, kTxDone | EventQueue::kPrefetchArg,
                        reinterpret_cast<uint64_t>(&ctx_.packet(head)));
    return;
  }
  ctx_.queue.schedule(done_at, this, kTxDone | EventQueue::kPrefetchArg,
                      reinterpret_cast<uint64_t>(&ctx_.packet(next)));
}

void EgressPort::on_event(uint32_t kind, uint64_t arg) {
  if (kind == kCreditReturn) {
    on_credit_return(arg);
    return;
  }
  if (kind == kFree) {
    free_pending_ = false;
    if (in_service_ == kNoPacket) start_when_free();
    return;
  }
  if (kind == kRelease) {
    run_pinned_release();
    return;
  }
  if (kind != kTxDone) {
    on_pfc_event(kind, arg);
    return;
  }
  const PacketRef done = in_service_;
  in_service_ = kNoPacket;
  const Packet& p = ctx_.packet(done);
  queued_bytes_ -= p.payload_bytes + header_.count();
  SIM_CHECK(queued_bytes_ >= 0, "egress queue byte count went negative");
  if (from_internal(p)) internal_bytes_ -= p.payload_bytes + header_.count();
  const uint8_t done_priority = p.priority;
  count_sent(p);
  if (mmu_ != nullptr && p.kind != PacketKind::Pause) {
    // A pair with a PAUSE outstanding reads its XON threshold, which reads every release due by
    // now; without one the release reads nothing (SharedBufferMmu::release).
    if (mmu_->lossless(p.priority) && mmu_->xoff(p.ingress_port, p.priority)) {
      owner_->settle_releases();
    }
    // InfiniBand: the packet has left this switch's buffer; its credits go back upstream.
    if (ib_release_) owner_->return_ib_credits(p.ingress_port, p.priority, p.buffered_bytes);
    // A RESUME goes out of the ingress port the bytes were charged to.
    if (mmu_->release(p.ingress_port, p.priority, Bytes{p.buffered_bytes}) == PfcSignal::Resume) {
      owner_->send_pfc(p.ingress_port, p.priority, false);
    }
  }
  const int64_t done_wire = ctx_.packet(done).payload_bytes + header_.count();
  // Lost on the wire: IB's credit resynchronisation gives this port its credits back.
  if (!put_on_link(done, ctx_.now()) && credits_) {
    ib_credit_return(done_priority, done_wire, ctx_);
  }
  // The RESUME above may have gone out of this very port (a route that turns back over its ingress
  // link) and started it already.
  if (in_service_ == kNoPacket) start_next();
  if (internal_writer_ != nullptr) internal_writer_->kick();
}

}  // namespace syncsim::net
