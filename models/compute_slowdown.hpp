#pragma once
// Timed stragglers (a scenario's `straggler` faults, docs/faults.md): from `at` until `until` a
// rank's compute takes `factor` times as long. A compute task that straddles the change runs its
// work at the speed of each moment, so a rank slowed halfway through its backward finishes it
// (1 + factor) / 2 times as late. Several slowdowns of one rank that overlap multiply.
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim::models {

struct ComputeSlowdown {
  uint32_t rank = 0;
  Time at = Time::zero();
  double factor = 1.0;  // >= 1
  Time until = Time::max();
};

// When `work` of rank `rank`'s compute (its duration unslowed) started at `start` ends.
Time compute_finish(const std::vector<ComputeSlowdown>& slowdowns, uint32_t rank, Time start,
                    Time work);

}  // namespace syncsim::models
