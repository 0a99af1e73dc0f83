#pragma once
// What one partition of a windowed run (partition_windows.hpp) sends another during a window:
// packets that crossed a link between them, and events that a mechanism posts to the other side
// (go-back-N's off-wire acknowledgement of a lossless queue pair, a lost packet's notice to its
// receiver). Both are taken in by the receiving partition when its next window starts, so no
// thread ever writes another partition's queue, pool or state. Double-buffered: the sender fills
// one buffer during a window while the receiver takes in the other, filled in the window before.
#include <algorithm>
#include <array>
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

struct RemoteOutbox {
  std::array<std::vector<RemoteArrival>, 2> buffers;
  std::array<std::vector<PostedEvent>, 2> events;
  // Per buffer: the earliest arrival or event time posted to it (INT64_MAX: none), kept as they are
  // posted so that the window's end need not walk the buffers again to find it.
  std::array<int64_t, 2> earliest_ps{INT64_MAX, INT64_MAX};
  uint32_t filling = 0;

  void post(const RemoteArrival& arrival) {
    buffers[filling].push_back(arrival);
    earliest_ps[filling] = std::min(earliest_ps[filling], arrival.arrival_ps);
  }
  void post(const PostedEvent& event) {
    events[filling].push_back(event);
    earliest_ps[filling] = std::min(earliest_ps[filling], event.at_ps);
  }
  // After the receiver has taken in buffer `buffer`.
  void clear(uint32_t buffer) {
    buffers[buffer].clear();
    events[buffer].clear();
    earliest_ps[buffer] = INT64_MAX;
  }
};

}  // namespace syncsim::net
