#pragma once
// Threads that stay up between rounds of independent tasks: a windowed packet run
// (sim/net/partition_windows.hpp) hands its partitions to them twice per window, thousands of
// times per run, where starting threads each time (parallel_for.hpp) would cost more than the
// window's work. Each task writes only state of its own, so what a round leaves does not depend on
// the thread count or on which thread ran what.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace syncsim {

class WorkerPool {
 public:
  // `threads` counts the calling thread: 1 starts none and runs every round inline.
  explicit WorkerPool(unsigned threads)
      // More threads than cores: a spinning thread holds the core that the one it waits for
      // needs (3 threads on 2 cores spent 0.7 ms a window), so they sleep at once instead.
      : spins_(threads <= std::max(1U, std::thread::hardware_concurrency()) ? kSpins : 0) {
    const unsigned capped = std::min<unsigned>(threads, kActiveMask);  // round_ holds the count
    for (unsigned t = 1; t < capped; ++t) workers_.emplace_back([this, t] { serve(t); });
  }
  ~WorkerPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      round_.fetch_add(kRoundStep);
    }
    start_.notify_all();
    for (std::thread& w : workers_) w.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // fn(i) for every i in [0, count), on every thread of the pool (the caller's among them), tasks
  // taken in index order; returns once all have run. The exception of the lowest index that threw
  // is rethrown then. `pinned`: thread k (the caller is 0) runs the indices i with i % threads() ==
  // k, every round the same, so that what task i touches stays in one core's caches.
  // `use_threads` (0: all of them): this round runs on the caller's thread and the first
  // use_threads - 1 workers only, pinned or not, for a round too small to pay for handing it to all
  // (1: the caller's alone); the other workers stay where they wait.
  template <typename Fn>
  void run(std::size_t count, const Fn& fn, bool pinned = false, unsigned use_threads = 0) {
    const unsigned active = use_threads == 0 ? threads() : std::min(use_threads, threads());
    if (active <= 1 || count <= 1) {
      for (std::size_t i = 0; i < count; ++i) fn(i);
      return;
    }
    errors_.assign(count, nullptr);
    task_ = &fn;
    call_ = [](const void* f, std::size_t i) { (*static_cast<const Fn*>(f))(i); };
    count_ = count;
    pinned_ = pinned;
    active_ = active;
    next_.store(0, std::memory_order_relaxed);
    busy_.store(active - 1);
    {
      std::lock_guard lock(mutex_);
      // A worker outside the round reads only this word (a slow one may see the next round's).
      round_.store(((round_.load() & ~kActiveMask) + kRoundStep) | active);
    }
    if (sleepers_.load() > 0) start_.notify_all();
    work(0);
    // Rounds are short (a window of a packet run: tens of microseconds): wait by spinning first,
    // as a sleep and wake-up costs about as much as the round.
    if (!spin_until([this] { return busy_.load() == 0; })) {
      std::unique_lock lock(mutex_);
      caller_waiting_.store(true);
      done_.wait(lock, [this] { return busy_.load() == 0; });
      caller_waiting_.store(false);
    }
    for (const std::exception_ptr& e : errors_) {
      if (e) std::rethrow_exception(e);
    }
  }

 private:
  // About 50 us of pause instructions: longer than a window's barrier usually waits.
  static constexpr int kSpins = 20000;
  // round_: a count of rounds above the low 16 bits, the threads in the latest round in them.
  static constexpr uint64_t kActiveMask = 0xFFFF;
  static constexpr uint64_t kRoundStep = uint64_t{1} << 16;
  template <typename Ready>
  bool spin_until(const Ready& ready) const {
    for (int i = 0; i < spins_; ++i) {
      if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    }
    return ready();
  }
  void work(std::size_t thread) {
    if (pinned_) {
      for (std::size_t i = thread; i < count_; i += active_) call(i);
      return;
    }
    for (std::size_t i = next_.fetch_add(1, std::memory_order_relaxed); i < count_;
         i = next_.fetch_add(1, std::memory_order_relaxed)) {
      call(i);
    }
  }
  void call(std::size_t i) {
    try {
      call_(task_, i);
    } catch (...) {
      errors_[i] = std::current_exception();
    }
  }
  void serve(std::size_t thread) {
    uint64_t seen = 0;
    for (;;) {
      if (!spin_until([&] { return round_.load() != seen; })) {
        std::unique_lock lock(mutex_);
        sleepers_.fetch_add(1);
        start_.wait(lock, [&] { return round_.load() != seen; });
        sleepers_.fetch_sub(1);
      }
      seen = round_.load();
      if (stopping_) return;
      // Not in this round: nothing to take, and nobody waits on it.
      if (thread >= (seen & kActiveMask)) continue;
      work(thread);
      // The last one out wakes the caller if it went to sleep (it checks busy_ after saying so).
      if (busy_.fetch_sub(1) == 1 && caller_waiting_.load()) {
        { std::lock_guard lock(mutex_); }
        done_.notify_one();
      }
    }
  }

  int spins_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_;
  std::condition_variable done_;
  std::atomic<uint64_t> round_{0};
  std::atomic<unsigned> busy_{0};
  std::atomic<unsigned> sleepers_{0};
  std::atomic<bool> caller_waiting_{false};
  std::atomic<bool> stopping_{false};
  // The round in progress: the task, how to call it, how many indices and the next one to take.
  const void* task_ = nullptr;
  void (*call_)(const void*, std::size_t) = nullptr;
  std::size_t count_ = 0;
  bool pinned_ = false;
  unsigned active_ = 1;  // threads in the round, the caller's included (also in round_)
  std::atomic<std::size_t> next_{0};
  std::vector<std::exception_ptr> errors_;
};

}  // namespace syncsim
