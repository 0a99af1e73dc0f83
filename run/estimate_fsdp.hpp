#pragma once
// Plain FSDP's collectives as run/estimate.cpp counts them: the idle-fabric timer's plans
// (models/fsdp.cpp) and, without reused timings, every gather and scatter of the step run live.
#include <functional>
#include <utility>
#include <vector>

#include "models/collective_plan.hpp"
#include "models/step_sim.hpp"

namespace syncsim::app {

// The all-reduce-shaped plan of `bytes` over `group` ranks with `algo`, cut with the chunk and
// slicing of the protocol NCCL picks for `op` at that size.
using ShapedPlan = std::function<models::PlanSizeEstimate(
    models::CollectiveOp op, models::CollectiveAlgo algo, double group, double bytes)>;

struct PlainFsdpCount {
  double shard = 0;               // ranks of a shard group
  double timed_transfers = 0;     // the timer's plans, each distinct gather and scatter once
  double live_transfers = 0;      // `reuse_bucket_timings: false`: every one of the step, live
  double kept_plan_steps = 0;     // the timer keeps its plans
  double largest_idle_bytes = 0;  // the largest idle simulation's live state
  double bytes_moved_per_gpu = 0;
  // The timer's simulations, (transfers, live bytes) each: a gather and a scatter a size.
  std::vector<std::pair<double, double>> idle_runs;
};

// `c` on `n` data-parallel ranks; `idle_bytes_per_transfer`: what an idle simulation keeps of a
// transfer while it runs.
PlainFsdpCount count_plain_fsdp(const models::StepConfig& c, double n, bool reuse,
                                const ShapedPlan& shaped_plan, double idle_bytes_per_transfer);

}  // namespace syncsim::app
