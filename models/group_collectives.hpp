#pragma once
// One collective run by every group of a parallel kind at once on a shared backend (every TP
// group of a stage, every data-parallel group, every pipeline GPU pair), one CollectiveRunner per
// group, each group on its own communicator; a callback once all of them have finished. The
// runners are retired in an event after the last one finishes (it cannot be destroyed inside its
// own completion).
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <vector>

#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "sim/backends/transfer_backend.hpp"

namespace syncsim::models {

class GroupCollectives {
 public:
  explicit GroupCollectives(TransferBackend& backend) : backend_(backend) {}
  GroupCollectives(const GroupCollectives&) = delete;
  GroupCollectives& operator=(const GroupCollectives&) = delete;

  // Runs `plan` with `options` on every group of `groups` (GPU lists) at once, group g on
  // communicator first_communicator + g (mod 2^16); `done` runs when all have finished. The plan
  // must outlive the run.
  void run(const CollectivePlan& plan, const CollectiveRunOptions& options,
           const std::vector<std::vector<uint32_t>>& groups, uint32_t first_communicator,
           std::function<void()> done);

 private:
  struct Job {
    std::vector<std::unique_ptr<CollectiveRunner>> runners;
    std::size_t left = 0;
    std::function<void()> done;
    std::list<std::unique_ptr<Job>>::iterator self;
  };
  TransferBackend& backend_;
  std::list<std::unique_ptr<Job>> running_;
  std::list<std::unique_ptr<Job>> retired_;
  bool retire_scheduled_ = false;
};

}  // namespace syncsim::models
