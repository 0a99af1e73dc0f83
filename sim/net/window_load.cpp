#include "sim/net/window_load.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace syncsim::net {

WindowLoad::WindowLoad(uint32_t partitions, uint64_t min_events_per_thread)
    : partitions_(partitions), min_events_per_thread_(min_events_per_thread) {
  for (uint32_t t = 2; t < partitions; t *= 2) loads_.push_back(ThreadLoad{t, 0});
  if (partitions >= 2) loads_.push_back(ThreadLoad{partitions, 0});
  per_thread_.resize(partitions);
}

void WindowLoad::add_window(std::span<const uint64_t> events_by_partition) {
  SIM_CHECK(events_by_partition.size() == partitions_,
            "a window's events for another partition count");
  uint64_t window = 0;
  for (const uint64_t e : events_by_partition) window += e;
  events_ += window;
  for (ThreadLoad& load : loads_) {
    const uint32_t threads = threads_for_window(load.threads);
    if (threads == 1) {
      load.busiest_thread_events += window;
      continue;
    }
    std::fill_n(per_thread_.begin(), threads, uint64_t{0});
    for (uint32_t i = 0; i < partitions_; ++i) per_thread_[i % threads] += events_by_partition[i];
    load.busiest_thread_events +=
        *std::max_element(per_thread_.begin(), per_thread_.begin() + threads);
  }
  recent_events_ = (3 * recent_events_ + window) / 4;
}

}  // namespace syncsim::net
