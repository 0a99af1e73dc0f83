#pragma once
// The gradient buckets the model-parallel closed form (models/closed_form_data_parallel.cpp) times
// on an idle fabric, as run/estimate.cpp counts them.
#include <cstdint>
#include <map>
#include <vector>

#include "models/step_sim.hpp"

namespace syncsim::app {

struct TimedBucket {
  int64_t bytes = 0;
  double group_ranks = 0;  // DP x CP, or the expert-data-parallel group for expert gradients
  double groups = 0;       // of the pipeline stage, all timed at once
  bool first = true;       // the first call with this plan (the timer keeps one per size)
};

struct StageBuckets {
  // One entry per timing: each stage's own distinct buckets (its groups are other GPUs; only the
  // analytic symmetry rule, `symmetric`, times a translated group once: then their union).
  std::vector<TimedBucket> timed;
  std::map<int64_t, int> count_by_size;  // every stage's buckets, by size
};

StageBuckets stage_buckets(const models::StepConfig& c, double data_parallel, bool symmetric);

}  // namespace syncsim::app
