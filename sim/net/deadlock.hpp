#pragma once
// PFC deadlock detection. A deadlock is a cycle of switch egress queues of
// one priority, each paused by the next switch and holding packets that entered through the
// previous queue's link, so no queue of the cycle can ever drain: a wait-for cycle. The detector
// runs only while PFC pauses exist: a PAUSE that stops a switch egress queue makes sure one check
// is pending `detection_time` later; a check that finds a cycle whose queues have all been paused
// continuously for `detection_time` records it and stops the event queue (the run ends and reports
// it instead of idling forever); otherwise, while paused queues remain, it checks again later.
//
// In a windowed run (partition_windows.hpp) each partition notes its pauses and resumes in a tally
// of its own; after each window the detector adds them up and, where a window paused a queue and no
// check is pending, schedules one `detection_time` after that window's first pause (or cancels the
// pending one when no queue is paused any more). Its checks are events of the simulation's queue,
// so they run between windows, with every partition at the check's time.
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/units.hpp"
#include "sim/net/net_context.hpp"
#include "sim/net/partition_windows.hpp"
#include "sim/net/routing.hpp"

namespace syncsim::net {

class Switch;

struct DeadlockReport {
  bool detected = false;
  uint8_t priority = 0;
  Time formed_at = Time::zero();  // when the last queue of the cycle was paused: the cycle closed
  Time detected_at = Time::zero();
  std::vector<PortId> ports{};  // the cycle in wait-for order: each waits on the next
};

// One partition's pauses and resumes during a window.
class PartitionPauseTally final : public PauseListener {
 public:
  explicit PartitionPauseTally(const NetContext& ctx) : ctx_(ctx) {}
  void on_pause() override {
    ++net_paused;
    if (first_pause_ps == INT64_MAX) first_pause_ps = ctx_.now().picoseconds();
  }
  void on_resume() override { --net_paused; }
  int64_t net_paused = 0;              // pauses less resumes
  int64_t first_pause_ps = INT64_MAX;  // INT64_MAX: no pause

 private:
  const NetContext& ctx_;
};

class DeadlockDetector final : public EventTarget, public PauseListener, public WindowListener {
 public:
  // `switches`: by NodeId, null for NICs. `priorities`: the classes to look for cycles in.
  DeadlockDetector(const NetContext& ctx, const std::vector<Switch*>& switches, uint32_t priorities,
                   Time detection_time)
      : ctx_(ctx), switches_(switches), priorities_(priorities), detection_(detection_time) {}
  // A switch egress queue was just paused / resumed. When none is paused any more the pending check
  // is cancelled, so a finished run's last event (and time) is the same as without detection.
  void on_pause() override;
  void on_resume() override;
  void on_event(uint32_t kind, uint64_t arg) override;
  // A windowed run: the listener for the partition of `ctx`, and the window's tallies taken in.
  PauseListener* partition_tally(const NetContext& ctx) { return &tallies_.emplace_back(ctx); }
  // ...and the context of each node's partition, by NodeId, whose pool holds its queued packets.
  void set_node_contexts(const std::vector<const NetContext*>* by_node) { node_ctx_ = by_node; }
  void after_window() override;
  const DeadlockReport& report() const { return report_; }
  // Looks for a wait-for cycle among queues paused since at least `now - detection_time` (exposed
  // for tests).
  bool find_cycle(Time now, DeadlockReport& out);

 private:
  const NetContext& ctx_;
  const std::vector<const NetContext*>* node_ctx_ = nullptr;
  const std::vector<Switch*>& switches_;
  uint32_t priorities_;
  Time detection_;
  bool pending_ = false;
  CancelToken token_;
  int64_t paused_queues_ = 0;
  DeadlockReport report_;
  std::deque<PartitionPauseTally> tallies_;  // a deque: the partitions' contexts point into it
  // Scratch for find_cycle (reused: no allocation per check once warmed up).
  std::vector<PortId> nodes_;
  std::vector<int32_t> node_of_port_;
  std::vector<uint8_t> color_;
  std::vector<int32_t> parent_;
};

}  // namespace syncsim::net
