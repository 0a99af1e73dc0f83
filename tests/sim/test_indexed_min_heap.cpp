// IndexedMinHeap (sim/core/indexed_min_heap.hpp) against an ordered set of (key, id) under random
// sets, erases and pops.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "sim/core/indexed_min_heap.hpp"

using namespace syncsim;

TEST_CASE("indexed min-heap: the same order as a set of (key, id) under random changes") {
  IndexedMinHeap heap;
  std::set<std::pair<int64_t, uint32_t>> reference;
  std::vector<int64_t> key_of(64, -1);  // -1: no entry
  std::mt19937_64 rng(7);
  uint64_t pops = 0;
  for (int step = 0; step < 200'000; ++step) {
    const auto id = static_cast<uint32_t>(rng() % key_of.size());
    const uint64_t op = rng() % 10;
    if (op < 6) {
      // Few distinct keys, so ties by id are exercised.
      const auto key = static_cast<int64_t>(rng() % 16);
      if (key_of[id] >= 0) reference.erase({key_of[id], id});
      reference.insert({key, id});
      key_of[id] = key;
      heap.set(id, key);
    } else if (op < 8) {
      if (key_of[id] >= 0) reference.erase({key_of[id], id});
      key_of[id] = -1;
      heap.erase(id);
    } else if (!reference.empty()) {
      const auto [key, top] = *reference.begin();
      REQUIRE(heap.top().key == key);
      REQUIRE(heap.top().id == top);
      reference.erase(reference.begin());
      key_of[top] = -1;
      heap.pop();
      ++pops;
    }
    REQUIRE(heap.size() == reference.size());
    REQUIRE(heap.contains(id) == (key_of[id] >= 0));
  }
  CHECK(pops > 10'000);
  while (!reference.empty()) {
    REQUIRE(heap.top().id == reference.begin()->second);
    reference.erase(reference.begin());
    heap.pop();
  }
  CHECK(heap.empty());
}
