#pragma once
// The discrete-event core: a 4-ary min-heap ordered by (time, insertion sequence), so events at the same
// instant run in the order they were scheduled and every run is deterministic.
//
// Targets implement one virtual `on_event(kind, arg)`; an entry is a fixed-size POD, so steady-state
// scheduling allocates nothing (the heap vector only grows to its high-water mark). Cancellation is lazy:
// an event may carry a CancelToken, and bumping the token's generation makes every pending event that
// captured the old generation a no-op when it surfaces. Rare, irregular work (traffic start times,
// completion callbacks) can use the closure slow path `schedule_fn`.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim {

class EventTarget {
 public:
  virtual ~EventTarget() = default;
  virtual void on_event(uint32_t kind, uint64_t arg) = 0;
};

struct CancelToken {
  uint32_t generation = 0;
  void cancel_pending() { ++generation; }
};

class EventQueue {
 public:
  EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  Time now() const { return now_; }
  bool empty() const { return heap_.empty(); }
  std::size_t pending() const { return heap_.size(); }
  uint64_t executed() const { return executed_; }
  uint64_t cancelled() const { return cancelled_; }

  // Schedules target->on_event(kind, arg) at absolute time `at` (never earlier than now()).
  void schedule(Time at, EventTarget* target, uint32_t kind, uint64_t arg = 0,
                const CancelToken* token = nullptr);
  // Slow path for rare events: stores the closure in a reusable slot.
  void schedule_fn(Time at, std::function<void()> fn);

  // Runs events until the queue is empty or the next event lies beyond `until`. Returns events run.
  uint64_t run(Time until = Time::max());
  // Runs exactly one live event if there is one; returns false when the queue is empty.
  bool step();
  // Makes run() return after the event in progress.
  void stop() { stop_requested_ = true; }

  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  struct Entry {
    int64_t time_ps;
    uint64_t seq;
    EventTarget* target;
    uint64_t arg;
    const CancelToken* token;
    uint32_t kind;
    uint32_t generation;
  };
  static bool before(const Entry& a, const Entry& b) {
    return a.time_ps < b.time_ps || (a.time_ps == b.time_ps && a.seq < b.seq);
  }
  void push(const Entry& e);
  Entry pop();
  bool dispatch_next();

  class ClosureRunner : public EventTarget {
   public:
    explicit ClosureRunner(EventQueue& q) : queue_(q) {}
    void on_event(uint32_t kind, uint64_t arg) override;
   private:
    EventQueue& queue_;
  };

  std::vector<Entry> heap_;
  Time now_ = Time::zero();
  uint64_t next_seq_ = 0;
  uint64_t executed_ = 0;
  uint64_t cancelled_ = 0;
  bool stop_requested_ = false;
  std::vector<std::function<void()>> closures_;
  std::vector<uint32_t> free_closures_;
  ClosureRunner closure_runner_{*this};
};

}  // namespace syncsim
