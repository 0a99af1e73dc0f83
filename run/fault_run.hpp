#pragma once
// A scenario's `faults:` on one run (docs/faults.md): the names resolved against the fabric, the
// network faults scheduled on the backend, the stragglers handed to the step, and per fault what
// it cost, measured over its window (from its time to the next fault's, the last to the run's end).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/step_sim.hpp"
#include "scenario/scenario.hpp"
#include "sim/backends/transfer_backend.hpp"
#include "sim/net/fault.hpp"

namespace syncsim::app {

struct FaultOutcome {
  std::string kind{};    // as written: link_down, straggler, ...
  std::string target{};  // the link, switch or NIC as named; "gpu R" for a straggler
  double at_s = 0;
  double until_s = -1;  // when it ends (duration), -1: it lasts
  double fraction = 1;  // link_degraded
  double slowdown = 1;  // straggler
  // Over the window: data bytes dropped (any reason), packets lost on dead links, flows whose
  // route changed at a convergence and flows left without a route, bytes resent, data of lossless
  // classes lost on dead links.
  int64_t bytes_lost = 0;
  uint64_t packets_lost_link_down = 0;
  uint64_t flows_rerouted = 0;
  uint64_t flows_unroutable = 0;
  int64_t retransmitted_bytes = 0;
  int64_t lossless_bytes_lost = 0;
  // DDP steps: bucket all-reduce time over its idle-fabric time, for the buckets finished before
  // the fault and those running in its window (0: none).
  double bucket_slowdown_before = 0;
  double bucket_slowdown_during = 0;
  uint32_t buckets_during = 0;
  // `jobs:` what it cost each job: the mean time of its steps that ended before the fault and of
  // those running in the fault's window (0: none).
  struct JobCost {
    std::string job{};
    double step_before_s = 0;
    double step_during_s = 0;
    uint32_t steps_during = 0;
  };
  std::vector<JobCost> jobs{};
};

class FaultRun {
 public:
  // Resolves the faults (throws ScenarioError for a name the fabric lacks). Analytic fidelity: a
  // warning, and link_degraded changes `spec` (before the backend is built) as a static capacity.
  FaultRun(const Scenario& scenario, net::NetworkSpec& spec, std::vector<std::string>& warnings);
  bool empty() const { return rows_.empty(); }
  // Schedules the network faults and the measurements on the backend's simulation (at time 0).
  void start(TransferBackend& backend);
  // The stragglers, as compute slowdowns of the ranks on their GPUs; with network faults the
  // buckets run live (an idle-fabric timing cannot see a fault).
  // `warn_unplaced`: warn about a straggler GPU no rank of `step` runs on (one of several jobs
  // need not hold it).
  void apply_to_step(models::StepConfig& step, std::vector<std::string>& warnings,
                     bool warn_unplaced = true) const;
  // What each fault cost; call after the run.
  std::vector<FaultOutcome> finish(const TransferBackend& backend,
                                   const std::optional<models::StepResult>& step,
                                   std::vector<std::string>& warnings) const;

 private:
  struct Row {
    FaultOutcome out;
    Time at;
    std::size_t entry;  // index in scenario.faults
  };
  const Scenario& scenario_;
  std::vector<Row> rows_;  // by time
  std::vector<net::NetFault> network_;
  std::vector<models::ComputeSlowdown> by_gpu_;  // rank = the GPU until apply_to_step maps it
  std::vector<std::optional<net::NetworkCounters>> snapshots_;  // at each row's time, once taken
  bool modelled_ = true;                                        // false on the analytic backend
};

}  // namespace syncsim::app
