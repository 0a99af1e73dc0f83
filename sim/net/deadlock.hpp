#pragma once
// PFC deadlock detection. A deadlock is a cycle of switch egress queues of
// one priority, each paused by the next switch and holding packets that entered through the
// previous queue's link, so no queue of the cycle can ever drain: a wait-for cycle. The detector
// runs only while PFC pauses exist: a PAUSE that stops a switch egress queue makes sure one check
// is pending `detection_time` later; a check that finds a cycle whose queues have all been paused
// continuously for `detection_time` records it and stops the event queue (the run ends and reports
// it instead of idling forever); otherwise, while paused queues remain, it checks again later.
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/units.hpp"
#include "sim/net/net_context.hpp"
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

class DeadlockDetector final : public EventTarget, public PauseListener {
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
  const DeadlockReport& report() const { return report_; }
  // Looks for a wait-for cycle among queues paused since at least `now - detection_time` (exposed
  // for tests).
  bool find_cycle(Time now, DeadlockReport& out);

 private:
  const NetContext& ctx_;
  const std::vector<Switch*>& switches_;
  uint32_t priorities_;
  Time detection_;
  bool pending_ = false;
  CancelToken token_;
  int64_t paused_queues_ = 0;
  DeadlockReport report_;
  // Scratch for find_cycle (reused: no allocation per check once warmed up).
  std::vector<PortId> nodes_;
  std::vector<int32_t> node_of_port_;
  std::vector<uint8_t> color_;
  std::vector<int32_t> parent_;
};

}  // namespace syncsim::net
