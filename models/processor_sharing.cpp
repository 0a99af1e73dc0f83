#include "models/processor_sharing.hpp"

#include <algorithm>
#include <utility>

namespace syncsim::models {

void ProcessorSharing::add(Time work, std::function<void()> done) {
  advance();
  jobs_.push_back(Job{std::max<int64_t>(0, work.picoseconds()), arrivals_++, std::move(done)});
  schedule_next();
}

void ProcessorSharing::advance() {
  const Time now = queue_.now();
  if (!jobs_.empty() && now > last_change_) {
    // Integer picoseconds: each job loses floor(elapsed / n), deterministic and at most n - 1 ps
    // short per change.
    const int64_t share = (now - last_change_).picoseconds() / static_cast<int64_t>(jobs_.size());
    for (Job& j : jobs_) j.remaining_ps = std::max<int64_t>(0, j.remaining_ps - share);
  }
  last_change_ = now;
}

void ProcessorSharing::schedule_next() {
  ++generation_;
  if (jobs_.empty()) return;
  int64_t least = jobs_.front().remaining_ps;
  for (const Job& j : jobs_) least = std::min(least, j.remaining_ps);
  const Time at = queue_.now() + Time::ps(least * static_cast<int64_t>(jobs_.size()));
  const uint64_t generation = generation_;
  queue_.schedule_fn(at, [this, generation] { complete(generation); });
}

void ProcessorSharing::complete(uint64_t generation) {
  if (generation != generation_) return;  // a later arrival or completion rescheduled it
  advance();
  // Every job with no work left finishes now, in arrival order.
  std::vector<Job> finished;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->remaining_ps <= 0) {
      finished.push_back(std::move(*it));
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(finished.begin(), finished.end(),
            [](const Job& a, const Job& b) { return a.order < b.order; });
  schedule_next();
  for (Job& j : finished) j.done();
}

}  // namespace syncsim::models
