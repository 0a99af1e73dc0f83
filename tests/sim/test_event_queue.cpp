#include <doctest/doctest.h>

#include <vector>

#include "sim/core/simulation.hpp"

using namespace syncsim;

namespace {
struct Recorder final : EventTarget {
  std::vector<uint64_t> seen;
  std::vector<int64_t> times;
  EventQueue* q = nullptr;
  void on_event(uint32_t /*kind*/, uint64_t arg) override {
    seen.push_back(arg);
    times.push_back(q->now().picoseconds());
  }
};
}  // namespace

TEST_CASE("event queue: orders by time, then by insertion") {
  EventQueue q;
  Recorder r;
  r.q = &q;
  q.schedule(Time::ns(5), &r, 0, 1);
  q.schedule(Time::ns(1), &r, 0, 2);
  q.schedule(Time::ns(5), &r, 0, 3);
  q.schedule(Time::ns(1), &r, 0, 4);
  q.schedule(Time::ns(3), &r, 0, 5);
  CHECK(q.run() == 5);
  CHECK(r.seen == std::vector<uint64_t>{2, 4, 5, 1, 3});
  CHECK(r.times == std::vector<int64_t>{1000, 1000, 3000, 5000, 5000});
  CHECK(q.now() == Time::ns(5));
}

TEST_CASE(
    "event queue: an event that names an address to prefetch runs with its own kind and arg") {
  struct KindRecorder final : EventTarget {
    std::vector<uint32_t> kinds;
    std::vector<uint64_t> args;
    void on_event(uint32_t kind, uint64_t arg) override {
      kinds.push_back(kind);
      args.push_back(arg);
    }
  };
  EventQueue q;
  KindRecorder r;
  const std::vector<int64_t> data(64, 7);
  const auto address = reinterpret_cast<uint64_t>(data.data());
  // Several in one bucket, so that each is the next one while another runs; a stale address too.
  q.schedule(Time::ns(1), &r, 3 | EventQueue::kPrefetchArg, address);
  q.schedule(Time::ns(1), &r, 3, 11);
  q.schedule(Time::ns(1), &r, 0 | EventQueue::kPrefetchArg, 16);
  q.schedule(Time::ns(1), &r, 5 | EventQueue::kPrefetchArg, address + 8 * 63);
  CHECK(q.run() == 4);
  CHECK(r.kinds == std::vector<uint32_t>{3, 3, 0, 5});
  CHECK(r.args == std::vector<uint64_t>{address, 11, 16, address + 8 * 63});
}

TEST_CASE("event queue: many same-time events keep insertion order through heap churn") {
  EventQueue q;
  Recorder r;
  r.q = &q;
  for (uint64_t i = 0; i < 1000; ++i) q.schedule(Time::ns(static_cast<int64_t>(i % 7)), &r, 0, i);
  q.run();
  REQUIRE(r.seen.size() == 1000);
  for (std::size_t i = 1; i < r.seen.size(); ++i) {
    const bool time_order = r.times[i - 1] < r.times[i];
    const bool same_time_fifo = r.times[i - 1] == r.times[i] && r.seen[i - 1] < r.seen[i];
    CHECK((time_order || same_time_fifo));
  }
}

TEST_CASE("event queue: lazy cancellation by token generation") {
  EventQueue q;
  Recorder r;
  r.q = &q;
  CancelToken token;
  q.schedule(Time::ns(1), &r, 0, 1, &token);
  q.schedule(Time::ns(2), &r, 0, 2, &token);
  token.cancel_pending();
  q.schedule(Time::ns(3), &r, 0, 3, &token);  // scheduled after the cancel: stays live
  q.schedule(Time::ns(4), &r, 0, 4);
  q.run();
  CHECK(r.seen == std::vector<uint64_t>{3, 4});
  CHECK(q.cancelled() == 2);
  CHECK(q.executed() == 2);
}

TEST_CASE("event queue: run(until) stops before later events; scheduling in the past is refused") {
  EventQueue q;
  Recorder r;
  r.q = &q;
  q.schedule(Time::ns(1), &r, 0, 1);
  q.schedule(Time::ns(10), &r, 0, 2);
  q.run(Time::ns(5));
  CHECK(r.seen == std::vector<uint64_t>{1});
  CHECK(q.pending() == 1);
  CHECK_THROWS(q.schedule(Time::zero(), &r, 0, 9));
}

TEST_CASE("event queue: closures run once, slots are reused, and may schedule more closures") {
  EventQueue q;
  std::vector<int> order;
  q.schedule_fn(Time::ns(2), [&] { order.push_back(2); });
  q.schedule_fn(Time::ns(1), [&] {
    order.push_back(1);
    q.schedule_fn(Time::ns(3), [&] { order.push_back(3); });
  });
  q.run();
  CHECK(order == std::vector<int>{1, 2, 3});
}

TEST_CASE("event queue: two simulations in one process do not interfere") {
  Simulation a(1), b(2);
  Recorder ra, rb;
  ra.q = &a.queue();
  rb.q = &b.queue();
  a.queue().schedule(Time::ns(7), &ra, 0, 1);
  b.queue().schedule(Time::ns(3), &rb, 0, 2);
  a.queue().run();
  CHECK(a.now() == Time::ns(7));
  CHECK(b.now() == Time::zero());
  b.queue().run();
  CHECK(ra.seen == std::vector<uint64_t>{1});
  CHECK(rb.seen == std::vector<uint64_t>{2});
}

TEST_CASE("rng: streams are reproducible and independent") {
  Simulation a(42), b(42), c(43);
  auto ra = a.rng(RngStreamKind::Traffic, 3);
  auto rb = b.rng(RngStreamKind::Traffic, 3);
  auto rc = c.rng(RngStreamKind::Traffic, 3);
  auto rd = a.rng(RngStreamKind::Traffic, 4);
  bool all_equal = true, any_diff_seed = false, any_diff_stream = false;
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = ra.next_u64();
    all_equal &= x == rb.next_u64();
    any_diff_seed |= x != rc.next_u64();
    any_diff_stream |= x != rd.next_u64();
  }
  CHECK(all_equal);
  CHECK(any_diff_seed);
  CHECK(any_diff_stream);
  // below(n) stays in range and hits every value of a small range.
  std::vector<int> hits(5, 0);
  for (int i = 0; i < 1000; ++i) ++hits[ra.below(5)];
  for (int h : hits) CHECK(h > 100);
  const double u = ra.uniform();
  CHECK((u >= 0.0 && u < 1.0));
}

TEST_CASE("event queue: order survives the sequence renumbering at 2^32 insertions") {
  EventQueue q;
  Recorder r;
  r.q = &q;
  q.advance_sequence_for_testing((uint64_t{1} << 32) - 3);
  for (uint64_t i = 0; i < 10; ++i) q.schedule(Time::ns(static_cast<int64_t>(i % 3)), &r, 0, i);
  q.run();
  CHECK(r.seen == std::vector<uint64_t>{0, 3, 6, 9, 1, 4, 7, 2, 5, 8});
}
