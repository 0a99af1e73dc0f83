#include "models/compute_slowdown.hpp"

#include <algorithm>
#include <cmath>

namespace syncsim::models {

namespace {

// The product of the rank's slowdowns in force at `t`, and when that next changes (Time::max()
// when never).
double factor_at(const std::vector<ComputeSlowdown>& slowdowns, uint32_t rank, Time t,
                 Time& next_change) {
  double factor = 1.0;
  next_change = Time::max();
  for (const ComputeSlowdown& s : slowdowns) {
    if (s.rank != rank) continue;
    if (s.at > t) next_change = std::min(next_change, s.at);
    if (s.at <= t && t < s.until) {
      factor *= s.factor;
      next_change = std::min(next_change, s.until);
    }
  }
  return factor;
}

}  // namespace

Time compute_finish(const std::vector<ComputeSlowdown>& slowdowns, uint32_t rank, Time start,
                    Time work) {
  Time t = start;
  double left_ps = static_cast<double>(work.picoseconds());  // unslowed work still to do
  while (left_ps > 0) {
    Time next = Time::max();
    const double factor = factor_at(slowdowns, rank, t, next);
    const double needed_ps = left_ps * factor;
    if (next == Time::max() || static_cast<double>((next - t).picoseconds()) >= needed_ps) {
      return t + Time::ps(std::llround(needed_ps));
    }
    left_ps -= static_cast<double>((next - t).picoseconds()) / factor;
    t = next;
  }
  return t;
}

}  // namespace syncsim::models
