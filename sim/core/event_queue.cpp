#include "sim/core/event_queue.hpp"

#include <algorithm>
#include <utility>

#include "sim/core/check.hpp"

namespace syncsim {

namespace {
constexpr std::size_t kArity = 4;
constexpr uint64_t kSequenceLimit = uint64_t{1} << 32;
}  // namespace

EventQueue::EventQueue() { reserve(1024); }

void EventQueue::schedule(Time at, EventTarget* target, uint32_t kind, uint64_t arg,
                          const CancelToken* token) {
  SIM_CHECK(at >= now_, "an event was scheduled in the past");
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
  if (next_seq_ == kSequenceLimit) renumber();
  push(make_key(at.picoseconds(), (next_seq_++ << 32) | slot));
}

void EventQueue::renumber() {
  for (Run& r : runs_) {
    heap_.insert(heap_.end(), r.keys.begin() + static_cast<std::ptrdiff_t>(r.head), r.keys.end());
    r.keys.clear();
    r.head = 0;
  }
  run_count_ = 0;
  std::sort(heap_.begin(), heap_.end());  // a sorted array is a valid heap
  for (std::size_t i = 0; i < heap_.size(); ++i) {
    heap_[i] = make_key(time_of(heap_[i]),
                        (static_cast<uint64_t>(i) << 32) | (order_of(heap_[i]) & 0xFFFF'FFFFu));
  }
  next_seq_ = heap_.size();
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

void EventQueue::push(Key e) {
  // Append to the run whose last key is the greatest below e (keeps runs tight); else start an
  // empty run; else the heap.
  std::size_t best = kRuns;
  std::size_t empty_run = kRuns;
  for (std::size_t r = 0; r < kRuns; ++r) {
    const Run& run = runs_[r];
    if (run.empty()) {
      if (empty_run == kRuns) empty_run = r;
    } else if (run.keys.back() < e &&
               (best == kRuns || runs_[best].keys.back() < run.keys.back())) {
      best = r;
    }
  }
  if (best == kRuns) best = empty_run;
  if (best == kRuns) {
    heap_push(e);
    return;
  }
  Run& run = runs_[best];
  if (run.empty()) {
    run.keys.clear();
    run.head = 0;
  } else if (run.head >= 1024 && run.head * 2 >= run.keys.size()) {
    run.keys.erase(run.keys.begin(), run.keys.begin() + static_cast<std::ptrdiff_t>(run.head));
    run.head = 0;
  }
  run.keys.push_back(e);
  ++run_count_;
}

std::size_t EventQueue::least_source() const {
  std::size_t best = kRuns;
  const Key* least = heap_.empty() ? nullptr : &heap_.front();
  for (std::size_t r = 0; r < kRuns; ++r) {
    const Run& run = runs_[r];
    if (run.empty()) continue;
    const Key& k = run.keys[run.head];
    if (least == nullptr || k < *least) {
      least = &k;
      best = r;
    }
  }
  return best;
}

void EventQueue::heap_push(Key e) {
  heap_.push_back(e);
  std::size_t i = heap_.size() - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!(e < heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

EventQueue::Key EventQueue::heap_pop() {
  const Key top = heap_.front();
  const Key last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  // Floyd's variant: walk the hole down to a leaf along the smallest children, then sift the last
  // element up from there; it usually belongs near the bottom, so this saves comparisons.
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first + kArity <= n) {
      const Key* c = &heap_[first];
      const std::size_t a = c[1] < c[0] ? 1 : 0;
      const std::size_t b = c[3] < c[2] ? 3 : 2;
      const std::size_t best = first + (c[b] < c[a] ? b : a);
      heap_[i] = heap_[best];
      i = best;
    } else if (first < n) {
      std::size_t best = first;
      for (std::size_t k = first + 1; k < n; ++k) {
        if (heap_[k] < heap_[best]) best = k;
      }
      heap_[i] = heap_[best];
      i = best;
    } else {
      break;
    }
  }
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!(last < heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = last;
  return top;
}

bool EventQueue::dispatch_next(int64_t until_ps) {
  while (!empty()) {
    const std::size_t src = least_source();
    const Key k = src == kRuns ? heap_.front() : runs_[src].keys[runs_[src].head];
    if (time_of(k) > until_ps) break;
    if (src == kRuns) {
      heap_pop();
    } else {
      ++runs_[src].head;
      --run_count_;
    }
    const auto slot = static_cast<uint32_t>(order_of(k) & 0xFFFF'FFFFu);
    const Payload e = payloads_[slot];
    free_slots_.push_back(slot);
    if (e.token != nullptr && e.token->generation != e.generation) {
      ++cancelled_;
      continue;
    }
    SIM_CHECK(time_of(k) >= now_.picoseconds(), "simulated time went backwards");
    now_ = Time::ps(time_of(k));
    ++executed_;
    e.target->on_event(e.kind, e.arg);
    return true;
  }
  return false;
}

bool EventQueue::has_live_events() {
  while (!empty()) {
    const std::size_t src = least_source();
    const Key k = src == kRuns ? heap_.front() : runs_[src].keys[runs_[src].head];
    const auto slot = static_cast<uint32_t>(order_of(k) & 0xFFFF'FFFFu);
    const Payload& e = payloads_[slot];
    if (e.token == nullptr || e.token->generation == e.generation) return true;
    if (src == kRuns) {
      heap_pop();
    } else {
      ++runs_[src].head;
      --run_count_;
    }
    free_slots_.push_back(slot);
    ++cancelled_;
  }
  return false;
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
