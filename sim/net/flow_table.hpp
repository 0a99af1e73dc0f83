#pragma once
// The packet network's flows: one record per flow (message) from start to completion, and the
// handler told when a flow's last byte is delivered. Flow ids are dense and never reused.
#include <cstdint>

#include "sim/core/growable_array.hpp"
#include "sim/core/units.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/packet.hpp"

namespace syncsim::net {

inline constexpr uint32_t kNoTransportState = UINT32_MAX;
inline constexpr FlowId kNoFlow = UINT32_MAX;
inline constexpr uint32_t kNoSendQueue = UINT32_MAX;

// Three cache lines, by who writes them: in a windowed run (partition_windows.hpp) the source NIC's
// partition and the destination NIC's run on different threads, and a line one writes per packet
// while the other reads it would move between their caches on every packet.
struct alignas(64) FlowRecord {
  // Set when the flow starts; read by both ends.
  NodeId src = kNoNode;
  NodeId dst = kNoNode;
  int64_t size_bytes = 0;
  Time start = Time::zero();
  uint32_t route_begin = 0;
  uint16_t route_hops = 0;
  uint8_t priority = 0;
  bool persistent_qp = false;  // a message on a queue pair that outlives it (Network::start_flow)
  uint32_t mtu_bytes = 0;
  uint32_t queue_pair = 0;  // feeds the ECMP hash, kept to route the flow again after a fault
  uint32_t transport_state = kNoTransportState;  // its index in the reliable transport, if any
  // A persistent queue pair's send queue (send_queue.hpp): its index, whether the message waits
  // behind an earlier one of the queue pair (not listed at its NIC), the message posted after it
  // while it was the head or waiting, and the wire PSN of its first packet.
  uint32_t send_queue = kNoSendQueue;
  uint32_t first_psn = 0;
  // Load balancing (load_balancing.hpp): whether a route override pins the flow's path, and its
  // ECMP hash.
  bool pinned_route = false;
  uint64_t hash = 0;

  // The source's side.
  alignas(64) int64_t sent_bytes = 0;
  bool parked = false;  // no route since the last routing convergence (network_faults.hpp)
  bool queued = false;
  FlowId queue_next = kNoFlow;
  // Per-packet load balancing: the state the source NIC keeps.
  uint16_t lb_flowlet = 0;
  uint32_t lb_packets = 0;
  int64_t lb_last_sent_ps = 0;

  // The destination's side.
  alignas(64) int64_t delivered_bytes = 0;
  Time finish = Time::max();
  bool done = false;
  int64_t rc_recovery_ps = 0;  // lossless class: time spent recovering lost packets (go-back-N)
};
static_assert(sizeof(FlowRecord) == 192,
              "three cache lines: set at start, source's, destination's");

// A flow's last byte arrived in a partition of a windowed run (partition_windows.hpp): its record
// is complete, and the completion handler is told at the window's end, at `finish_ps`.
struct DeferredCompletion {
  int64_t finish_ps = 0;
  FlowId flow = kNoFlow;
};

class FlowCompletionHandler {
 public:
  virtual ~FlowCompletionHandler() = default;
  virtual void on_flow_complete(FlowId flow, const FlowRecord& record) = 0;
};

class FlowTable {
 public:
  FlowRecord& operator[](FlowId id) { return flows_[id]; }
  const FlowRecord& operator[](FlowId id) const { return flows_[id]; }
  std::size_t size() const { return flows_.size(); }
  FlowId add(const FlowRecord& record) {
    flows_.push_back(record);
    return static_cast<FlowId>(flows_.size() - 1);
  }
  void set_completion_handler(FlowCompletionHandler* handler) { completion_ = handler; }
  FlowCompletionHandler* completion_handler() const { return completion_; }

 private:
  // Grown in place (growable_array.hpp): a collective at packet level starts a flow per transfer,
  // millions of 192-byte records, and a doubling vector copied them and faulted their pages in
  // twice (`Network::start_flow` was a sixth of a 1,024-rank ring all-reduce's samples).
  GrowableArray<FlowRecord> flows_;
  FlowCompletionHandler* completion_ = nullptr;
};

}  // namespace syncsim::net
