#pragma once
// The discrete-event core: events ordered by (time, insertion sequence), so events at the same
// instant run in the order they were scheduled and every run is deterministic.
//
// Pending events are keys in a calendar queue (calendar_queue.hpp): O(1) per event where a heap
// takes O(log n), in exactly the same order.
//
// Targets implement one virtual `on_event(kind, arg)`; an entry is a fixed-size POD, so
// steady-state scheduling allocates nothing (buckets and heaps only grow to their high-water
// marks). Cancellation is lazy: an event may carry a CancelToken, and bumping the
// token's generation makes every pending event that captured the old generation a no-op when it
// surfaces. Rare, irregular work (traffic start times, completion callbacks) can use the closure
// slow path `schedule_fn`.
#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/calendar_queue.hpp"
#include "sim/core/check.hpp"
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
  // Or-ed into an event's kind: its `arg` is the address of what its target reads first (a
  // packet), which the dispatch loop starts loading one event ahead. The target is called with
  // the kind without this bit and the arg as given; a stale address is harmless (a prefetch never
  // faults).
  static constexpr uint32_t kPrefetchArg = uint32_t{1} << 31;

  EventQueue();
  EventQueue(const EventQueue&) = delete;
  EventQueue& operator=(const EventQueue&) = delete;

  Time now() const { return now_; }
  bool empty() const { return calendar_.empty(); }
  std::size_t pending() const { return calendar_.size(); }
  uint64_t executed() const { return executed_; }
  uint64_t cancelled() const { return cancelled_; }

  // Schedules target->on_event(kind, arg) at absolute time `at` (never earlier than now()).
  // Inline: every hop schedules one or two events.
  [[gnu::always_inline]] void schedule(Time at, EventTarget* target, uint32_t kind,
                                       uint64_t arg = 0, const CancelToken* token = nullptr) {
    SIM_CHECK(at >= now_, "an event was scheduled in the past");
    const uint32_t slot = take_slot(target, kind, arg, token);
    if (next_seq_ >= kSequenceLimit) [[unlikely]]
      renumber();
    const Key k = make_key(at.picoseconds(), (next_seq_ << 32) | slot);
    next_seq_ += 2;
    calendar_.push(k);
  }
  // An event from another partition of a windowed run (sim/net/partition_windows.hpp), scheduled
  // as if at `scheduled_at`, a time this queue's clock has passed since keep_clock_history(): among
  // the events of time `at` it runs after those scheduled while the clock was at or before
  // `scheduled_at` and before those scheduled later, as one queue for the whole run would have
  // ordered it (events scheduled at the very same picosecond aside).
  void schedule_as_of(Time at, Time scheduled_at, EventTarget* target, uint32_t kind,
                      uint64_t arg = 0, const CancelToken* token = nullptr);
  // Starts recording when the clock moves (schedule_as_of needs it).
  void keep_clock_history() { history_on_ = true; }
  // Takes the sequence number an event scheduled at this point would get, for schedule_at_mark:
  // the place, among the events of any one time, of an event the running one could have scheduled
  // here. Valid while renumber_count() stays what it was.
  uint64_t take_sequence_mark() {
    const uint64_t mark = next_seq_;
    next_seq_ += 2;
    return mark;
  }
  uint64_t renumber_count() const { return renumbers_; }
  // An event from another partition given the place `mark` (take_sequence_mark): among the events
  // of time `at` it runs exactly where an event scheduled at that point would have run.
  void schedule_at_mark(Time at, uint64_t mark, EventTarget* target, uint32_t kind,
                        uint64_t arg = 0, const CancelToken* token = nullptr);
  // Before a batch of at most `events` schedule_as_of calls: events of one time and one `as of`
  // time then run in the order the batch scheduled them (they tie on the rest of their key, and
  // the next `events` slots are handed out in increasing order).
  void order_next_slots(std::size_t events);
  // Drops what schedule_as_of will no longer be asked about: the clock's moves to times before `t`.
  void forget_clock_history_before(Time t);
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
  // The time of the next live event (cancelled ones ahead of it are discarded), Time::max() when
  // none is pending.
  Time next_event_time();
  // Moves the clock forward to `t` without running anything; requires that no live event before
  // `t` is pending (a partition of a windowed run, sim/net/partition_windows.hpp, is brought to the
  // window's end so that what is scheduled from outside it starts there).
  void advance_to(Time t);
  // Makes run() return after the event in progress.
  void stop() { stop_requested_ = true; }

  // Jumps the insertion sequence forward so tests can cross the 2^32 renumbering point.
  void advance_sequence_for_testing(uint64_t next) { next_seq_ = next; }
  // The calendar's bucket width as log2 of picoseconds (tests of the adaptation).
  uint32_t bucket_width_log2() const { return calendar_.bucket_width_log2(); }

  void reserve(std::size_t n) {
    payloads_.reserve(n);
    free_slots_.reserve(n);
  }

 private:
  // A key is ((time << 64) | (sequence << 32) | slot) as one unsigned 128-bit number: one compare
  // orders by time, then sequence. What to run lives in a slab slot named by the low 32 bits.
  // Before the sequence wraps, pending events are renumbered in order (once per 2^32 events),
  // which keeps ordering exact forever.
  using Key = uint128;
  // Sequence numbers are renumbered before they reach it, so they fit the key's 32 bits.
  static constexpr uint64_t kSequenceLimit = uint64_t{1} << 32;
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
  void renumber();
  bool dispatch_next(int64_t until_ps);
  // A payload slot for a new event (inline: the scheduling hot path).
  uint32_t take_slot(EventTarget* target, uint32_t kind, uint64_t arg, const CancelToken* token) {
    uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      SIM_CHECK(payloads_.size() < UINT32_MAX, "more than 2^32 pending events");
      slot = static_cast<uint32_t>(payloads_.size());
      payloads_.emplace_back();
    }
    payloads_[slot] = Payload{target, arg, token, kind, token != nullptr ? token->generation : 0u};
    return slot;
  }
  void note_clock_move(int64_t to_ps) {
    if (history_on_ && to_ps != now_.picoseconds()) clock_moves_.push_back({to_ps, next_seq_});
  }

  class ClosureRunner : public EventTarget {
   public:
    explicit ClosureRunner(EventQueue& q) : queue_(q) {}
    void on_event(uint32_t kind, uint64_t arg) override;

   private:
    EventQueue& queue_;
  };

  CalendarQueue calendar_;
  std::vector<Payload> payloads_;
  std::vector<uint32_t> free_slots_;
  Time now_ = Time::zero();
  uint64_t next_seq_ = 0;
  uint64_t renumbers_ = 0;
  uint64_t executed_ = 0;
  uint64_t cancelled_ = 0;
  bool stop_requested_ = false;
  // Sequence numbers go up by two: scheduled events take even ones, and schedule_as_of the odd one
  // just below the first even number taken after the clock passed its time.
  struct ClockMove {
    int64_t to_ps;      // the clock moved to this time...
    uint64_t next_seq;  // ...when this was the next sequence number
  };
  bool history_on_ = false;
  std::vector<ClockMove> clock_moves_;
  std::size_t first_move_ = 0;  // clock_moves_ before it are forgotten
  std::vector<std::function<void()>> closures_;
  std::vector<uint32_t> free_closures_;
  ClosureRunner closure_runner_{*this};
};

}  // namespace syncsim
