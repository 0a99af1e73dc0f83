#pragma once
// The load of a windowed packet run's windows (partition_windows.hpp): whether the next window is
// worth handing to the threads, and what more threads than the run used would make of them.
//
// Handing a window to the other threads and waiting for the last of them costs about as much as a
// few hundred events on the 2-vCPU VM (docs/performance.md, "Small windows on fewer threads"), so a
// window runs on no more threads than give each `min_events_per_thread` of the events expected
// (a moving average of the windows before): on the simulation's thread alone below twice that.
// Which thread runs a partition changes no result, so this is free to follow the load.
//
// The profile: for a set of thread counts T, per window the events of the busiest thread, with the
// partitions pinned as the worker pool pins them (thread k of the t the window runs on runs the
// partitions i with i % t == k, sim/core/worker_pool.hpp), summed over the windows. The windows run
// one after another, so on T threads the partitions' part of a run lasts at least that sum of
// events; with the events outside the partitions (the simulation's own queue, run between windows
// on one thread) added, total events / (sum + outside) bounds the speed-up from above. The bound
// takes every event to cost the same and a window's barrier to cost nothing; what a barrier costs
// on a given machine comes on top. The counts are the run's events alone, the same for any thread
// count the run used: a run on one thread tells what 64 would give at most.
#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

namespace syncsim::net {

struct ThreadLoad {
  uint32_t threads = 0;
  uint64_t busiest_thread_events = 0;  // summed over windows
};

class WindowLoad {
 public:
  // Profiles the powers of two from 2 below `partitions`, then `partitions` itself (more threads
  // than partitions leave some idle). `min_events_per_thread` 0: every window on every thread.
  WindowLoad(uint32_t partitions, uint64_t min_events_per_thread);
  // How many of `threads` threads the next window is worth handing to (1: the caller's alone).
  unsigned threads_for_window(unsigned threads) const {
    if (min_events_per_thread_ == 0 || threads <= 1) return std::max(1U, threads);
    const uint64_t worth = recent_events_ / min_events_per_thread_;
    return static_cast<unsigned>(std::clamp<uint64_t>(worth, 1, threads));
  }
  // One window, after it ran: the events each partition ran in it, by partition index.
  void add_window(std::span<const uint64_t> events_by_partition);
  // Per profiled thread count, in increasing order.
  const std::vector<ThreadLoad>& loads() const { return loads_; }
  // Every event of the windows added (the partitions' events).
  uint64_t events() const { return events_; }

 private:
  uint32_t partitions_;
  uint64_t min_events_per_thread_;
  uint64_t recent_events_ = 0;  // a moving average of the windows' events (weight 1/4 to the last)
  std::vector<ThreadLoad> loads_;
  std::vector<uint64_t> per_thread_;  // scratch: one window's events by thread
  uint64_t events_ = 0;
};

}  // namespace syncsim::net
