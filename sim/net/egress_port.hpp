#pragma once
// An output port: one FIFO per traffic class, chosen by ETS (ets_scheduler.hpp: strict classes,
// then weighted round robin; without ETS plain strict priority, higher class first), one packet in
// service at a time.
// A NIC's port pulls data from its NIC when its queues are empty, like a NIC's transmit scheduler.
// PFC (pfc.hpp): a priority paused by the peer is not started (the packet in service finishes); PFC
// frames wait in a control queue served before every priority and never paused. ECN (switch ports
// only) marks data packets by RED on the depth of their priority's FIFO, at dequeue or at enqueue.
// InfiniBand (ib_credits.hpp): a packet starts only while the port holds credits for it on its VL.
//
// One event per packet where nothing waits behind it: a switch port that starts a packet with its
// queues empty hands it to the link at once, to arrive one serialization time plus the delay
// later, and schedules no transmission end. The port stays busy until then (a packet enqueued
// meanwhile waits for a kFree event at that time), the packet's bytes stay in queued_bytes() until
// then, and its switch buffer is released then (Switch::note_release_pending). What a
// transmission end would do at that instant happens before the instant's other events instead of
// in its place among them: only the order of events of one picosecond differs. A lossless
// packet's release may RESUME: it is handed over only while its (ingress port, priority) has no
// PAUSE outstanding, and a PAUSE sent later pins the release to an event at its time (kRelease,
// pin_release). Not on NICs (their next packet is pulled at the end), InfiniBand or NVLink
// credits (returned at the end), impaired links, or an in-switch engine's packets (their end gives
// the engine room for the next; other packets' ends do not).
#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/ring_queue.hpp"
#include "sim/core/rng.hpp"
#include "sim/net/ecn.hpp"
#include "sim/net/ets_scheduler.hpp"
#include "sim/net/ib_credits.hpp"
#include "sim/net/link.hpp"
#include "sim/net/net_context.hpp"
#include "sim/net/pfc.hpp"
#include "sim/net/port_counters.hpp"

namespace syncsim::net {

class Nic;
class Switch;
class SharedBufferMmu;

class alignas(64) EgressPort final : public EventTarget {
 public:
  EgressPort(const NetContext& ctx, const LinkParams& link, uint32_t priorities, Node* peer,
             uint32_t peer_in_port, Switch* owner, Nic* source);
  void enqueue(PacketRef packet);
  // Starts loading the lines a packet of `priority` reads in enqueue() when it finds the port idle
  // (the per-packet members, its class's byte count, the link), while the switch the packet
  // arrived at admits it (Switch::receive).
  void prefetch_for_enqueue(uint8_t priority) const {
    const auto* base = reinterpret_cast<const char*>(this);
    __builtin_prefetch(base);
    __builtin_prefetch(base + 64);
    __builtin_prefetch(base + 128);
    __builtin_prefetch(&prio_bytes_[priority % kMaxPriorities]);
    __builtin_prefetch(&link_);
  }
  // A PFC frame: sent ahead of every data priority, ignoring pauses.
  void send_control(PacketRef packet);
  // Starts transmitting if idle and something is eligible.
  void kick() {
    if (in_service_ == kNoPacket) start_when_free();
  }
  void on_event(uint32_t kind, uint64_t arg) override;
  void enable_ecn(EcnMarker marker, bool on_enqueue, RngStream rng) {
    ecn_ = marker;
    ecn_enabled_ = true;
    ecn_on_enqueue_ = on_enqueue;
    ecn_rng_ = rng;
  }
  // Transmission selection between the data classes (default: strict priority).
  void set_ets(const EtsScheduler& scheduler) { ets_ = scheduler; }

  // --- PFC (pfc.cpp) ---
  // Applies a received PAUSE (paused = true) or RESUME for one priority; a PAUSE with quanta > 0
  // expires after quanta x 512 bit times unless another PAUSE refreshes it.
  void set_paused(uint8_t priority, bool paused, uint32_t quanta = 0);
  // A switch port that sent PAUSE with quanta: re-send it (from switch port `local_port`) at half
  // the pause time while the ingress is still above XOFF.
  void arm_pause_refresh(uint32_t local_port, uint8_t priority, Time after);
  void cancel_pause_refresh(uint8_t priority) { pfc_.refresh_tokens[priority].cancel_pending(); }
  // PFC watchdog on this (switch) port: see PfcParams::watchdog.
  void enable_watchdog(Time detection_time, bool drop) {
    pfc_.watchdog_ps = detection_time.picoseconds();
    pfc_.watchdog_drop = drop;
  }
  bool paused(uint8_t priority) const {
    return ((static_cast<uint32_t>(paused_mask_) >> priority) & 1U) != 0;
  }
  // Time any priority of this port spent paused (summed over priorities), open intervals up to
  // `now`.
  Time paused_time(Time now) const;
  uint64_t pause_frames_received() const { return pfc_.pause_frames_received; }
  // Deadlock detection and the PFC watchdog read these.
  uint8_t paused_mask() const { return paused_mask_; }
  Time paused_since(uint8_t priority) const { return Time::ps(pfc_.paused_since_ps[priority]); }

  // --- InfiniBand credits (ib_credits.cpp) ---
  // Sends only with credits: `advertised_bytes` per VL from the receiver, SL2VL from `ib`.
  void enable_ib_credits(const InfinibandParams& ib, int64_t advertised_bytes);
  // The same with an explicit class -> credit pool map (NVLink: nvlink_credits.hpp).
  void enable_link_credits(const std::array<uint8_t, kMaxPriorities>& vl_of,
                           int64_t advertised_bytes);
  // A switch port whose switch returns IB credits upstream when a packet leaves through it.
  void enable_ib_credit_release() { ib_release_ = true; }
  // The receiver freed `wire_bytes` of SL `sl`: the credits reach this (sending) port one link
  // delay from now. `from`: the receiver's context (in a windowed run the credits are posted from
  // its partition to this port's).
  void ib_credit_return(uint8_t sl, int64_t wire_bytes, const NetContext& from);
  const IbCreditState& ib_credits() const { return ib_; }

  // Per-priority operator counters (port_counters.hpp), allocated here once; null until enabled.
  void enable_counters() { counters_ = std::make_unique<PriorityCounters[]>(priorities_); }
  PriorityCounters* counters() { return counters_.get(); }
  const PriorityCounters* counters() const { return counters_.get(); }

  // A packet handed to the link at its start (see the top) that has left by now: its bytes leave
  // queued_bytes_ and the switch's buffer (also Switch::settle_releases).
  // A release pinned to its event (pin_release) waits for it.
  void settle_handed_over() {
    if (elided_bytes_ != 0 && !release_pinned_ && ctx_.now().picoseconds() >= busy_until_ps_) {
      retire_handed_over();
    }
  }
  // A PAUSE went out for (ingress_port, priority) of the owning switch: a release of that pair
  // pending here runs as a kRelease event at its time, where it may RESUME.
  void pin_release(uint32_t ingress_port, uint8_t priority);
  // The bytes of that release, if it is due by `at` and not applied yet.
  int64_t due_release_bytes(Time at) const {
    return elided_bytes_ != 0 && at.picoseconds() >= busy_until_ps_ ? release_bytes_ : 0;
  }
  // The switch buffer's bytes of the lossy packet in service here if its last bit leaves at
  // `now_ps` and its transmission end has not run yet (0 otherwise): an arrival at that instant
  // finds its room free (Switch::receive).
  int64_t leaving_bytes_at(int64_t now_ps) const {
    if (in_service_ == kNoPacket || service_end_ps_ != now_ps) return 0;
    const Packet& p = ctx_.packet(in_service_);
    return p.kind == PacketKind::Pause || ctx_.lossless(p.priority) ? 0 : p.buffered_bytes;
  }
  // Wire bytes waiting or in service.
  int64_t queued_bytes() const { return queued_bytes_at(ctx_.now()); }
  int64_t queued_bytes_at(Time at) const {
    return elided_bytes_ != 0 && at.picoseconds() >= busy_until_ps_ ? queued_bytes_ - elided_bytes_
                                                                    : queued_bytes_;
  }
  // Wire bytes waiting in one priority's FIFO (not counting the packet in service).
  int64_t priority_bytes(uint8_t priority) const { return prio_bytes_[priority]; }
  bool switch_owned() const { return owner_ != nullptr; }
  const RingQueue<PacketRef>& fifo(uint8_t priority) const { return queues_[priority]; }
  Bandwidth bandwidth() const { return bandwidth_; }
  // A full-MTU packet on this link, headers included.
  int64_t mtu_wire() const { return link_mtu_wire_; }
  // A switch port that an engine inside the switch writes into (in_switch_engine.hpp); the engine's
  // packets arrive on the switch's local port `engine_in_port`. They wait in a queue of their own,
  // served in turn with the port's FIFOs (as a crossbar arbitrates between its inputs), and as one
  // of them leaves the engine's port is kicked, so it can hand over the next one for this port.
  void set_internal_writer(EgressPort* engine_port, uint32_t engine_in_port) {
    internal_writer_ = engine_port;
    internal_in_port_ = engine_in_port;
  }
  // Wire bytes of the in-switch engine's packets waiting here or in service.
  int64_t internal_bytes() const { return internal_bytes_; }

  // --- Faults (network_faults.hpp; egress_port_faults.cpp) ---
  // Down: everything queued here is dropped (link_down) with its buffer released, the pause state
  // lapses, and until up() nothing is started and whatever arrives is dropped; the packet in
  // service finishes into the down link, which drops it.
  void go_down();
  void go_up();
  bool down() const { return down_; }
  // Serializes at `fraction` of the link's rate from the next packet on (1: the full rate).
  void set_rate_fraction(double fraction);
  Bytes header() const { return header_; }
  Link& link() { return link_; }

 private:
  enum EventKind : uint32_t {
    kTxDone = 0,
    kWatchdog = 1,
    kPauseExpiry = 2,
    kPauseRefresh = 3,
    kCreditReturn = 4,
    kFree = 5,     // a packet handed over at its start has left: the next may start
    kRelease = 6,  // that packet's pinned release (pin_release), then the next may start
  };
  // The calls a packet makes through the port (start_next, take_from_class, start, hand_over,
  // put_on_link, count_sent) are forced inline: private, defined in egress_port.cpp and called only
  // there. As calls, their entries and exits were ~5 % of a packet run's instructions.
  [[gnu::always_inline]] inline void start_next();
  // A packet leaves its class's FIFO (start_next's pick, or an idle port's at once): dequeue ECN
  // marking and the class's byte count.
  [[gnu::always_inline]] inline void take_from_class(PacketRef packet, uint8_t priority);
  // Starts transmitting `next`, picked already: handed to the link at once or a kTxDone at its end.
  [[gnu::always_inline]] inline void start(PacketRef next);
  // start_next(), or, while a packet handed over at its start is still leaving, a kFree event then
  // (when something waits for it).
  void start_when_free();
  void retire_handed_over();
  void run_pinned_release();
  bool anything_waits() const { return (queued_mask_ | side_queues_) != 0; }
  // side_queues_'s bits, kept by note_side_queues() after every push or pop of control_ and
  // internal_, so that a packet's start reads neither queue when both are empty (the usual case).
  static constexpr uint8_t kControlWaits = 1;
  static constexpr uint8_t kInternalWaits = 2;
  void note_side_queues() {
    side_queues_ = static_cast<uint8_t>((control_.empty() ? 0U : kControlWaits) |
                                        (internal_.empty() ? 0U : kInternalWaits));
  }
  // Whether `p`, just taken from the queues, is handed to the link at once (see the top).
  bool hand_over_at_start(const Packet& p) {
    if (hand_over_port_ == HandOver::Unknown) decide_hand_over();
    return hand_over_port_ == HandOver::Yes && !anything_waits() && p.kind != PacketKind::Pause &&
           (!ctx_.lossless(p.priority) || !mmu_->xoff(p.ingress_port, p.priority)) &&
           !from_internal(p);
  }
  // Whether this port hands packets over at all (the fabric is built by the first start).
  void decide_hand_over();
  [[gnu::always_inline]] inline void hand_over(PacketRef packet, Time done_at, uint32_t wire);
  // Puts a packet on the link, its last bit leaving at `departure`; false (counted per priority)
  // when the link lost it.
  [[gnu::always_inline]] inline bool put_on_link(PacketRef packet, Time departure);
  // A packet's transmission is done: per-priority counters.
  [[gnu::always_inline]] inline void count_sent(const Packet& p);
  // RED's decision for a data packet of `priority`; counts it (once per packet, and per hop).
  bool ecn_mark(uint8_t priority, bool already_marked);
  // Two sizes remembered (a port's data packets and the ACKs or CNPs between them alternate; each
  // new size is a 128-bit division), the latest on the hot line.
  Time tx_time(uint32_t wire_bytes) {
    if (wire_bytes != cached_wire_bytes_) [[unlikely]] {
      if (wire_bytes != other_wire_bytes_) {
        other_wire_bytes_ = wire_bytes;
        other_tx_time_ = bandwidth_.tx_time(Bytes{wire_bytes});
      }
      std::swap(cached_wire_bytes_, other_wire_bytes_);
      std::swap(cached_tx_time_, other_tx_time_);
    }
    return cached_tx_time_;
  }
  // PFC (pfc.cpp).
  void on_pfc_event(uint32_t kind, uint64_t arg);
  void resume(uint8_t priority);
  void watchdog_fire(uint8_t priority);
  bool storm(uint8_t priority);  // inside a watchdog storm period (clears an expired one)
  // Drops a packet queued here, releasing its switch buffer (which may RESUME upstream).
  void drop_buffered(PacketRef packet, DropReason reason = DropReason::PfcWatchdog);
  // InfiniBand (ib_credits.cpp): credits back for a VL (the kCreditReturn event); the packet
  // starting now takes its credits.
  void on_credit_return(uint64_t arg);
  void take_ib_credits(const Packet& p);

  // Members by how often a packet touches them, the per-packet ones first and together (a fabric
  // of thousands of ports runs on cache misses; a switch port's enqueue, start and hand-over read
  // the first three cache lines, its class's byte count, the control and engine queues' counts and
  // its class's FIFO: six lines of the port's sixteen).
  const NetContext& ctx_;
  PacketRef in_service_ = kNoPacket;
  uint32_t cached_wire_bytes_ = 0;  // tx_time's latest size (0: none)
  int64_t service_end_ps_ = 0;      // when in_service_'s transmission ends
  // A packet handed to the link at its start (hand_over): its end, its wire bytes (still in
  // queued_bytes_; 0 once settled), and whether a kFree event is pending for that end.
  int64_t busy_until_ps_ = 0;
  int64_t elided_bytes_ = 0;
  int64_t queued_bytes_ = 0;  // wire bytes waiting or in service
  Time cached_tx_time_ = Time::zero();
  // Its release of the switch's buffer, due at busy_until_ps_ (Switch::note_release_pending).
  uint32_t release_ingress_ = 0;
  uint32_t release_bytes_ = 0;
  uint8_t release_priority_ = 0;
  bool free_pending_ = false;
  bool release_pinned_ = false;  // the release waits for its kRelease event (pin_release)
  enum class HandOver : uint8_t { Unknown, Yes, No };
  HandOver hand_over_port_ = HandOver::Unknown;
  uint8_t paused_mask_ = 0;  // bit p: priority p paused by the peer
  uint8_t queued_mask_ = 0;  // bit p: queues_[p] holds packets
  uint8_t storm_mask_ = 0;   // bit p: priority p in a PFC watchdog storm period
  uint8_t side_queues_ = 0;  // kControlWaits, kInternalWaits: control_ / internal_ hold packets
  bool ecn_enabled_ = false;
  bool ecn_on_enqueue_ = false;
  bool down_ = false;
  bool ib_release_ = false;     // a switch port: return credits upstream at tx-done
  bool credits_ = false;        // ib_.enabled, read here on every start
  bool internal_turn_ = false;  // the in-switch engine's packet goes next (set_internal_writer)
  uint8_t priorities_;
  Bytes header_;
  Switch* owner_;         // the owning switch; null on a NIC
  SharedBufferMmu* mmu_;  // the owning switch's buffer; null on a NIC
  Nic* source_;           // the owning NIC; null on a switch
  // The in-switch engine (set_internal_writer): its port, its packets and whose turn is next.
  EgressPort* internal_writer_ = nullptr;
  std::unique_ptr<PriorityCounters[]> counters_;  // one per priority when enabled, else null
  EtsScheduler ets_;
  std::array<int64_t, kMaxPriorities> prio_bytes_{};  // wire bytes waiting per priority
  RingQueue<PacketRef> control_;                      // PFC frames
  RingQueue<PacketRef> internal_;                     // the in-switch engine's packets
  std::array<RingQueue<PacketRef>, kMaxPriorities> queues_;
  Link link_;
  // Read when a packet's size differs from the last one's, on ECN, faults, PFC frames, credits and
  // engines only.
  Bandwidth bandwidth_;
  uint32_t other_wire_bytes_ = 0;  // tx_time's other size (0: none)
  Time other_tx_time_ = Time::zero();
  EcnMarker ecn_;
  RngStream ecn_rng_{0, 0};
  IbCreditState ib_;
  Bandwidth line_rate_;    // the link's own rate, which a degraded link runs a fraction of
  int64_t link_mtu_wire_;  // a full-MTU packet on this link, headers included
  PfcPortState pfc_;
  // The engine's port on its switch, its bytes here.
  uint32_t internal_in_port_ = 0;
  int64_t internal_bytes_ = 0;
  bool from_internal(const Packet& p) const {
    return internal_writer_ != nullptr && p.ingress_port == internal_in_port_ &&
           p.kind == PacketKind::Data;
  }
  void note_depth(uint8_t priority) {
    if (counters_ != nullptr) {
      counters_[priority].note_depth(ctx_.now().picoseconds(), prio_bytes_[priority]);
    }
  }
};

// The payload that pads a control frame (PFC, CNP, ACK) to the minimum Ethernet frame on `port`.
inline uint32_t control_frame_payload(const EgressPort& port) {
  const auto header = static_cast<uint32_t>(port.header().count());
  return header < kPauseFrameWireBytes ? kPauseFrameWireBytes - header : 0;
}

}  // namespace syncsim::net
