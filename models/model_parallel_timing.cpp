// How the event-driven model-parallel step runs one collective over a set of groups: live on the
// scenario's fabric, or (StepConfig::model_parallel_idle_fabric_timing) with its duration taken
// from the idle fabric and shared among the collectives that overlap on the same groups.
//
// The idle-fabric rule, and why it is the representative-rank rule at scale: a call's duration is
// timed once per (groups, op, algorithm, size) by IdleCollectiveTimer with every group of the call
// at once, which at analytic fidelity simulates one group per symmetry class (the 128
// data-parallel groups of a 16k-GPU FSDP x TP x PP layout are one pod's group) and extrapolates
// it to the symmetric ones. Collectives over the same groups (FSDP's all-gathers and
// reduce-scatters, a stage's buckets) share one ProcessorSharing server: two that overlap each
// progress at half speed, as two max-min fair flows over the same paths do. Collectives over
// different groups do not slow each other (an expert all-to-all beside a bucket all-reduce on the
// same NICs, a pipeline send beside a data-parallel collective); live runs see that contention.
// The error against the live run is measured in tests/models/test_model_parallel_step.cpp and
// docs/training-step.md.
#include <utility>

#include "models/model_parallel_engine.hpp"

namespace syncsim::models {

void ModelParallelStepEngine::run_groups(const IdleCollectiveTimer::Collective& c,
                                         const Groups& groups, uint32_t first_communicator,
                                         std::function<void()> done) {
  if (!config_.model_parallel_idle_fabric_timing) {
    groups_.run(c.plan, c.run, groups, first_communicator, std::move(done));
    return;
  }
  auto [server, added] = server_of_group_.try_emplace(groups.front(), servers_.size());
  if (added) servers_.push_back(std::make_unique<ProcessorSharing>(queue()));
  const TimedCall call{server->second, c.plan.op, c.plan.algo, c.plan.bytes};
  auto it = call_durations_.find(call);
  if (it == call_durations_.end()) {
    it =
        call_durations_.emplace(call, timer_->time(call.op, call.algo, groups, call.bytes).duration)
            .first;
  }
  servers_[server->second]->add(it->second, std::move(done));
}

}  // namespace syncsim::models
