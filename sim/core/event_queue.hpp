#pragma once
// The discrete-event core: events ordered by (time, insertion sequence), so events at the same
// instant run in the order they were scheduled and every run is deterministic. Pending events live
// in a 4-ary min-heap plus a few sorted runs: most events are scheduled a fixed delay ahead (a
// link's serialization or propagation, a transfer's duration, a step latency), so they arrive in
// increasing order within a few streams; appending such an event to a run whose last key is
// smaller is O(1), and the next event is the least of the heap's top and the runs' fronts. The
// order is the same total order either way.
//
// Targets implement one virtual `on_event(kind, arg)`; an entry is a fixed-size POD, so
// steady-state scheduling allocates nothing (the heap vector only grows to its high-water mark).
// Cancellation is lazy: an event may carry a CancelToken, and bumping the token's generation makes
// every pending event that captured the old generation a no-op when it surfaces. Rare, irregular
// work (traffic start times, completion callbacks) can use the closure slow path `schedule_fn`.
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
  bool empty() const { return heap_.empty() && run_count_ == 0; }
  std::size_t pending() const { return heap_.size() + run_count_; }
  uint64_t executed() const { return executed_; }
  uint64_t cancelled() const { return cancelled_; }

  // Schedules target->on_event(kind, arg) at absolute time `at` (never earlier than now()).
  void schedule(Time at, EventTarget* target, uint32_t kind, uint64_t arg = 0,
                const CancelToken* token = nullptr);
  // Slow path for rare events: stores the closure in a reusable slot.
  void schedule_fn(Time at, std::function<void()> fn);

  // Runs events until the queue is empty or the next event lies beyond `until`. Returns events run.
  uint64_t run(Time until = Time::max());
  // Whether a live (not cancelled) event is pending; discards the cancelled ones ahead of it, so a
  // caller that stops at times of its own (time series) can tell that the run has ended while
  // cancelled timers are still queued.
  bool has_live_events();
  // Runs exactly one live event if there is one; returns false when the queue is empty.
  bool step();
  // Makes run() return after the event in progress.
  void stop() { stop_requested_ = true; }

  // Jumps the insertion sequence forward so tests can cross the 2^32 renumbering point.
  void advance_sequence_for_testing(uint64_t next) { next_seq_ = next; }

  void reserve(std::size_t n) {
    heap_.reserve(n);
    payloads_.reserve(n);
    free_slots_.reserve(n);
  }

 private:
  // The heap holds 16-byte keys only (four children share one cache line); what to run lives in a
  // slab slot named by the key's low 32 bits. The high 32 bits are the insertion sequence, so
  // comparing `order` compares sequence numbers. Before the sequence wraps, pending events are
  // renumbered in order (once per 2^32 events), which keeps ordering exact forever.
  // ((time << 64) | (sequence << 32) | slot) as one unsigned 128-bit number: one compare orders by
  // time, then sequence, and the selection below compiles to conditional moves, not branches.
  using Key = uint128;
  static Key make_key(int64_t time_ps, uint64_t order) {
    return (static_cast<Key>(static_cast<uint64_t>(time_ps)) << 64) | order;
  }
  static int64_t time_of(Key k) { return static_cast<int64_t>(static_cast<uint64_t>(k >> 64)); }
  static uint64_t order_of(Key k) { return static_cast<uint64_t>(k); }
  struct Payload {
    EventTarget* target;
    uint64_t arg;
    const CancelToken* token;
    uint32_t kind;
    uint32_t generation;
  };
  // A sorted run: keys[head..] ascending. Popped from the front; the consumed prefix is dropped
  // when it outgrows the rest (amortised O(1), no allocation once grown).
  struct Run {
    std::vector<Key> keys;
    std::size_t head = 0;
    bool empty() const { return head == keys.size(); }
  };
  static constexpr std::size_t kRuns = 4;
  void push(Key k);
  void heap_push(Key k);
  Key heap_pop();
  // Index of the run holding the least key (kRuns when the heap's top is least or all are empty).
  std::size_t least_source() const;
  bool dispatch_next(int64_t until_ps);
  void renumber();

  class ClosureRunner : public EventTarget {
   public:
    explicit ClosureRunner(EventQueue& q) : queue_(q) {}
    void on_event(uint32_t kind, uint64_t arg) override;

   private:
    EventQueue& queue_;
  };

  std::vector<Key> heap_;
  Run runs_[kRuns];
  std::size_t run_count_ = 0;  // keys in runs_
  std::vector<Payload> payloads_;
  std::vector<uint32_t> free_slots_;
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
