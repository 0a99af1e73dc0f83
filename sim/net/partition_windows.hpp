#pragma once
// Windowed execution of a partitioned packet network: a conservative parallel discrete-event run
// (Chandy-Misra-Bryant style, with synchronous windows as in YAWNS). The fabric is cut into
// partitions (fabric_partition.hpp), each with its own event queue, packet pool and counters. No
// event in one partition can touch another sooner than the lookahead L, the smallest delay of a
// link between partitions, so the partitions run the window [s, s + L) side by side, and only at
// its end do the packets that crossed between them enter their receivers' queues.
//
// The order of simultaneous events, the rule that makes every result independent of the thread
// count and keeps it close to a one-queue run's: one queue runs the events of one instant in the
// order they were scheduled. Inside a partition that holds as it is. A packet or posted event
// (remote_outbox.hpp) from another partition is taken in after the window in which it was sent,
// and scheduled as of the time it was sent (EventQueue::schedule_as_of; a packet arriving behind
// another on its link, as of that one's arrival): among the receiver's events of its instant it
// runs after those the receiver scheduled at or before that time and before those it scheduled
// later, as in one queue. Of events scheduled at the very same picosecond the receiver's own run
// first, then the others' in the order of the event slots the receiver gave them (taken in by
// sending partition in index order, from one sender in the order sent). Partitions are fixed by
// the fabric, so that order is the same on any number of threads, and differs from a one-queue
// run's only between events scheduled at the same picosecond in two partitions. One barrier per
// window: each partition takes in what was sent to it in the window before as it starts the next
// (or, before something starts a flow between windows, all do at once).
//
// Everything outside the partitions (the traffic's start times, completion callbacks, samplers)
// stays on the simulation's own queue. A window never runs past the next such event (unless the
// network sets its flows up ahead, Network::starts_ahead: then none acts at its own time), and
// every partition's clock is at that event's time when it runs, so starting a flow from it is
// starting it "now" everywhere. A flow completed inside a window is reported on the simulation's
// queue at its finish time once the window is over; a flow its callback starts must lie past that
// window (else it would be in the partitions' past): windows are no longer than the least delay
// between a completion and what it starts (NetworkSpec::Execution::reaction; a collective's step
// latency, none for traffic known in advance), and a flow started sooner stops the run. Such a
// caller may hand its flows over ahead instead (Network::start_flow's start_at: set up now, started
// inside the source's partition then), so that windows are not cut short at every start.
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/worker_pool.hpp"
#include "sim/net/flow_table.hpp"
#include "sim/net/link.hpp"
#include "sim/net/network_counters.hpp"
#include "sim/net/packet.hpp"
#include "sim/net/window_load.hpp"

namespace syncsim::net {

// One part of the fabric: its clock and events, packet pool and counters, the packets it sent into
// each other partition during the window, and the flows completed in it.
struct Partition {
  explicit Partition(uint32_t partitions) : outbox(partitions) {}
  EventQueue queue;
  PacketPool pool;
  NetworkCounters counters;
  std::vector<RemoteOutbox> outbox;  // by receiving partition
  OutboxSummary posts;               // what it posted, and who posted to it (remote_outbox.hpp)
  std::deque<Link> far_ends;         // the receiving ends of links from other partitions
  std::vector<DeferredCompletion> completions;
  int64_t last_event_ps = 0;   // the latest event it has run
  uint64_t window_events = 0;  // the events it ran in the last window
  // After a window: its next event and the earliest arrival it posted (INT64_MAX: none).
  int64_t next_event_ps = INT64_MAX;
  int64_t next_posted_ps = INT64_MAX;
};

// Told after each window, on the simulation's thread, while no partition runs: what acts on the
// whole fabric (the PFC deadlock detector) takes in what the partitions noted during the window.
class WindowListener {
 public:
  virtual ~WindowListener() = default;
  virtual void after_window() = 0;
};

class PartitionWindows final : public EventTarget {
 public:
  PartitionWindows(EventQueue& global, std::vector<std::unique_ptr<Partition>>& partitions,
                   Time lookahead, const FlowTable& flows, unsigned threads,
                   uint64_t min_window_events_per_thread);
  // Before something is scheduled in a partition from the simulation's queue (a flow starts):
  // every partition's clock moves to the global clock (they have nothing pending before it).
  void bring_to_now();
  // After that: a window runs from now.
  void wake();
  // Something was scheduled in a partition at `at_ps` from the simulation's queue (a flow set up
  // ahead, Network::start_flow): a window runs from then at the latest.
  void wake_at(int64_t at_ps) { schedule_window(at_ps); }
  // Whether a window stops at the simulation's next event (the default): off where that queue's
  // events act on the partitions only ahead of time (Network::starts_ahead), so that windows run
  // their whole lookahead.
  void set_bounded_by_global(bool bounded) { bounded_by_global_ = bounded; }
  void on_event(uint32_t kind, uint64_t arg) override;
  void set_window_listener(WindowListener* listener) { listener_ = listener; }
  // Windows end no later than `end_ps` (exclusive) until told otherwise, so that the simulation's
  // run up to end_ps - 1 leaves every partition there and a time series reads them all as of one
  // time (INT64_MAX: no bound). Where windows end changes no result (Link::accept).
  void set_window_limit(int64_t end_ps) { limit_ps_ = end_ps; }

  uint64_t events() const;  // events run inside the partitions
  uint64_t windows() const { return windows_; }
  // Of those, the windows handed to more than one thread (the rest ran on the caller's alone).
  uint64_t threaded_windows() const { return threaded_windows_; }
  unsigned threads() const { return workers_.threads(); }
  // The windows' events by partition, as more threads would share them, and how many threads a
  // window is worth (window_load.hpp).
  const WindowLoad& load() const { return load_; }

 private:
  enum EventKind : uint32_t { kWindow = 0, kCompletion = 1, kClock = 2 };
  void window();
  void run_window(int64_t end_ps);
  void schedule_window(int64_t at_ps);
  // Partition `i` takes in what the others posted to it in the last window that ran.
  void take_in(std::size_t i);
  // Partition `i` takes in the packets in the others' outbox buffer `buffer` for it.
  void accept_posted(std::size_t i, uint32_t buffer);
  bool arrivals_pending() const;

  EventQueue& global_;
  std::vector<std::unique_ptr<Partition>>& parts_;
  int64_t lookahead_ps_;
  const FlowTable& flows_;
  WorkerPool workers_;
  CancelToken window_token_;
  int64_t window_at_ps_ = INT64_MAX;  // the pending window's start, INT64_MAX when none
  int64_t limit_ps_ = INT64_MAX;      // set_window_limit
  bool bounded_by_global_ = true;     // set_bounded_by_global
  uint64_t windows_ = 0;
  uint64_t threaded_windows_ = 0;
  uint32_t filled_ =
      1;  // the outbox buffer the last window filled (none yet: take_in finds 1 empty)
  uint32_t filling_ = 0;  // the outbox buffer posts go to (RemoteOutbox::filling)
  std::vector<DeferredCompletion> due_;
  WindowListener* listener_ = nullptr;
  WindowLoad load_;
  std::vector<uint64_t> window_events_;  // scratch: one window's events by partition
  // When the window that filled each outbox buffer began.
  std::array<int64_t, 2> buffer_window_start_ps_{0, 0};
};

}  // namespace syncsim::net
