#pragma once
// What one partition of a windowed run (partition_windows.hpp) sends another during a window:
// packets that crossed a link between them, and events that a mechanism posts to the other side
// (go-back-N's off-wire acknowledgement of a lossless queue pair, a lost packet's notice to its
// receiver). Both are taken in by the receiving partition when its next window starts, so no
// thread ever writes another partition's queue, pool or state. Double-buffered: the sender fills
// one buffer during a window while the receiver takes in the other, filled in the window before.
#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/net/packet.hpp"

namespace syncsim::net {

class Link;

// A packet on its way into another partition: a copy, since each partition has a packet pool of
// its own. It left at `sent_ps` and arrives at `arrival_ps` at the far end `link` (a Link of the
// same cable built with the receiving partition's context): the link's delay later, or more where
// the link's impairment adds jitter.
struct RemoteArrival {
  int64_t arrival_ps;
  int64_t sent_ps;
  Link* link;
  Packet packet;
};

// target->on_event(kind, arg) to run at `at_ps` in the receiving partition, posted at `sent_ps`.
struct PostedEvent {
  int64_t at_ps;
  int64_t sent_ps;
  EventTarget* target;
  uint64_t arg;
  uint32_t kind;
};

// What a window's end reads of all the outboxes, kept as posts are made so that it need not walk
// every (sender, receiver) pair: P^2 of them, cache misses on every window even where nothing was
// posted (a 64-partition step spent most of its time there). Per buffer: the sender's earliest
// time posted into any of its outboxes (INT64_MAX: none), and the receiver's set of senders that
// posted into it (bit s: partition s; at most 64 partitions, fabric_partition.hpp). Senders set
// their bit from their own threads, hence the atomic; the receiver takes the set between windows
// or at its next window's start, from the buffer nobody fills then.
struct OutboxSummary {
  std::array<int64_t, 2> sender_earliest_ps{INT64_MAX, INT64_MAX};
  // On a cache line of its own: the other partitions' threads write it, this one's the line above.
  alignas(64) std::array<std::atomic<uint64_t>, 2> posted_by{};
};

struct RemoteOutbox {
  std::array<std::vector<RemoteArrival>, 2> buffers;
  std::array<std::vector<PostedEvent>, 2> events;
  // Wired by PartitionWindows: the buffer being filled (one for the whole run), the sending
  // partition's summary, the receiving partition's, and the sender's bit in it.
  const uint32_t* filling = nullptr;
  OutboxSummary* sender = nullptr;
  OutboxSummary* receiver = nullptr;
  uint64_t sender_bit = 0;

  void post(const RemoteArrival& arrival) {
    const uint32_t f = *filling;
    note(f, arrival.arrival_ps);
    buffers[f].push_back(arrival);
  }
  void post(const PostedEvent& event) {
    const uint32_t f = *filling;
    note(f, event.at_ps);
    events[f].push_back(event);
  }
  bool empty(uint32_t buffer) const { return buffers[buffer].empty() && events[buffer].empty(); }
  // After the receiver has taken in buffer `buffer`.
  void clear(uint32_t buffer) {
    buffers[buffer].clear();
    events[buffer].clear();
  }

 private:
  void note(uint32_t f, int64_t at_ps) {
    if (empty(f)) receiver->posted_by[f].fetch_or(sender_bit, std::memory_order_relaxed);
    sender->sender_earliest_ps[f] = std::min(sender->sender_earliest_ps[f], at_ps);
  }
};

}  // namespace syncsim::net
