#pragma once
// A server shared equally by the jobs on it (egalitarian processor sharing): each of n jobs
// advances at 1/n of the full rate, and a job alone finishes after exactly its work. The
// event-driven model-parallel step's idle-fabric collective timing
// (StepConfig::model_parallel_idle_fabric_timing) runs the collectives over one set of groups on
// one server: their idle-fabric durations are the work, and collectives that overlap (an FSDP
// unit's all-gather beside the previous unit's reduce-scatter) share the groups' links as max-min
// fair flows over the same paths share them.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/units.hpp"

namespace syncsim::models {

class ProcessorSharing {
 public:
  explicit ProcessorSharing(EventQueue& queue) : queue_(queue) {}
  ProcessorSharing(const ProcessorSharing&) = delete;
  ProcessorSharing& operator=(const ProcessorSharing&) = delete;

  // Starts a job of `work` now; `done` runs when it has had that much of the server.
  void add(Time work, std::function<void()> done);

  std::size_t active() const { return jobs_.size(); }

 private:
  struct Job {
    int64_t remaining_ps = 0;  // work left at full rate
    uint64_t order = 0;        // arrival order: ties finish first-come first-served
    std::function<void()> done;
  };
  // Charges the time since the last change to every job (each got 1/n of it).
  void advance();
  // Schedules the next completion; events of earlier schedules are stale (generation_).
  void schedule_next();
  void complete(uint64_t generation);

  EventQueue& queue_;
  std::vector<Job> jobs_;
  Time last_change_ = Time::zero();
  uint64_t generation_ = 0;
  uint64_t arrivals_ = 0;
};

}  // namespace syncsim::models
