// The event queue's sorted runs (event_queue.hpp) against a plain reference priority queue: the
// same total order (time, then insertion), whatever mix of fixed-delay streams and random delays
// the events are scheduled with, across the 2^32 sequence renumbering and with cancellations.
#include <doctest/doctest.h>

#include <cstdint>
#include <queue>
#include <random>
#include <tuple>
#include <vector>

#include "sim/core/simulation.hpp"

using namespace syncsim;

namespace {

// Each executed event schedules up to three more: after fixed delays (streams that the runs take)
// and after a random one (the heap's), decided by the event's id alone, so two queues that order
// events the same way produce the same trace.
struct Action {
  int64_t delay_ps = 0;
  uint64_t id = 0;
};
std::vector<Action> children_of(uint64_t id, uint64_t limit) {
  std::vector<Action> out;
  std::mt19937_64 rng(id * 0x9E3779B97F4A7C15ull + 7);
  const int64_t fixed[] = {0, 1000, 2500, 40000};
  const uint64_t count = 1 + rng() % 3;
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t child = id * 3 + k + 1;
    if (child >= limit) break;
    const bool random_delay = rng() % 4 == 0;
    const int64_t delay = random_delay ? static_cast<int64_t>(rng() % 100000) : fixed[rng() % 4];
    out.push_back(Action{delay, child});
  }
  return out;
}

struct Tracer final : EventTarget {
  EventQueue* q = nullptr;
  uint64_t limit = 0;
  std::vector<std::pair<int64_t, uint64_t>> trace;
  void on_event(uint32_t /*kind*/, uint64_t id) override {
    trace.emplace_back(q->now().picoseconds(), id);
    for (const Action& a : children_of(id, limit))
      q->schedule(q->now() + Time::ps(a.delay_ps), this, 0, a.id);
  }
};

// The reference: a binary heap of (time, insertion number, id).
std::vector<std::pair<int64_t, uint64_t>> reference_trace(const std::vector<uint64_t>& roots,
                                                          uint64_t limit) {
  using Entry = std::tuple<int64_t, uint64_t, uint64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> pq;
  uint64_t seq = 0;
  for (uint64_t r : roots) pq.emplace(0, seq++, r);
  std::vector<std::pair<int64_t, uint64_t>> trace;
  while (!pq.empty()) {
    const auto [t, s, id] = pq.top();
    pq.pop();
    trace.emplace_back(t, id);
    for (const Action& a : children_of(id, limit)) pq.emplace(t + a.delay_ps, seq++, a.id);
  }
  return trace;
}

}  // namespace

TEST_CASE("event queue runs: same order as a reference heap for mixed fixed and random delays") {
  const uint64_t limit = 200000;
  EventQueue q;
  Tracer t;
  t.q = &q;
  t.limit = limit;
  std::vector<uint64_t> starts;
  for (uint64_t i = 0; i < 64; ++i) starts.push_back(i);
  for (uint64_t s : starts) q.schedule(Time::zero(), &t, 0, s);
  q.run();
  const auto expected = reference_trace(starts, limit);
  REQUIRE(t.trace.size() == expected.size());
  CHECK(t.trace.size() > 1000);
  CHECK(t.trace == expected);
  CHECK(q.empty());
  CHECK(q.pending() == 0);
}

TEST_CASE("event queue runs: order survives renumbering while runs hold events") {
  EventQueue q;
  Tracer t;
  t.q = &q;
  t.limit = 50000;
  for (uint64_t s = 0; s < 32; ++s) q.schedule(Time::zero(), &t, 0, s);
  // Run a while, then jump the sequence to just below the renumbering point with events pending
  // in the runs and the heap; the remaining order must still match the reference.
  for (int i = 0; i < 500; ++i) REQUIRE(q.step());
  REQUIRE(q.pending() > 10);
  q.advance_sequence_for_testing((uint64_t{1} << 32) - 5);
  q.run();
  std::vector<uint64_t> starts;
  for (uint64_t s = 0; s < 32; ++s) starts.push_back(s);
  CHECK(t.trace == reference_trace(starts, t.limit));
}

TEST_CASE("event queue runs: cancelled events in a run are skipped, run(until) stops in time") {
  EventQueue q;
  struct Sink final : EventTarget {
    std::vector<uint64_t> seen;
    void on_event(uint32_t /*kind*/, uint64_t arg) override { seen.push_back(arg); }
  } sink;
  CancelToken token;
  // Increasing times: all go to one run.
  for (uint64_t i = 0; i < 10; ++i) {
    q.schedule(Time::ns(static_cast<int64_t>(i)), &sink, 0, i, i % 2 == 0 ? &token : nullptr);
  }
  token.cancel_pending();
  CHECK(q.run(Time::ns(6)) == 3);  // 1, 3, 5 live up to 6 ns
  CHECK(sink.seen == std::vector<uint64_t>{1, 3, 5});
  CHECK(q.pending() == 3);  // 7 and the cancelled 8 remain, plus 9
  q.run();
  CHECK(sink.seen == std::vector<uint64_t>{1, 3, 5, 7, 9});
  CHECK(q.cancelled() == 5);
}
