#pragma once
// The send queue of a persistent queue pair at packet fidelity (Network::start_flow,
// `persistent_qp`): an RC queue pair works through its send queue's work requests in order, so the
// packets of its message k+1 leave after the last packet of message k and its packet sequence
// numbers (PSNs) run on across the messages (IBTA vol. 1, 9.7.1; the ConnectX send queue is FIFO).
// Only the oldest message of a queue pair that has not sent all its packets once (the head) is
// listed at its source NIC; the next one is listed as the head sends its last new packet.
//
// Approximation: a retransmission of a message after its successor was listed (the tail of
// message k lost and resent by go-back-N or RC recovery) interleaves with the successor's packets;
// a real go-back-N queue pair would resend the successor's packets sent since as well. It costs
// the successor at most the packets it sent in one retransmission timeout or NAK round trip, and
// only after a loss: on lossless classes that is the rare headroom or watchdog drop. TCP (one byte
// stream per connection) resends only the hole, as here.
//
// What PSNs are for: each message's reliable-transport state (reliable_transport.hpp) numbers its
// packets from 0 (an offset into the message); the wire PSN of offset k is (first_psn + k) mod
// 2^24, first_psn being where the queue pair's counter stood when the message was posted. As the
// messages of a queue pair leave in order and each message's state compares only its own offsets,
// the simulator's behaviour does not depend on the base: first_psn is kept for traces and to show
// the counter running on and wrapping as the hardware's does.
//
// The queue is a list threaded through the flow records (FlowRecord::queue_next): posting and
// advancing allocate nothing. The table is looked up once per message start, never per packet.
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "sim/net/flow_table.hpp"

namespace syncsim::net {

// PSNs are 24 bits on the wire and wrap (IBTA vol. 1, 9.7.1, "PSN ... 24 bits").
inline constexpr uint32_t kPsnMask = (1U << 24) - 1;

struct SendQueue {
  FlowId head = kNoFlow;  // the message that may send new packets; kNoFlow when all have
  FlowId tail = kNoFlow;  // the newest message posted and not yet past its last new packet
  uint32_t next_psn = 0;  // PSN of the next message's first packet
};

class SendQueueTable {
 public:
  // The send queue of the persistent queue pair `queue_pair` from NIC `src` to NIC `dst` at
  // `priority` (made on its first message).
  uint32_t open(NodeId src, NodeId dst, uint8_t priority, uint32_t queue_pair);
  // Posts message `id` of `packets` packets on queue `queue`: sets its first PSN and returns
  // whether it is the head (may send now); otherwise it waits (FlowRecord::queued).
  bool post(uint32_t queue, FlowId id, uint64_t packets, FlowTable& flows);
  // The head `id` has sent its last new packet: the next message becomes the head and is returned
  // (no longer queued), or kNoFlow.
  FlowId advance(FlowId id, FlowTable& flows);
  const SendQueue& operator[](uint32_t queue) const { return queues_[queue]; }
  std::size_t size() const { return queues_.size(); }

 private:
  struct Key {
    uint64_t ends = 0;  // src << 32 | dst
    uint32_t queue_pair = 0;
    uint8_t priority = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<uint64_t>{}(
          k.ends ^
          ((static_cast<uint64_t>(k.queue_pair) << 8 | k.priority) * 0x9E3779B97F4A7C15ULL));
    }
  };
  std::vector<SendQueue> queues_;
  std::unordered_map<Key, uint32_t, KeyHash> index_;
};

}  // namespace syncsim::net
