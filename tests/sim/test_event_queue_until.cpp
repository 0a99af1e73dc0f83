// run(until) must stop at `until` even when a cancelled event sits at the front of the queue; the
// next live time and moving an idle clock (windowed runs).
#include <doctest/doctest.h>

#include <vector>

#include "sim/core/event_queue.hpp"

using namespace syncsim;

namespace {
struct Recorder final : EventTarget {
  std::vector<uint32_t> seen;
  void on_event(uint32_t kind, uint64_t) override { seen.push_back(kind); }
};
}  // namespace

TEST_CASE("event queue: run(until) does not run a live event beyond until after a cancelled one") {
  EventQueue q;
  Recorder r;
  CancelToken token;
  q.schedule(Time::us(1), &r, 1, 0, &token);
  q.schedule(Time::us(5), &r, 5);
  token.cancel_pending();
  q.run(Time::us(2));
  CHECK(r.seen.empty());
  CHECK(q.now() <= Time::us(2));
  q.run();
  CHECK(r.seen == std::vector<uint32_t>{5});
}

TEST_CASE("event queue: has_live_events discards cancelled events and sees live ones") {
  EventQueue q;
  Recorder r;
  CancelToken token;
  q.schedule(Time::ms(33), &r, 33, 0, &token);  // a superseded wake-up far ahead
  CHECK(q.has_live_events());
  token.cancel_pending();
  CHECK(!q.empty());  // still queued
  CHECK(!q.has_live_events());
  CHECK(q.empty());  // and now gone, without moving the clock
  CHECK(q.now() == Time::zero());
  CHECK(q.cancelled() == 1);
  q.schedule(Time::us(2), &r, 2, 0, &token);
  q.schedule(Time::us(1), &r, 1);
  CHECK(q.has_live_events());
  q.run();
  CHECK(r.seen == std::vector<uint32_t>{1, 2});
}

TEST_CASE("event queue: next_event_time skips cancelled events; advance_to moves an idle clock") {
  EventQueue q;
  CHECK(q.next_event_time() == Time::max());
  CancelToken token;
  Recorder target;
  q.schedule(Time::ns(5), &target, 0, 0, &token);
  q.schedule(Time::ns(9), &target, 0);
  token.cancel_pending();
  CHECK(q.next_event_time() == Time::ns(9));
  q.advance_to(Time::ns(8));
  CHECK(q.now() == Time::ns(8));
  q.advance_to(Time::ns(3));  // never backwards
  CHECK(q.now() == Time::ns(8));
  // Past a pending event: refused.
  CHECK_THROWS(q.advance_to(Time::ns(10)));
  q.schedule(Time::ns(8), &target, 0);  // at the new now
  CHECK(q.run() == 2);
}
