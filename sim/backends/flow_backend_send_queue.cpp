// The flow backend's send queues: a persistent queue pair's transfers drain in order, one at a
// time, as the packet model's send queue sends them (sim/net/send_queue.hpp); flow_backend.hpp says
// why.
#include "sim/backends/flow_backend.hpp"

#include <algorithm>
#include <span>

namespace syncsim {

void FlowBackend::begin(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) {
  const QueuePair qp = queue_pair(id, src, dst, r);  // its number: the ECMP hash's UDP source port
  if (!qp.persistent) {
    launch(id, src, dst, r.size, qp.number, kNone);
    return;
  }
  // Looked up once per transfer; persistent numbers are unique over NICs and priorities.
  const uint32_t qp_index = persistent_index(qp.number);
  if (qp_index >= send_queue_of_.size()) {
    send_queue_of_.resize(std::max<std::size_t>(qp_index + 1, 2 * send_queue_of_.size()), kNone);
  }
  uint32_t& slot = send_queue_of_[qp_index];
  if (slot == kNone) {
    slot = static_cast<uint32_t>(send_queues_.size());
    send_queues_.emplace_back();
  }
  const uint32_t index = slot;
  SendQueue& q = send_queues_[index];
  if (q.draining == 0) {
    launch(id, src, dst, r.size, qp.number, index);
    return;
  }
  uint32_t w = 0;
  if (free_waiting_.empty()) {
    w = static_cast<uint32_t>(waiting_.size());
    waiting_.emplace_back();
  } else {
    w = free_waiting_.back();
    free_waiting_.pop_back();
  }
  waiting_[w] = Waiting{id, src, dst, r.size, qp.number, kNone};
  if (q.tail == kNone) {
    q.head = w;
  } else {
    waiting_[q.tail].next = w;
  }
  q.tail = w;
}

void FlowBackend::start_released() {
  for (const uint32_t index : released_) {
    SendQueue& q = send_queues_[index];
    if (q.head == kNone) continue;
    const uint32_t w = q.head;
    const Waiting next = waiting_[w];
    q.head = next.next;
    if (q.head == kNone) q.tail = kNone;
    free_waiting_.push_back(w);
    launch(next.transfer, next.src, next.dst, next.size, next.qp, index);
  }
  released_.clear();
}

bool FlowBackend::take_over(uint32_t slot) {
  Flow& f = flows_[slot];
  if (mode_ != Recompute::Local || f.send_queue == kNone || f.group != kNoGroup || f.stalled ||
      !port_dead_.empty()) {
    return false;
  }
  SendQueue& q = send_queues_[f.send_queue];
  if (q.draining != 1 || q.head == kNone) return false;
  const Waiting& next = waiting_[q.head];
  if (next.size.count() <= 0) return false;
  // The route it would take: its queue pair's kept route, which is this flow's unless routing
  // changed since (then it starts as a new flow).
  const std::span<const net::PortId> kept = qp_routes_.find(persistent_index(next.qp), path_epoch_);
  const uint16_t hops = route_hops_[slot];
  if (kept.size() != hops) return false;
  for (uint32_t h = 0; h < hops; ++h) {
    if (kept[h] != route_port(slot, h)) return false;
  }
  // Same links, same competitors: the max-min allocation is the one in force, so the flow keeps
  // its slot, its place on every link's list, its rate and its bottleneck, and nothing is refilled.
  const uint32_t w = q.head;
  const Waiting taken = next;
  q.head = taken.next;
  if (q.head == kNone) q.tail = kNone;
  free_waiting_.push_back(w);
  const Bytes size = taken.size;
  if (q.timed_bytes != size.count()) {
    q.timing = path_timing(kept.data(), hops, size);
    q.timed_bytes = size.count();
  }
  add_route_bytes(kept.data(), hops, size);
  f.transfer = taken.transfer;
  f.bytes = size.count();
  f.remaining_bytes = static_cast<double>(size.count());
  f.since = simulation().now();
  f.tail_latency = q.timing.tail_latency;
  project_finish(slot, simulation().now());  // at the rate it keeps
  counters_.packet_hops += q.timing.packet_hops;
  counters_.bytes_injected += size.count();
  ++taken_over_;
  return true;
}

}  // namespace syncsim
