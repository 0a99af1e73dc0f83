#pragma once
// The result schema: every key `syncsim run --json` prints, with its unit, its meaning and how to
// read it from a RunResult. This one table generates the JSON object (to_json), the values of the
// text summary (to_text formats them by their unit), the columns a sweep can print (`syncsim sweep
// --columns`), `syncsim run --list-keys` and the key table of docs/cli.md (a test compares them).
// A new result is one row here; nothing else needs to repeat it.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace syncsim::app {

struct RunResult;

// When a key is part of the output.
enum class ResultPresence : uint8_t {
  Always,
  Workload,             // the scenario has a workload (a training step)
  ModelParallel,        // ... with tensor, context or pipeline parallelism (closed form)
  ExtrapolatedBuckets,  // ... and some bucket's time was extrapolated
  Report,               // the scenario has a `report:` block
  Deadlock,             // a PFC deadlock stopped the run
  Timeseries,           // `--timeseries DIR` wrote files
  Estimate,             // the caller attached the pre-run estimate (`syncsim run`)
  PeakRss,              // the caller attached the measured peak RSS (`syncsim run`)
  PortCounters,         // per port x priority counters were collected (`--counters`, sweeps)
  Chakra,               // the workload is a replayed Chakra trace (`workload.chakra`)
  Jobs,                 // the scenario runs several jobs (`jobs:`)
  Faults,               // the scenario has `faults:`
  LayerBreakdown,       // a training step of a transformer (its per-layer breakdown)
  Partitioned,          // the packet network ran as partitions in windows
};

struct ResultKey {
  // Where the value sits in the JSON object, '.' between levels: "messages.fct_s.p99"; a member of
  // the objects in a list is "list[].member".
  std::string_view path;
  // Its name as a flat column (`syncsim sweep --columns`); empty for lists, objects and members.
  std::string_view column;
  // "s", "B", "bit/s", "GB/s" (1e9 B/s), "tokens/s", "count", "-" (text, a flag or a ratio).
  std::string_view unit;
  std::string_view description;
  ResultPresence presence;
  // The value. nullptr for a documented member of an object or list another key reads whole
  // (`drops.no_route`, `buckets[].bytes`); a test checks those members against the JSON.
  nlohmann::json (*read)(const RunResult&);
};

// Every key, in the order of the documentation table.
std::span<const ResultKey> result_keys();
// The keys of a Chakra replay (result_schema_chakra.cpp), the table's last rows.
std::span<const ResultKey> chakra_result_keys();
// The keys of a run with faults (result_schema_faults.cpp), before the deadlock keys.
std::span<const ResultKey> faults_result_keys();
// The keys of a multi-job run (result_schema_jobs.cpp), after the Chakra keys.
std::span<const ResultKey> jobs_result_keys();
// The per-layer compute breakdown's keys (result_schema_layers.cpp), after the step's shares.
std::span<const ResultKey> layer_breakdown_result_keys();
// How the packet network ran (result_schema_partitions.cpp): partitions, windows and what more
// threads would give, after the events.
std::span<const ResultKey> partition_result_keys();
// The pre-run estimate's keys (result_schema_estimate.cpp), before NCCL's channels.
std::span<const ResultKey> estimate_result_keys();

// Whether `key` belongs in the output of `r`.
bool result_key_present(const ResultKey& key, const RunResult& r);

// The key with this JSON path that has a reader, or with this column name; nullptr when none.
const ResultKey* find_result_key(std::string_view path);
const ResultKey* find_result_column(std::string_view column);

// Every column name, in table order (for error messages and `--list-keys`).
std::vector<std::string> result_column_names();

// The key table as Markdown rows `| key | unit | description |` with the header, as docs/cli.md
// holds it between its result-keys markers.
std::string result_keys_markdown();

}  // namespace syncsim::app
