// parallel_for and WorkerPool: every task once, whatever the thread count, and the lowest failing
// task's error.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/core/parallel_for.hpp"
#include "sim/core/worker_pool.hpp"

using syncsim::parallel_for;

TEST_CASE("parallel_for: every index runs exactly once on any thread count") {
  for (unsigned threads : {1U, 2U, 3U, 8U, 64U}) {
    CAPTURE(threads);
    std::vector<int> runs(37, 0);
    std::atomic<int> total{0};
    parallel_for(runs.size(), threads, [&](std::size_t i) {
      ++runs[i];  // each task owns its slot
      ++total;
    });
    CHECK(total == 37);
    for (int r : runs) CHECK(r == 1);
  }
  int calls = 0;
  parallel_for(0, 4, [&](std::size_t) { ++calls; });
  CHECK(calls == 0);
}

TEST_CASE("parallel_for: the lowest failing index's exception, after every task has run") {
  for (unsigned threads : {1U, 4U}) {
    CAPTURE(threads);
    std::vector<int> runs(20, 0);
    try {
      parallel_for(runs.size(), threads, [&](std::size_t i) {
        ++runs[i];
        if (i == 7 || i == 13) throw std::runtime_error("task " + std::to_string(i));
      });
      FAIL("no exception");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "task 7");
    }
    // One thread stops at the first failure; several finish the rest.
    if (threads > 1) {
      for (int r : runs) CHECK(r == 1);
    }
  }
}

TEST_CASE("worker pool: every index once per round, over many rounds, lowest failing index") {
  syncsim::WorkerPool pool(3);
  CHECK(pool.threads() == 3);
  std::vector<int> hits(37, 0);
  for (int round = 0; round < 500; ++round) {
    pool.run(hits.size(), [&](std::size_t i) { ++hits[i]; });
  }
  for (const int h : hits) CHECK(h == 500);
  CHECK_THROWS_WITH(pool.run(10,
                             [](std::size_t i) {
                               if (i == 4 || i == 7) throw std::runtime_error(std::to_string(i));
                             }),
                    "4");
  // Still usable after a round threw.
  int total = 0;
  std::mutex m;
  pool.run(5, [&](std::size_t i) {
    std::lock_guard lock(m);
    total += static_cast<int>(i);
  });
  CHECK(total == 10);
}
