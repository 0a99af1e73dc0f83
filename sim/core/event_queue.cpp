#include "sim/core/event_queue.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include "sim/core/check.hpp"

namespace syncsim {

EventQueue::EventQueue() { reserve(1024); }

void EventQueue::schedule_as_of(Time at, Time scheduled_at, EventTarget* target, uint32_t kind,
                                uint64_t arg, const CancelToken* token) {
  SIM_CHECK(at >= now_, "an event was scheduled in the past");
  SIM_CHECK(history_on_, "schedule_as_of needs keep_clock_history()");
  const uint32_t slot = take_slot(target, kind, arg, token);
  if (next_seq_ >= kSequenceLimit) renumber();
  // The first sequence number taken after the clock passed `scheduled_at` (the next one when it
  // has not passed it: the event is as if scheduled now).
  const auto first = clock_moves_.begin() + static_cast<std::ptrdiff_t>(first_move_);
  const auto moved = std::upper_bound(first, clock_moves_.end(), scheduled_at.picoseconds(),
                                      [](int64_t t, const ClockMove& m) { return t < m.to_ps; });
  const uint64_t after = moved == clock_moves_.end() ? next_seq_ : moved->next_seq;
  // Below it, and odd: never equal to a scheduled event's (even) number. Keys of one time may now
  // come out of order, which the calendar is told.
  const uint64_t seq = after == 0 ? 0 : after - 1;
  calendar_.push_any_order(make_key(at.picoseconds(), (seq << 32) | slot));
}

void EventQueue::schedule_at_mark(Time at, uint64_t mark, EventTarget* target, uint32_t kind,
                                  uint64_t arg, const CancelToken* token) {
  SIM_CHECK(at >= now_, "an event was scheduled in the past");
  const uint32_t slot = take_slot(target, kind, arg, token);
  const uint64_t renumbers_before = renumbers_;
  if (next_seq_ >= kSequenceLimit) renumber();
  // The mark's own number; a renumbering here voids it (the caller checks for earlier ones): then
  // as if scheduled now.
  const uint64_t seq = renumbers_ == renumbers_before ? mark : (next_seq_ == 0 ? 0 : next_seq_ - 1);
  calendar_.push_any_order(make_key(at.picoseconds(), (seq << 32) | slot));
}

void EventQueue::order_next_slots(std::size_t events) {
  // take_slot pops from the back: the `events` there, largest first, come out smallest first, and
  // slots past the free list's end are new and larger still.
  const std::size_t n = std::min(events, free_slots_.size());
  if (n < 2) return;
  const auto from = free_slots_.end() - static_cast<std::ptrdiff_t>(n);
  std::sort(from, free_slots_.end(), std::greater<>());
}

void EventQueue::forget_clock_history_before(Time t) {
  // The moves are in time order: a window's hundreds of them are passed in one search.
  const auto first = clock_moves_.begin() + static_cast<std::ptrdiff_t>(first_move_);
  first_move_ = static_cast<std::size_t>(
      std::lower_bound(first, clock_moves_.end(), t.picoseconds(),
                       [](const ClockMove& m, int64_t to) { return m.to_ps < to; }) -
      clock_moves_.begin());
  if (first_move_ >= 4096 && first_move_ * 2 >= clock_moves_.size()) {
    clock_moves_.erase(clock_moves_.begin(),
                       clock_moves_.begin() + static_cast<std::ptrdiff_t>(first_move_));
    first_move_ = 0;
  }
}

void EventQueue::renumber() {
  ++renumbers_;
  std::vector<Key> keys;
  keys.reserve(calendar_.size());
  calendar_.drain(keys, now_.picoseconds());
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const Key k = make_key(time_of(keys[i]), (static_cast<uint64_t>(2 * i) << 32) |
                                                 (order_of(keys[i]) & 0xFFFF'FFFFu));
    calendar_.push(k);
  }
  next_seq_ = 2 * keys.size();
  // The recorded sequence numbers are void: events posted from now on are ordered as if
  // scheduled when they are taken in, until the clock has moved again (once per 2^31 events).
  clock_moves_.clear();
  first_move_ = 0;
}

void EventQueue::schedule_fn(Time at, std::function<void()> fn) {
  uint32_t slot;
  if (!free_closures_.empty()) {
    slot = free_closures_.back();
    free_closures_.pop_back();
    closures_[slot] = std::move(fn);
  } else {
    slot = static_cast<uint32_t>(closures_.size());
    closures_.push_back(std::move(fn));
  }
  schedule(at, &closure_runner_, 0, slot);
}

void EventQueue::ClosureRunner::on_event(uint32_t /*kind*/, uint64_t arg) {
  const auto slot = static_cast<uint32_t>(arg);
  // Move out first: the closure may schedule more closures and reuse or reallocate the slots.
  std::function<void()> fn = std::move(queue_.closures_[slot]);
  queue_.closures_[slot] = nullptr;
  queue_.free_closures_.push_back(slot);
  fn();
}

// Inlined into run()'s loop: a call per event was 2-3 % of a packet run's instructions.
[[gnu::always_inline]] inline bool EventQueue::dispatch_next(int64_t until_ps) {
  Key k;
  while (calendar_.pop_until(until_ps, k)) {
    const auto slot = static_cast<uint32_t>(order_of(k) & 0xFFFF'FFFFu);
    const Payload e = payloads_[slot];
    // Large fabrics spend their time in cache misses on the events' payloads, targets and what
    // they read first: start loading those of the next event (kPrefetchArg) and the payload of the
    // one after while this one runs.
    if (const Key* next = calendar_.upcoming(1)) {
      const Payload& p = payloads_[order_of(*next) & 0xFFFF'FFFFu];
      __builtin_prefetch(p.target);
      if ((p.kind & kPrefetchArg) != 0) __builtin_prefetch(reinterpret_cast<const void*>(p.arg));
      if (const Key* after = calendar_.upcoming(2)) {
        __builtin_prefetch(&payloads_[order_of(*after) & 0xFFFF'FFFFu]);
      }
    }
    free_slots_.push_back(slot);
    if (e.token != nullptr && e.token->generation != e.generation) {
      ++cancelled_;
      continue;
    }
    SIM_CHECK(time_of(k) >= now_.picoseconds(), "simulated time went backwards");
    note_clock_move(time_of(k));
    now_ = Time::ps(time_of(k));
    ++executed_;
    e.target->on_event(e.kind & ~kPrefetchArg, e.arg);
    return true;
  }
  return false;
}

bool EventQueue::has_live_events() {
  while (!calendar_.empty()) {
    const Key k = calendar_.least();
    const auto slot = static_cast<uint32_t>(order_of(k) & 0xFFFF'FFFFu);
    const Payload& e = payloads_[slot];
    if (e.token == nullptr || e.token->generation == e.generation) return true;
    calendar_.pop();
    free_slots_.push_back(slot);
    ++cancelled_;
  }
  return false;
}

Time EventQueue::next_event_time() {
  if (!has_live_events()) return Time::max();
  return Time::ps(time_of(calendar_.least()));
}

void EventQueue::advance_to(Time t) {
  if (t <= now_) return;
  SIM_CHECK(next_event_time() >= t, "the clock was moved past a pending event");
  note_clock_move(t.picoseconds());
  now_ = t;
}

bool EventQueue::step() { return dispatch_next(Time::max().picoseconds()); }

uint64_t EventQueue::run(Time until) {
  stop_requested_ = false;
  const uint64_t start = executed_;
  while (!empty() && !stop_requested_) {
    // A cancelled event at the front is skipped inside dispatch_next, which must not then run a
    // live event beyond `until`.
    if (!dispatch_next(until.picoseconds())) break;
  }
  return executed_ - start;
}

}  // namespace syncsim
