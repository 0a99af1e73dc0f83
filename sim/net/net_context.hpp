#pragma once
// What a network component may use, as a small struct of references instead of a back-reference to
// the whole Network: the event queue (and its clock), the packet pool, the counters, the routing
// (ports and the route arena), the egress ports by id and the flow table. The Network owns all of
// them and one NetContext; each component keeps a reference to that context.
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/net/drop_reason.hpp"
#include "sim/net/flow_table.hpp"
#include "sim/net/network_counters.hpp"
#include "sim/net/packet.hpp"
#include "sim/net/remote_outbox.hpp"
#include "sim/net/routing.hpp"

namespace syncsim::net {

class EgressPort;
class LoadBalancer;
class SendQueueTable;

// Told when a switch egress queue is paused by its peer or resumed (the PFC deadlock detector).
class PauseListener {
 public:
  virtual ~PauseListener() = default;
  virtual void on_pause() = 0;
  virtual void on_resume() = 0;
};

// Told of every data packet dropped, before it goes back to the pool (the reliable transport times
// RC recoveries from it); `at` is the context where it was dropped.
struct NetContext;
class DataLossListener {
 public:
  virtual ~DataLossListener() = default;
  virtual void on_data_lost(const NetContext& at, const Packet& packet) = 0;
};

struct NetContext {
  EventQueue& queue;
  PacketPool& pool;
  NetworkCounters& counters;
  const Routing& routing;
  // The route arena: hop h of a packet leaves through routes[route_begin + h]. Reverse routes
  // (ACKs, CNPs) are appended to it as flows need them.
  std::vector<PortId>& routes;
  const std::vector<EgressPort*>& ports;  // by PortId
  FlowTable& flows;
  PauseListener* pause_listener = nullptr;
  DataLossListener* loss_listener = nullptr;
  // Per-packet load balancing (load_balancing.hpp); null under ECMP: packets follow their route.
  const LoadBalancer* balancer = nullptr;
  uint8_t lossless_mask = 0;  // bit p: priority p is PFC-protected (0 when PFC is off)
  // Switch ports may hand a packet over at its start (NetworkSpec::Execution::hand_over).
  bool hand_over = true;
  // The persistent queue pairs' send queues (send_queue.hpp): the source NIC lists a queue pair's
  // next message when the previous one has sent its last new packet.
  SendQueueTable* send_queues = nullptr;
  // A partition of a windowed run (partition_windows.hpp): completions wait here for the window's
  // end instead of calling the handler from inside the partition; null otherwise.
  std::vector<DeferredCompletion>* deferred_completions = nullptr;
  // A partition of a windowed run: its index, what it sends each other partition (by receiving
  // partition) and the run's lookahead; unset (null, 0) otherwise.
  std::vector<RemoteOutbox>* outboxes = nullptr;
  uint32_t partition = 0;
  Time lookahead = Time::zero();

  Time now() const { return queue.now(); }
  bool lossless(uint8_t priority) const {
    return ((static_cast<uint32_t>(lossless_mask) >> priority) & 1U) != 0;
  }
  Packet& packet(PacketRef r) const { return pool[r]; }
  EgressPort& egress(PortId id) const { return *ports[id]; }
  PortId route_hop(const Packet& p) const { return routes[p.route_begin + p.hop]; }

  // A packet from the pool with every field set but `seq` (only reliable transports read it, and
  // they set it themselves), at hop 0 of the route starting at `route_begin`.
  PacketRef new_packet(FlowId flow, uint32_t route_begin, uint32_t payload_bytes, uint8_t priority,
                       PacketKind kind, bool ecn_ce) const {
    const PacketRef ref = pool.allocate();
    Packet& p = pool[ref];
    p.flow = flow;
    p.route_begin = route_begin;
    p.payload_bytes = payload_bytes;
    p.buffered_bytes = 0;
    p.hop = 0;
    p.ingress_port = 0;
    p.priority = priority;
    p.kind = kind;
    p.ecn_ce = ecn_ce;
    p.pfc_xoff = false;
    p.pause_quanta = 0;
    p.entropy = 0;
    return ref;
  }
  // A PFC frame for `priority`: PAUSE (xoff, for `quanta` x 512 bit times; 0: until RESUME) or
  // RESUME, padded to `payload_bytes`.
  PacketRef new_pause(uint32_t payload_bytes, uint8_t priority, bool xoff, uint32_t quanta) const {
    const PacketRef ref = new_packet(0, 0, payload_bytes, priority, PacketKind::Pause, false);
    Packet& p = pool[ref];
    p.pfc_xoff = xoff;
    // PfcParams::check() keeps quanta within 16 bits.
    p.pause_quanta = xoff ? static_cast<uint16_t>(quanta) : uint16_t{0};
    return ref;
  }
  void note_queue_depth(int64_t bytes) const {
    if (bytes > counters.max_queue_bytes) counters.max_queue_bytes = bytes;
  }
  void note_pause() const {
    if (pause_listener != nullptr) pause_listener->on_pause();
  }
  void note_resume() const {
    if (pause_listener != nullptr) pause_listener->on_resume();
  }
  // Appends the reverse of flow `f`'s data route to the route arena and returns where it begins:
  // ACKs, NAKs, CNPs and BECNs go back on it.
  uint32_t append_reverse_route(const FlowRecord& f) const;
  // Runs target->on_event(kind, arg) at `at` where `to` works: scheduled now when `to` is this very
  // context, else posted to `to`'s partition, which takes it in after the window; `at` must then
  // lie at least the lookahead ahead (so it can never be in that partition's past).
  void post(const NetContext& to, Time at, EventTarget* target, uint32_t kind, uint64_t arg) const;
  // Counts a packet lost in the network and returns it to the pool.
  void drop(PacketRef packet, DropReason reason) const;
  // Credits a data packet's payload to its flow and returns it to the pool; the flow's last byte
  // completes it (the completion handler may start new flows).
  void deliver(PacketRef packet) const;
};

}  // namespace syncsim::net
