#pragma once
// What one partition of a windowed run (partition_windows.hpp) sends another during a window:
// packets that crossed a link between them, and events that a mechanism posts to the other side
// (go-back-N's off-wire acknowledgement of a lossless queue pair, a lost packet's notice to its
// receiver). Both are taken in by the receiving partition when its next window starts, so no
// thread ever writes another partition's queue, pool or state. Double-buffered: the sender fills
// one buffer during a window while the receiver takes in the other, filled in the window before.
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
  uint32_t filling = 0;
};

}  // namespace syncsim::net
