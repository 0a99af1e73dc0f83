#include "sim/net/send_queue.hpp"

#include "sim/core/check.hpp"

namespace syncsim::net {

uint32_t SendQueueTable::open(NodeId src, NodeId dst, uint8_t priority, uint32_t queue_pair) {
  const Key key{(static_cast<uint64_t>(src) << 32) | dst, queue_pair, priority};
  const auto [it, added] = index_.try_emplace(key, static_cast<uint32_t>(queues_.size()));
  if (added) queues_.emplace_back();
  return it->second;
}

bool SendQueueTable::post(uint32_t queue, FlowId id, uint64_t packets, FlowTable& flows) {
  SendQueue& q = queues_[queue];
  FlowRecord& f = flows[id];
  f.send_queue = queue;
  f.first_psn = q.next_psn;
  q.next_psn = static_cast<uint32_t>((q.next_psn + packets) & kPsnMask);
  if (q.head == kNoFlow) {
    q.head = q.tail = id;
    return true;
  }
  flows[q.tail].queue_next = id;
  q.tail = id;
  f.queued = true;
  return false;
}

FlowId SendQueueTable::advance(FlowId id, FlowTable& flows) {
  FlowRecord& f = flows[id];
  SendQueue& q = queues_[f.send_queue];
  SIM_CHECK(q.head == id, "only the head of a send queue sends new packets");
  q.head = f.queue_next;
  f.queue_next = kNoFlow;
  if (q.head == kNoFlow) {
    q.tail = kNoFlow;
    return kNoFlow;
  }
  flows[q.head].queued = false;
  return q.head;
}

}  // namespace syncsim::net
