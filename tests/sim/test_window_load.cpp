// The load of a windowed run's windows (sim/net/window_load.hpp): whether a window is worth handing
// to the threads, and per thread count the busiest thread's events of each window (partitions
// pinned round robin; a window not worth spreading counts whole), summed over the windows.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>

#include "sim/net/window_load.hpp"

using namespace syncsim;

TEST_CASE("window load: the busiest thread of each window, partitions pinned round robin") {
  net::WindowLoad load(5, 0);  // every window spread
  // Powers of two below the partition count, then the partition count.
  REQUIRE(load.loads().size() == 3);
  CHECK(load.loads()[0].threads == 2);
  CHECK(load.loads()[1].threads == 4);
  CHECK(load.loads()[2].threads == 5);

  const std::array<uint64_t, 5> spread{1, 2, 3, 4, 5};
  const std::array<uint64_t, 5> one_busy{10, 0, 0, 0, 0};
  load.add_window(spread);
  load.add_window(one_busy);
  CHECK(load.events() == 25);
  // 2 threads: partitions 0, 2, 4 (9 events) and 1, 3 (6), then 10 on thread 0.
  CHECK(load.loads()[0].busiest_thread_events == 9 + 10);
  // 4 threads: thread 0 holds partitions 0 and 4 (6 events).
  CHECK(load.loads()[1].busiest_thread_events == 6 + 10);
  // One partition a thread: the busiest partition of each window.
  CHECK(load.loads()[2].busiest_thread_events == 5 + 10);
}

TEST_CASE("window load: two partitions profile two threads; one partition none") {
  net::WindowLoad two(2, 0);
  REQUIRE(two.loads().size() == 1);
  CHECK(two.loads()[0].threads == 2);
  const std::array<uint64_t, 2> window{3, 7};
  two.add_window(window);
  CHECK(two.loads()[0].busiest_thread_events == 7);
  CHECK(net::WindowLoad(1, 0).loads().empty());
  CHECK(net::WindowLoad(64, 0).loads().back().threads == 64);
  CHECK(net::WindowLoad(64, 0).loads().size() == 6);  // 2, 4, 8, 16, 32, 64
}

TEST_CASE("window load: a window runs on as many threads as its expected events pay for") {
  // 10 events per thread: a window goes to as many threads (at most T) as the windows before it
  // averaged 10 events each (a moving average giving the last window a weight of 1/4); below 20,
  // to the caller's thread alone.
  net::WindowLoad load(4, 10);
  CHECK(load.threads_for_window(1) == 1);
  CHECK(load.threads_for_window(2) == 1);             // nothing seen yet
  const std::array<uint64_t, 4> big{40, 40, 40, 40};  // 160 events
  load.add_window(big);                               // on one thread: counts whole on 2 and 4
  CHECK(load.loads()[0].busiest_thread_events == 160);
  CHECK(load.loads()[1].busiest_thread_events == 160);
  // The average is now 40: 4 threads' worth.
  CHECK(load.threads_for_window(2) == 2);
  CHECK(load.threads_for_window(4) == 4);
  CHECK(load.threads_for_window(8) == 4);
  load.add_window(big);  // 80 on each of 2 threads, 40 on each of 4
  CHECK(load.loads()[0].busiest_thread_events == 160 + 80);
  CHECK(load.loads()[1].busiest_thread_events == 160 + 40);
  // Empty windows pull the average (70) down, to 52, then 39: worth 3 threads, not 4.
  const std::array<uint64_t, 4> empty{0, 0, 0, 0};
  load.add_window(empty);
  CHECK(load.threads_for_window(4) == 4);
  CHECK(load.threads_for_window(8) == 5);
  load.add_window(empty);
  CHECK(load.threads_for_window(4) == 3);
  CHECK(load.threads_for_window(2) == 2);
  // On 3 threads the partitions pin as i % 3: partitions 0 and 3 share thread 0.
  const std::array<uint64_t, 4> skewed{30, 0, 0, 10};
  load.add_window(skewed);
  CHECK(load.loads()[0].busiest_thread_events == 160 + 80 + 30);  // 2 threads: 30 | 10
  CHECK(load.loads()[1].busiest_thread_events == 160 + 40 + 40);  // "4" threads ran as 3
  CHECK(load.events() == 360);
}
