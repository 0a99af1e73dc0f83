#include "sim/core/event_queue.hpp"

#include <utility>

#include "sim/core/check.hpp"

namespace syncsim {

namespace {
constexpr std::size_t kArity = 4;
}

EventQueue::EventQueue() { heap_.reserve(1024); }

void EventQueue::schedule(Time at, EventTarget* target, uint32_t kind, uint64_t arg,
                          const CancelToken* token) {
  SIM_CHECK(at >= now_, "an event was scheduled in the past");
  push(Entry{at.picoseconds(), next_seq_++, target, arg, token, kind,
             token != nullptr ? token->generation : 0u});
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

void EventQueue::push(const Entry& e) {
  heap_.push_back(e);
  std::size_t i = heap_.size() - 1;
  while (i > 0) {
    const std::size_t parent = (i - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

EventQueue::Entry EventQueue::pop() {
  const Entry top = heap_.front();
  const Entry last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return top;
  std::size_t i = 0;
  for (;;) {
    const std::size_t first = i * kArity + 1;
    if (first >= n) break;
    std::size_t best = first;
    const std::size_t end = first + kArity < n ? first + kArity : n;
    for (std::size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return top;
}

bool EventQueue::dispatch_next() {
  while (!heap_.empty()) {
    const Entry e = pop();
    if (e.token != nullptr && e.token->generation != e.generation) {
      ++cancelled_;
      continue;
    }
    SIM_CHECK(e.time_ps >= now_.picoseconds(), "simulated time went backwards");
    now_ = Time::ps(e.time_ps);
    ++executed_;
    e.target->on_event(e.kind, e.arg);
    return true;
  }
  return false;
}

bool EventQueue::step() { return dispatch_next(); }

uint64_t EventQueue::run(Time until) {
  stop_requested_ = false;
  const uint64_t start = executed_;
  while (!heap_.empty() && !stop_requested_) {
    if (heap_.front().time_ps > until.picoseconds()) break;
    dispatch_next();
  }
  return executed_ - start;
}

}  // namespace syncsim
