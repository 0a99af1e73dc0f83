// The event queue's calendar (calendar_queue.hpp) against a plain reference priority queue: the
// same total order (time, then insertion), whatever mix of fixed delays and random delays the
// events are scheduled with, at time scales from picoseconds to seconds (the bucket width adapts),
// across the 2^32 sequence renumbering, with look-aheads and with cancellations.
#include <doctest/doctest.h>

#include <algorithm>
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
std::vector<Action> children_of(uint64_t id, uint64_t limit, int64_t scale = 1) {
  std::vector<Action> out;
  std::mt19937_64 rng(id * 0x9E3779B97F4A7C15ull + 7);
  const int64_t fixed[] = {0, 1000 * scale, 2500 * scale, 40000 * scale};
  const uint64_t count = 1 + rng() % 3;
  for (uint64_t k = 0; k < count; ++k) {
    const uint64_t child = id * 3 + k + 1;
    if (child >= limit) break;
    const bool random_delay = rng() % 4 == 0;
    const int64_t delay =
        random_delay ? static_cast<int64_t>(rng() % 100000) * scale : fixed[rng() % 4];
    out.push_back(Action{delay, child});
  }
  return out;
}

struct Recorder final : EventTarget {
  EventQueue* q = nullptr;
  std::vector<uint64_t> seen;
  std::vector<int64_t> times;
  void on_event(uint32_t /*kind*/, uint64_t arg) override {
    seen.push_back(arg);
    times.push_back(q->now().picoseconds());
  }
};

struct Tracer final : EventTarget {
  EventQueue* q = nullptr;
  uint64_t limit = 0;
  int64_t scale = 1;
  std::vector<std::pair<int64_t, uint64_t>> trace;
  void on_event(uint32_t /*kind*/, uint64_t id) override {
    trace.emplace_back(q->now().picoseconds(), id);
    for (const Action& a : children_of(id, limit, scale))
      q->schedule(q->now() + Time::ps(a.delay_ps), this, 0, a.id);
  }
};

// The reference: a binary heap of (time, insertion number, id).
std::vector<std::pair<int64_t, uint64_t>> reference_trace(const std::vector<uint64_t>& roots,
                                                          uint64_t limit, int64_t scale = 1) {
  using Entry = std::tuple<int64_t, uint64_t, uint64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> pq;
  uint64_t seq = 0;
  for (uint64_t r : roots) pq.emplace(0, seq++, r);
  std::vector<std::pair<int64_t, uint64_t>> trace;
  while (!pq.empty()) {
    const auto [t, s, id] = pq.top();
    pq.pop();
    trace.emplace_back(t, id);
    for (const Action& a : children_of(id, limit, scale)) pq.emplace(t + a.delay_ps, seq++, a.id);
  }
  return trace;
}

}  // namespace

TEST_CASE("event queue order: same order as a reference heap for mixed fixed and random delays") {
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

TEST_CASE("event queue order: order survives renumbering with events pending") {
  EventQueue q;
  Tracer t;
  t.q = &q;
  t.limit = 50000;
  for (uint64_t s = 0; s < 32; ++s) q.schedule(Time::zero(), &t, 0, s);
  // Run a while, then jump the sequence to just below the renumbering point with events pending
  // in the buckets and the overflow; the remaining order must still match the reference.
  for (int i = 0; i < 500; ++i) REQUIRE(q.step());
  REQUIRE(q.pending() > 10);
  q.advance_sequence_for_testing((uint64_t{1} << 32) - 5);
  q.run();
  std::vector<uint64_t> starts;
  for (uint64_t s = 0; s < 32; ++s) starts.push_back(s);
  CHECK(t.trace == reference_trace(starts, t.limit));
}

TEST_CASE("event queue order: cancelled events are skipped, run(until) stops in time") {
  EventQueue q;
  struct Sink final : EventTarget {
    std::vector<uint64_t> seen;
    void on_event(uint32_t /*kind*/, uint64_t arg) override { seen.push_back(arg); }
  } sink;
  CancelToken token;
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

TEST_CASE("event queue order: the bucket width follows the time scale, the order does not") {
  // The same event tree at picosecond and at millisecond spacing: the same order as the reference
  // at both, with bucket widths some twenty powers of two apart.
  uint32_t fine = 0;
  uint32_t coarse = 0;
  for (const int64_t scale : {int64_t{1}, int64_t{1'000'000}}) {
    CAPTURE(scale);
    EventQueue q;
    Tracer t;
    t.q = &q;
    t.limit = 300000;
    t.scale = scale;
    std::vector<uint64_t> starts;
    for (uint64_t i = 0; i < 256; ++i) starts.push_back(i);
    for (uint64_t s : starts) q.schedule(Time::zero(), &t, 0, s);
    q.run();
    CHECK(t.trace == reference_trace(starts, t.limit, scale));
    (scale == 1 ? fine : coarse) = q.bucket_width_log2();
  }
  CHECK(fine <= 12);
  CHECK(coarse >= fine + 15);
}

TEST_CASE("event queue order: events each at a time of their own share buckets of several") {
  // One event every nanosecond, each at a distinct time (paced flows look like this): three
  // distinct times a bucket would be three keys, and a bucket's fixed cost on every key or two.
  // The width aims at eight keys at least: 8 ns rounded down to a power of two, 2^12 ps (the
  // initial 2^10, within a factor of two of three times' 3 ns, would have stayed).
  struct Chain final : EventTarget {
    EventQueue* q = nullptr;
    int left = 0;
    std::vector<int64_t> times;
    void on_event(uint32_t /*kind*/, uint64_t /*arg*/) override {
      times.push_back(q->now().picoseconds());
      if (--left > 0) q->schedule(q->now() + Time::ns(1), this, 0);
    }
  };
  EventQueue q;
  Chain chain;
  chain.q = &q;
  chain.left = 40000;
  q.schedule(Time::zero(), &chain, 0);
  CHECK(q.run() == 40000);
  CHECK(q.bucket_width_log2() == 12);
  REQUIRE(chain.times.size() == 40000);
  CHECK(chain.times.back() == 39999 * 1000);
  CHECK(std::is_sorted(chain.times.begin(), chain.times.end()));
}

TEST_CASE("event queue order: events scheduled behind a look-ahead run first") {
  // run(until) looks at the next event (at 10 us) without running it; events scheduled after that
  // at earlier times must still run before it, in time order.
  EventQueue q;
  Recorder r;
  r.q = &q;
  q.schedule(Time::us(10), &r, 0, 1);
  CHECK(q.run(Time::us(1)) == 0);
  q.schedule(Time::us(2), &r, 0, 2);
  q.schedule(Time::ns(1500), &r, 0, 3);
  q.schedule(Time::us(2), &r, 0, 4);
  CHECK(q.run() == 4);
  CHECK(r.seen == std::vector<uint64_t>{3, 2, 4, 1});
  CHECK(r.times == std::vector<int64_t>{1'500'000, 2'000'000, 2'000'000, 10'000'000});
}

TEST_CASE("event queue order: thousands of events at a few instants and at many") {
  // Synchronised senders put thousands of events at a handful of instants into one bucket (ordered
  // by counting: 5 and 40 distinct times in the first 1 ns bucket); beyond 64 distinct instants in
  // a bucket the queue sorts instead (200 in a 1 ns bucket, or buckets widened by a run at
  // millisecond spacing first).
  struct Chain final : EventTarget {
    EventQueue* q = nullptr;
    int left = 0;
    void on_event(uint32_t /*kind*/, uint64_t /*arg*/) override {
      if (--left > 0) q->schedule(q->now() + Time::ms(1), this, 0);
    }
  };
  for (const int64_t spread_ps : {int64_t{5}, int64_t{40}, int64_t{200}, int64_t{3'000'000}}) {
    CAPTURE(spread_ps);
    EventQueue q;
    Chain chain;
    chain.q = &q;
    const bool widen = spread_ps > 1'000'000;
    chain.left = widen ? 20000 : 0;
    if (chain.left > 0) q.schedule(Time::zero(), &chain, 0);
    q.run();
    if (widen) REQUIRE(q.bucket_width_log2() > 22);  // buckets wider than 3 us
    Recorder r;
    r.q = &q;
    std::mt19937_64 rng(static_cast<uint64_t>(spread_ps));
    const int64_t base = q.now().picoseconds();
    std::vector<std::pair<int64_t, uint64_t>> expected;
    for (uint64_t i = 0; i < 20000; ++i) {
      const int64_t t = base + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread_ps));
      q.schedule(Time::ps(t), &r, 0, i);
      expected.emplace_back(t, i);
    }
    std::stable_sort(expected.begin(), expected.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    q.run();
    REQUIRE(r.seen.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (r.seen[i] != expected[i].second || r.times[i] != expected[i].first) {
        FAIL("order differs at event " << i);
      }
    }
  }
}

namespace {
// Records the kind of each event it runs.
struct KindRecorder : EventTarget {
  std::vector<uint32_t> order;
  void on_event(uint32_t kind, uint64_t /*arg*/) override { order.push_back(kind); }
};
}  // namespace

TEST_CASE("event queue order: schedule_as_of places an event by when it was scheduled") {
  // At each of three instants (10 ns and 3 us in the calendar's ring, 10 ms beyond it),
  // events 1 and 3 are scheduled at t = 0 and t = 5 ns; 2 and 4 are posted later as if scheduled at
  // 3 ns and at 5 ns: one queue would have run 1, 2, 3, 4 (4 after 3, scheduled at the same
  // picosecond, which a posted event never precedes).
  for (const int64_t at_ps : {int64_t{10'000}, int64_t{3'000'000}, int64_t{10'000'000'000}}) {
    CAPTURE(at_ps);
    EventQueue q;
    q.keep_clock_history();
    KindRecorder r;
    KindRecorder tick;
    q.schedule(Time::ps(at_ps), &r, 1);
    q.schedule(Time::ns(5), &tick, 0);
    // Pending at 8 ns all along: the calendar's current bucket stops there, so events 3, 4 and 2
    // go into their instant's bucket (or, at 10 ms, the overflow heap), 4 and 2 behind 3.
    q.schedule(Time::ns(8), &tick, 0);
    q.run(Time::ns(5));
    q.schedule(Time::ps(at_ps), &r, 3);
    q.schedule(Time::ns(7), &tick, 0);
    q.run(Time::ns(7));
    q.schedule_as_of(Time::ps(at_ps), Time::ns(5), &r, 4);
    q.schedule_as_of(Time::ps(at_ps), Time::ns(3), &r, 2);
    // Scheduled now, after all of them.
    q.schedule(Time::ps(at_ps), &r, 5);
    q.run();
    CHECK(r.order == std::vector<uint32_t>{1, 2, 3, 4, 5});
  }
}

TEST_CASE("event queue order: schedule_as_of across renumbering and a forgotten history") {
  EventQueue q;
  q.keep_clock_history();
  KindRecorder r;
  KindRecorder tick;
  q.schedule(Time::us(1), &r, 1);
  q.schedule(Time::ns(1), &tick, 0);
  q.run(Time::ns(1));
  // Renumbering voids the record: what is posted next is as if scheduled now (after event 1).
  q.advance_sequence_for_testing((uint64_t{1} << 32) - 1);
  q.schedule(Time::us(1), &r, 2);  // takes the last number; the next one renumbers
  q.schedule_as_of(Time::us(1), Time::zero(), &r, 3);
  q.schedule(Time::ns(2), &tick, 0);
  q.run(Time::ns(2));
  // After the clock moved again: as of 1 ns (before the move to 2 ns), so ahead of event 4.
  q.schedule(Time::us(1), &r, 5);
  q.schedule_as_of(Time::us(1), Time::ns(1), &r, 4);
  q.forget_clock_history_before(Time::ns(3));
  // Forgotten: as if scheduled now.
  q.schedule_as_of(Time::us(1), Time::ns(1), &r, 6);
  q.run();
  CHECK(r.order == std::vector<uint32_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("event queue order: a batch posted as of one time runs in the order posted") {
  // Events posted for one instant as of one time tie on time and sequence number; only their
  // payload slots tell them apart. Slots freed in a scrambled order (events at 1..8 ns scheduled
  // out of order) would hand them out as the free list has them; order_next_slots makes the batch
  // run as posted, with and without free slots enough for all of it.
  for (const std::size_t posted : {std::size_t{5}, std::size_t{12}}) {
    CAPTURE(posted);
    EventQueue q;
    q.keep_clock_history();
    KindRecorder r;
    KindRecorder tick;
    for (const int64_t ns : {3, 7, 1, 8, 2, 6, 4, 5}) q.schedule(Time::ns(ns), &tick, 0);
    q.schedule(Time::ns(20), &tick, 0);  // keeps the clock history open past 8 ns
    q.run(Time::ns(9));
    q.order_next_slots(posted);
    for (uint32_t k = 1; k <= posted; ++k) q.schedule_as_of(Time::us(1), Time::ns(9), &r, k);
    q.run();
    std::vector<uint32_t> expected(posted);
    for (uint32_t k = 0; k < posted; ++k) expected[k] = k + 1;
    CHECK(r.order == expected);
  }
}

TEST_CASE("calendar queue: keys pushed into the current bucket before its last come out in order") {
  // The current bucket (width 2^10 ps at the start) holds keys at even picoseconds; keys at odd
  // ones are pushed into it in a shuffled order while it is popped: few keys ahead of them (shifted
  // one by one) and many (a search and a block move).
  using Key = CalendarQueue::Key;
  auto key = [](int64_t time_ps, uint64_t order) {
    return (static_cast<Key>(static_cast<uint64_t>(time_ps)) << 64) | order;
  };
  for (const int64_t ahead : {3, 31, 32, 33, 300}) {
    CAPTURE(ahead);
    CalendarQueue cq;
    std::vector<Key> expected;
    for (int64_t i = 0; i <= ahead; ++i) {
      cq.push(key(2 * i, static_cast<uint64_t>(i)));
      expected.push_back(key(2 * i, static_cast<uint64_t>(i)));
    }
    std::vector<int64_t> odd;
    for (int64_t i = 0; i < ahead; ++i) odd.push_back(2 * i + 1);
    std::shuffle(odd.begin(), odd.end(), std::mt19937_64(static_cast<uint64_t>(ahead)));
    std::vector<Key> popped{cq.least()};
    cq.pop();
    for (const int64_t t : odd) {
      cq.push(key(t, 1000 + static_cast<uint64_t>(t)));
      expected.push_back(key(t, 1000 + static_cast<uint64_t>(t)));
    }
    while (!cq.empty()) {
      popped.push_back(cq.least());
      cq.pop();
    }
    std::sort(expected.begin(), expected.end());
    CHECK(popped == expected);
  }
}
