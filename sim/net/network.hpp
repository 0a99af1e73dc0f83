#pragma once
// The packet-level network: NICs, store-and-forward switches, egress ports and links built from a
// NetworkSpec. A packet's life is a straight line (see architecture.md):
//   Nic::pull -> EgressPort (per-priority FIFOs, tx-done event) -> Link (propagation, one pending
//   event per link) -> Switch::receive (buffer admission, next hop from the route) -> EgressPort ...
//   -> Nic::receive (delivery, flow completion).
// The hot path allocates nothing per packet once queues and the packet pool have warmed up.
#include <array>
#include <deque>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/simulation.hpp"
#include "sim/net/dcqcn.hpp"
#include "sim/net/deadlock.hpp"
#include "sim/net/ecn.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/packet.hpp"
#include "sim/net/ring_queue.hpp"
#include "sim/net/routing.hpp"
#include "sim/net/shared_buffer_mmu.hpp"
#include "sim/net/transport_state.hpp"

namespace syncsim::net {

class Network;
class Nic;
class Switch;

inline constexpr uint32_t kMaxPriorities = 8;

struct FlowRecord {
  NodeId src = kNoNode;
  NodeId dst = kNoNode;
  int64_t size_bytes = 0;
  int64_t sent_bytes = 0;
  int64_t delivered_bytes = 0;
  Time start = Time::zero();
  Time finish = Time::max();
  uint32_t route_begin = 0;
  uint16_t route_hops = 0;
  uint32_t mtu_bytes = 0;
  uint8_t priority = 0;
  bool done = false;
  uint32_t transport_state = kNoTransportState;  // index of its ReliableFlowState, if any
};

struct NetworkCounters {
  uint64_t packet_hops = 0;       // packet transmissions over links
  uint64_t packets_injected = 0;
  int64_t bytes_injected = 0;     // payload bytes put on the wire by source NICs
  int64_t bytes_delivered = 0;    // payload bytes received by destination NICs
  int64_t bytes_dropped = 0;      // payload bytes lost in switches
  std::array<uint64_t, static_cast<std::size_t>(DropReason::Count)> packets_dropped{};
  int64_t max_queue_bytes = 0;    // deepest egress queue seen anywhere (wire bytes)
  uint64_t pause_frames = 0;      // PFC PAUSE (XOFF) frames sent by switches
  uint64_t resume_frames = 0;     // PFC RESUME (XON) frames sent by switches
  uint64_t ecn_marks = 0;         // data packets marked CE by switch egress queues
  uint64_t cnps = 0;              // DCQCN CNPs sent by destination NICs (notification points)
  uint64_t rate_cuts = 0;         // DCQCN rate decreases applied at source NICs
  uint64_t nic_pause_frames = 0;  // receiver-side PFC PAUSE frames sent by NICs (not in pause_frames)
  int64_t max_nic_rx_bytes = 0;   // fullest NIC receive buffer seen (receiver-side PFC)
  uint64_t flows_started = 0;
  uint64_t flows_completed = 0;
  // Reliable transports (go-back-N RoCE, TCP): bytes_injected counts retransmissions too, so
  // injected = delivered + dropped + discarded once nothing is in flight.
  uint64_t retransmitted_packets = 0;
  int64_t retransmitted_bytes = 0;
  uint64_t timeouts = 0;          // retransmission timeouts that fired
  uint64_t fast_retransmits = 0;  // TCP: 3 duplicate ACKs
  uint64_t naks = 0;              // go-back-N NAKs sent by receivers
  uint64_t acks = 0;              // ACK packets sent by receivers
  int64_t bytes_discarded = 0;    // payload received out of order (go-back-N) or twice
};

class FlowCompletionHandler {
 public:
  virtual ~FlowCompletionHandler() = default;
  virtual void on_flow_complete(FlowId flow, const FlowRecord& record) = 0;
};

class Node {
 public:
  virtual ~Node() = default;
  virtual void receive(PacketRef packet, uint32_t in_port) = 0;
};

// One direction of a cable: owns the propagation delay. Packets in flight sit in a FIFO with their
// arrival times; only the head has an event pending.
class Link final : public EventTarget {
 public:
  Link(Network& net, Time delay, Node* peer, uint32_t peer_in_port)
      : net_(net), delay_(delay), peer_(peer), peer_in_port_(peer_in_port) {}
  void transmit(PacketRef packet);
  void on_event(uint32_t kind, uint64_t arg) override;
  Time delay() const { return delay_; }
  // Jitter and random loss on this direction (transport.hpp, ImpairmentParams).
  void set_impairment(std::unique_ptr<LinkImpairmentState> state) { impairment_ = std::move(state); }

 private:
  // Applies jitter to `arrival`; false when the packet is lost (dropped here).
  bool impair(PacketRef packet, Time& arrival);
  struct InFlight {
    int64_t arrival_ps;
    PacketRef packet;
  };
  Network& net_;
  Time delay_;
  Node* peer_;
  uint32_t peer_in_port_;
  RingQueue<InFlight> in_flight_;
  std::unique_ptr<LinkImpairmentState> impairment_;
};

// An output port: strict-priority FIFOs (higher class first), one packet in service at a time.
// A NIC's port pulls data from its NIC when its queues are empty, like a NIC's transmit scheduler.
// PFC: a priority paused by the peer is not started (the packet in service finishes); PFC frames wait
// in a control queue served before every priority and never paused. ECN (switch ports only) marks
// data packets by RED on the depth of their priority's FIFO, at dequeue or at enqueue.
class EgressPort final : public EventTarget {
 public:
  EgressPort(Network& net, const LinkParams& link, uint32_t priorities, Node* peer,
             uint32_t peer_in_port, Switch* owner, Nic* source);
  void enqueue(PacketRef packet);
  // A PFC frame: sent ahead of every data priority, ignoring pauses.
  void send_control(PacketRef packet);
  // Applies a received PAUSE (paused = true) or RESUME for one priority; a PAUSE with quanta > 0
  // expires after quanta x 512 bit times unless another PAUSE refreshes it.
  void set_paused(uint8_t priority, bool paused, uint32_t quanta = 0);
  // A switch port that sent PAUSE with quanta: re-send it (from switch port `local_port`) at half the
  // pause time while the ingress is still above XOFF.
  void arm_pause_refresh(uint32_t local_port, uint8_t priority, Time after);
  void cancel_pause_refresh(uint8_t priority) { refresh_tokens_[priority].cancel_pending(); }
  void enable_ecn(EcnMarker marker, bool on_enqueue, RngStream rng) {
    ecn_ = marker;
    ecn_enabled_ = true;
    ecn_on_enqueue_ = on_enqueue;
    ecn_rng_ = rng;
  }
  // Starts transmitting if idle and something is eligible.
  void kick() {
    if (in_service_ == kNoPacket) start_next();
  }
  void on_event(uint32_t kind, uint64_t arg) override;

  int64_t queued_bytes() const { return queued_bytes_; }
  // Wire bytes waiting in one priority's FIFO (not counting the packet in service).
  int64_t priority_bytes(uint8_t priority) const { return prio_bytes_[priority]; }
  bool paused(uint8_t priority) const { return ((static_cast<uint32_t>(paused_mask_) >> priority) & 1U) != 0; }
  // Time any priority of this port spent paused (summed over priorities), open intervals up to `now`.
  Time paused_time(Time now) const;
  uint64_t pause_frames_received() const { return pause_frames_received_; }
  // Deadlock detection and the PFC watchdog read these.
  bool switch_owned() const { return owner_ != nullptr; }
  uint8_t paused_mask() const { return paused_mask_; }
  Time paused_since(uint8_t priority) const { return Time::ps(paused_since_ps_[priority]); }
  const RingQueue<PacketRef>& fifo(uint8_t priority) const { return queues_[priority]; }
  // PFC watchdog on this (switch) port: see PfcParams::watchdog.
  void enable_watchdog(Time detection_time, bool drop) {
    watchdog_ps_ = detection_time.picoseconds();
    watchdog_drop_ = drop;
  }
  Bandwidth bandwidth() const { return bandwidth_; }
  Bytes header() const { return header_; }
  Link& link() { return link_; }

 private:
  void start_next();
  bool ecn_mark(uint8_t priority);
  enum EventKind : uint32_t { kTxDone = 0, kWatchdog = 1, kPauseExpiry = 2, kPauseRefresh = 3 };
  void resume(uint8_t priority);
  void watchdog_fire(uint8_t priority);
  bool storm(uint8_t priority);  // inside a watchdog storm period (clears an expired one)
  void drop_buffered(PacketRef packet);
  Time tx_time(uint32_t wire_bytes) {
    if (wire_bytes != cached_wire_bytes_) {
      cached_wire_bytes_ = wire_bytes;
      cached_tx_time_ = bandwidth_.tx_time(Bytes{wire_bytes});
    }
    return cached_tx_time_;
  }

  Network& net_;
  Bandwidth bandwidth_;
  Bytes header_;
  Link link_;
  uint32_t priorities_;
  std::array<RingQueue<PacketRef>, kMaxPriorities> queues_;
  PacketRef in_service_ = kNoPacket;
  int64_t queued_bytes_ = 0;  // wire bytes waiting or in service
  uint32_t cached_wire_bytes_ = 0;
  Time cached_tx_time_ = Time::zero();
  Switch* owner_;             // the owning switch; null on a NIC
  SharedBufferMmu* mmu_;      // the owning switch's buffer; null on a NIC
  Nic* source_;               // the owning NIC; null on a switch
  uint8_t paused_mask_ = 0;   // bit p: priority p paused by the peer
  bool ecn_enabled_ = false;
  bool ecn_on_enqueue_ = false;
  std::array<int64_t, kMaxPriorities> prio_bytes_{};  // wire bytes waiting per priority
  RingQueue<PacketRef> control_;                      // PFC frames
  std::array<int64_t, kMaxPriorities> paused_since_ps_{};
  int64_t paused_ps_ = 0;     // closed paused intervals, summed over priorities
  uint64_t pause_frames_received_ = 0;
  EcnMarker ecn_;
  RngStream ecn_rng_{0, 0};
  int64_t watchdog_ps_ = 0;                           // 0: no watchdog
  bool watchdog_drop_ = true;
  uint8_t storm_mask_ = 0;                            // bit p: priority p in a watchdog storm period
  std::array<int64_t, kMaxPriorities> storm_until_ps_{};
  std::array<CancelToken, kMaxPriorities> watchdog_tokens_{};
  std::array<CancelToken, kMaxPriorities> expiry_tokens_{};   // PAUSE quanta expiry
  std::array<CancelToken, kMaxPriorities> refresh_tokens_{};  // PAUSE refresh (sending side)
};

class Switch final : public Node {
 public:
  Switch(Network& net, NodeId id, const SwitchParams& params, const std::vector<PortId>& ports,
         MmuPfcConfig pfc);
  void receive(PacketRef packet, uint32_t in_port) override;
  // Sends a PFC PAUSE (xoff) or RESUME for `priority` out of local port `port`, to the upstream node.
  void send_pfc(uint32_t port, uint8_t priority, bool xoff);
  SharedBufferMmu& mmu() { return mmu_; }
  const SharedBufferMmu& mmu() const { return mmu_; }
  NodeId id() const { return id_; }
  // Wire overhead of each ingress port's link: a packet is charged payload + ingress header.
  void set_ingress_headers(std::vector<uint32_t> headers) { ingress_header_ = std::move(headers); }

 private:
  Network& net_;
  NodeId id_;
  SharedBufferMmu mmu_;
  const std::vector<PortId>& ports_;  // local port index -> egress PortId
  std::vector<uint32_t> ingress_header_;
};

class Nic final : public Node, public EventTarget {
 public:
  enum EventKind : uint32_t { kWake = 0, kRateTimer = 1, kRetransmitTimer = 2, kRxDrain = 3 };
  Nic(Network& net, NodeId id) : net_(net), id_(id) {}
  void receive(PacketRef packet, uint32_t in_port) override;
  // The next data packet to send, round-robin over active flows whose priority is not paused
  // (bit p of `paused_mask`) and, with DCQCN, whose pacing allows (next_send_at <= now), or
  // kNoPacket. When only pacing holds flows back, a wake-up is scheduled at the earliest one.
  PacketRef pull(uint8_t paused_mask);
  void add_flow(FlowId flow);
  NodeId id() const { return id_; }
  // kWake: kick the NIC's port; kRateTimer: DCQCN rate-increase timer of flow `arg`.
  void on_event(uint32_t kind, uint64_t arg) override;
  // Reliable transports (transport.cpp): lists a flow again once it may send, and kicks the port.
  void reactivate(FlowId flow);
  // ... and unlists one that may no longer send (an ACK covered what it was about to resend).
  void deactivate(FlowId flow);

  // A paced flow's next send time moved earlier (its rate went up): make sure the NIC looks again.
  void pacing_moved(int64_t at_ps) { wake_at(at_ps); }

 private:
  void wake_at(int64_t at_ps);
  // The next packet of reliable flow active_[next_] (a new PSN or a retransmission).
  PacketRef pull_reliable(FlowId id);
  // A data packet of flow `id` leaves now: DCQCN pacing (when on) and the injection counters.
  void account_injected(FlowId id, const Packet& p);
  // Receiver-side PFC: accept a data packet into the receive buffer / drain its head.
  void rx_accept(PacketRef packet);
  void rx_drain();
  void rx_pfc(bool xoff);
  void consume(PacketRef packet);  // notification point + delivery

  Network& net_;
  NodeId id_;
  RingQueue<PacketRef> rx_;
  int64_t rx_bytes_ = 0;
  bool rx_paused_ = false;          // this NIC has paused its switch
  bool rx_draining_ = false;
  std::vector<FlowId> active_;
  std::size_t next_ = 0;
  CancelToken wake_token_;
  int64_t wake_at_ps_ = INT64_MAX;  // pending wake-up, INT64_MAX if none
};

// Per-flow DCQCN state, kept only when DCQCN is on (parallel to the flow table).
struct DcqcnFlowState {
  DcqcnRateController rc;                  // reaction point at the source NIC
  int64_t next_send_ps = 0;                // pacing: the flow may start its next packet from here
  int64_t last_send_ps = INT64_MIN;        // when the flow's last packet started (INT64_MIN: none)
  uint32_t last_wire_bytes = 0;            // and its wire size: a rate change re-spaces that gap
  CancelToken rate_timer;                  // a cut restarts the timer; the flow's last byte sent
                                           // cancels it, so no event outlives the flow
  int64_t last_cnp_ps = INT64_MIN;         // notification point: last CNP sent for this flow
  uint32_t cnp_route_begin = UINT32_MAX;   // the reverse route (dst -> src), built on first CNP
};

class Network {
 public:
  Network(Simulation& sim, const NetworkSpec& spec);
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Starts a flow of `size` bytes from NIC `src` to NIC `dst` now. `queue_pair` feeds the ECMP hash.
  FlowId start_flow(NodeId src, NodeId dst, Bytes size, uint8_t priority, uint32_t queue_pair);
  void set_completion_handler(FlowCompletionHandler* handler) { completion_ = handler; }

  const FlowRecord& flow(FlowId id) const { return flows_[id]; }
  // The egress ports a flow's packets leave through, source NIC first.
  std::vector<PortId> route_of(FlowId id) const {
    const FlowRecord& f = flows_[id];
    return {route_arena_.begin() + f.route_begin, route_arena_.begin() + f.route_begin + f.route_hops};
  }
  std::size_t flow_count() const { return flows_.size(); }
  // The egress port a flow's packets leave its source NIC through.
  PortId flow_first_port(FlowId id) const { return route_arena_[flows_[id].route_begin]; }
  const NetworkCounters& counters() const { return counters_; }
  const Routing& routing() const { return routing_; }
  const NetworkSpec& spec() const { return spec_; }
  Simulation& simulation() { return sim_; }
  std::size_t packets_in_flight() const { return pool_.live(); }
  std::size_t packet_pool_capacity() const { return pool_.capacity(); }
  const Switch* switch_at(NodeId id) const;
  const EgressPort& port(PortId id) const { return *ports_[id]; }
  std::size_t port_count() const { return ports_.size(); }
  // PFC deadlock detection (null when PFC or detection is off).
  const DeadlockReport* deadlock() const { return deadlock_ ? &deadlock_->report() : nullptr; }
  void note_pause() {
    if (deadlock_) deadlock_->on_pause();
  }
  void note_resume() {
    if (deadlock_) deadlock_->on_resume();
  }
  // Configuration checks run at construction (PFC/ECN thresholds, headroom), for the run's output.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Lossless headroom per ingress port as configured (auto or explicit), in bytes.
  static int64_t required_headroom(const LinkParams& link, Time response_time);
  // ECN (Kmin, Kmax) in bytes for a port of this bandwidth (explicit values, or scaled defaults).
  static std::pair<int64_t, int64_t> ecn_thresholds(const EcnParams& ecn, Bandwidth bandwidth);

  // --- hot-path services for the components above ---
  EventQueue& queue() { return sim_.queue(); }
  Time now() const { return sim_.now(); }
  Packet& packet(PacketRef r) { return pool_[r]; }
  PacketPool& pool() { return pool_; }
  // A packet from the pool with every field set but `seq` (only reliable transports read it, and
  // they set it themselves), at hop 0 of the route starting at `route_begin`.
  PacketRef new_packet(FlowId flow, uint32_t route_begin, uint32_t payload_bytes, uint8_t priority,
                       PacketKind kind, bool ecn_ce, bool pfc_xoff) {
    const PacketRef ref = pool_.allocate();
    Packet& p = pool_[ref];
    p.flow = flow;
    p.route_begin = route_begin;
    p.payload_bytes = payload_bytes;
    p.buffered_bytes = 0;
    p.hop = 0;
    p.ingress_port = 0;
    p.priority = priority;
    p.kind = kind;
    p.ecn_ce = ecn_ce;
    p.pfc_xoff = pfc_xoff;
    return ref;
  }
  // The payload that pads a control frame (PFC, CNP, ACK) to the minimum Ethernet frame on `port`.
  static uint32_t control_frame_payload(const EgressPort& port) {
    const auto header = static_cast<uint32_t>(port.header().count());
    return header < kPauseFrameWireBytes ? kPauseFrameWireBytes - header : 0;
  }
  PortId route_hop(const Packet& p) const { return route_arena_[p.route_begin + p.hop]; }
  EgressPort& egress(PortId id) { return *ports_[id]; }
  FlowRecord& flow_mut(FlowId id) { return flows_[id]; }
  NetworkCounters& counters_mut() { return counters_; }
  void note_queue_depth(int64_t bytes) {
    if (bytes > counters_.max_queue_bytes) counters_.max_queue_bytes = bytes;
  }
  void drop(PacketRef packet, DropReason reason);
  void deliver(PacketRef packet);

  // --- DCQCN (only when spec().nic.dcqcn.enabled) ---
  bool dcqcn_enabled() const { return dcqcn_on_; }
  DcqcnFlowState& dcqcn_flow(FlowId id) { return dcqcn_[id]; }
  const DcqcnFlowState& dcqcn_flow(FlowId id) const { return dcqcn_[id]; }
  // Source NIC sent `wire_bytes` (payload `payload`) of flow `id` now: pacing and byte counter.
  void dcqcn_on_sent(FlowId id, uint32_t wire_bytes, uint32_t payload);
  // Destination NIC received an ECN-marked data packet of flow `id`: maybe send a CNP.
  void dcqcn_notify(FlowId id);
  // Source NIC received a CNP for flow `id`.
  void dcqcn_on_cnp(FlowId id);
  void dcqcn_rate_timer(FlowId id);
  // The flow's rate changed: the gap after its last packet is re-timed at the new rate (like HPCC's
  // ns-3 ChangeRate), so a flow cut to a few Mb/s is not stuck for milliseconds after it recovers.
  void dcqcn_repace(FlowId id);

  // --- reliable transports (transport.cpp) ---
  ReliableFlowState& transport_flow(FlowId id) { return transport_[flows_[id].transport_state]; }
  const ReliableFlowState& transport_flow(FlowId id) const {
    return transport_[flows_[id].transport_state];
  }
  bool transport_can_send(const ReliableFlowState& s) const;
  // Destination NIC: a data packet of a reliable flow; source NIC: an ACK or NAK.
  void transport_on_data(PacketRef packet);
  void transport_on_ack(PacketRef packet);
  void transport_timer(FlowId id);
  // Source NIC sent PSN `seq` of flow `id` now.
  void transport_on_sent(FlowId id, uint32_t seq, uint32_t payload);

 private:
  // Gives a new flow its transport state when its transport and priority call for one.
  void transport_start(FlowId id);
  void transport_send_control(FlowId id, PacketKind kind, uint32_t seq, bool ece);
  void transport_arm_timer(FlowId id, ReliableFlowState& s);
  void transport_reactivate(FlowId id, ReliableFlowState& s);
  void setup_impairments();

  void check_configuration();

  Simulation& sim_;
  const NetworkSpec& spec_;
  Routing routing_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Switch*> switches_;  // by NodeId, null for NICs
  std::vector<Nic*> nics_;         // by NodeId, null for switches
  std::vector<std::unique_ptr<EgressPort>> ports_;
  std::vector<PortId> route_arena_;
  std::vector<FlowRecord> flows_;
  NetworkCounters counters_;
  FlowCompletionHandler* completion_ = nullptr;
  std::vector<std::string> warnings_;
  bool dcqcn_on_ = false;
  std::deque<DcqcnFlowState> dcqcn_;  // a deque: the rate timers' tokens must not move
  std::deque<ReliableFlowState> transport_;  // a deque: completion callbacks add flows mid-handler
  std::unique_ptr<DeadlockDetector> deadlock_;
};

}  // namespace syncsim::net
