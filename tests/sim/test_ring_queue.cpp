// RingQueue (sim/core/ring_queue.hpp): first in, first out across growth and wrap-around, and
// copies and moves that keep the order.
#include <doctest/doctest.h>

#include <cstdint>
#include <deque>
#include <utility>

#include "sim/core/ring_queue.hpp"

using namespace syncsim;

TEST_CASE("ring queue: the same order as a deque through growth and wrap-around") {
  RingQueue<uint32_t> ring;
  std::deque<uint32_t> reference;
  uint32_t next = 0;
  // Pushes outrun pops in bursts, so the ring both wraps (head past the middle) and doubles while
  // wrapped (grow must unroll it).
  for (int round = 0; round < 200; ++round) {
    const int pushes = 3 + round % 7;
    const int pops = 1 + round % 5;
    for (int i = 0; i < pushes; ++i) {
      ring.push(next);
      reference.push_back(next);
      ++next;
    }
    for (int i = 0; i < pops && !reference.empty(); ++i) {
      REQUIRE(!ring.empty());
      CHECK(ring.front() == reference.front());
      CHECK(ring.pop() == reference.front());
      reference.pop_front();
    }
    REQUIRE(ring.size() == reference.size());
    for (std::size_t i = 0; i < reference.size(); i += 7) CHECK(ring.at(i) == reference[i]);
  }
  while (!reference.empty()) {
    CHECK(ring.pop() == reference.front());
    reference.pop_front();
  }
  CHECK(ring.empty());
}

TEST_CASE("ring queue: a copy holds the same elements in order, a move leaves the source empty") {
  RingQueue<uint32_t> ring;
  for (uint32_t i = 0; i < 12; ++i) ring.push(i);
  for (uint32_t i = 0; i < 5; ++i) CHECK(ring.pop() == i);  // head away from slot 0
  for (uint32_t i = 12; i < 18; ++i) ring.push(i);          // wrapped
  RingQueue<uint32_t> copy = ring;
  REQUIRE(copy.size() == ring.size());
  for (std::size_t i = 0; i < ring.size(); ++i) CHECK(copy.at(i) == ring.at(i));
  copy.push(99);  // the copy is independent
  CHECK(copy.size() == ring.size() + 1);
  RingQueue<uint32_t> moved = std::move(ring);
  CHECK(ring.empty());  // NOLINT(bugprone-use-after-move): a moved-from queue is empty
  uint32_t expected = 5;
  while (!moved.empty()) CHECK(moved.pop() == expected++);
  CHECK(expected == 18);
  ring.push(7);  // a moved-from queue can be used again
  CHECK(ring.pop() == 7);
}
