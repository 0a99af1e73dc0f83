#include "models/group_collectives.hpp"

#include <iterator>
#include <utility>

#include "sim/core/simulation.hpp"

namespace syncsim::models {

void GroupCollectives::run(const CollectivePlan& plan, const CollectiveRunOptions& options,
                           const std::vector<std::vector<uint32_t>>& groups,
                           uint32_t first_communicator, std::function<void()> done) {
  running_.push_back(std::make_unique<Job>());
  Job* job = running_.back().get();
  job->self = std::prev(running_.end());
  job->left = groups.size();
  job->done = std::move(done);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    CollectiveRunOptions o = options;
    o.communicator = (first_communicator + static_cast<uint32_t>(g)) % 65536;
    job->runners.push_back(std::make_unique<CollectiveRunner>(backend_, plan, groups[g], o));
  }
  for (auto& runner : job->runners) {
    runner->start([this, job](const CollectiveResult&) {
      if (--job->left > 0) return;
      retired_.splice(retired_.end(), running_, job->self);
      if (!retire_scheduled_) {
        retire_scheduled_ = true;
        Simulation& sim = backend_.simulation();
        sim.queue().schedule_fn(sim.now(), [this] {
          retired_.clear();
          retire_scheduled_ = false;
        });
      }
      auto then = std::move(job->done);
      then();
    });
  }
}

}  // namespace syncsim::models
