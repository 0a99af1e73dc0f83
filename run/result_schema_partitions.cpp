// The result keys of how the packet network ran (sim/net/partition_windows.hpp): its partitions
// and windows, and what more threads would make of those windows (sim/net/window_load.hpp).
#include <nlohmann/json.hpp>
#include <vector>

#include "run/result_schema.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

namespace {

using json = nlohmann::json;
using P = ResultPresence;

json thread_scaling(const RunResult& r) {
  json out = json::array();
  for (const RunResult::ThreadScaling& t : r.thread_scaling) {
    out.push_back({{"threads", t.threads},
                   {"busiest_thread_events", t.busiest_thread_events},
                   {"speedup_bound", t.speedup_bound}});
  }
  return out;
}

}  // namespace

std::span<const ResultKey> partition_result_keys() {
  static const std::vector<ResultKey> keys = {
      {"partitions", "partitions", "count",
       "partitions the packet network ran as, in windows (1: one event queue; docs/performance.md)",
       P::Always, [](const RunResult& r) -> json { return r.partitions; }},
      {"windows", "windows", "count", "windows the partitions ran in (0 on one event queue)",
       P::Always, [](const RunResult& r) -> json { return r.windows; }},
      {"thread_scaling", "", "-",
       "partitioned runs: one object per thread count, what the windows' events bound a run on "
       "that many threads to, whatever `--threads` was (below; docs/performance.md)",
       P::Partitioned, thread_scaling},
      {"thread_scaling[].threads", "", "count",
       "threads (powers of two below the partition count, then the partition count)",
       P::Partitioned, nullptr},
      {"thread_scaling[].busiest_thread_events", "", "count",
       "per window the events of the busiest thread (partitions pinned round robin, on as many "
       "threads as --min-window-events gives the window), summed",
       P::Partitioned, nullptr},
      {"thread_scaling[].speedup_bound", "", "-",
       "events / (busiest_thread_events + events outside the partitions): the speed-up over one "
       "thread if every event cost the same and barriers nothing",
       P::Partitioned, nullptr},
  };
  return keys;
}

}  // namespace syncsim::app
