#pragma once
// Runs independent tasks on a few threads. Each task writes only its own output slot, so what the
// caller gathers does not depend on the thread count or on which thread ran what: the runs that
// use it (the step model's private idle-fabric simulations) are bit-identical for every --threads.
#include <algorithm>
#include <cstddef>

#include "sim/core/worker_pool.hpp"

namespace syncsim {

// fn(i) for every i in [0, count), on min(threads, count) threads (the calling one among them),
// tasks taken in index order: put the longest first for the best balance. The exception of the
// lowest index that threw is rethrown: on one thread at once, on several once every task has run.
template <typename Fn>
void parallel_for(std::size_t count, unsigned threads, const Fn& fn) {
  const std::size_t workers = std::min<std::size_t>(std::max(1U, threads), count);
  if (workers <= 1) {
    for (std::size_t i = 0; i < count; ++i) fn(i);
    return;
  }
  WorkerPool pool(static_cast<unsigned>(workers));
  pool.run(count, fn);
}

}  // namespace syncsim
