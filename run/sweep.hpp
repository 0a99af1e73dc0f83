#pragma once
// `syncsim sweep` (flags: cli/sweep_command.cpp): one scenario run over the cartesian product of
// --vary lists.
//
//   syncsim sweep SCENARIO --vary dotted.path=v1,v2,... [--vary ...]... [--set p=v]... [--seed N]
//                 [--jobs N] [--csv FILE] [--json] [--quiet] [--no-wall] [--force]
//
// Every point is the scenario with the --set overrides, then that point's --vary values, applied as
// `--set` overrides (each value is read as YAML, so `400Gbps`, `8` or `[1, 2]`). All points are
// loaded and validated before any runs, so a bad --vary is the usual one-line ScenarioError (exit
// 2). Points run on --jobs local threads, or on MPI ranks under mpirun (sweep_mpi.hpp); either way
// the rows come out in point order (the last --vary varies fastest) and, apart from wall_s, are
// byte-identical to a serial run: each row is built and serialized by the process that ran it, and
// the output is formatted from those serialized rows.
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "run/estimate.hpp"
#include "run/runner.hpp"
#include "scenario/scenario.hpp"
#include "scenario/scenario_loader.hpp"

namespace syncsim::app {

class SweepUsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// One `--vary path=v1,v2,...`. Values are split at top-level commas (not inside [], {} or quotes).
struct SweepAxis {
  std::string path;
  std::vector<std::string> values;
  // What the axis column shows for each value (a scenario's `sweep:` map {label: value}); empty:
  // the values themselves.
  std::vector<std::string> labels{};
  // The column's entry for `value` (its label, or the value).
  const std::string& shown(const std::string& value) const;
};
SweepAxis parse_vary(const std::string& arg);  // throws SweepUsageError

struct SweepSpec {
  std::string scenario_path;
  // The scenario as YAML text instead of a file (the Python module's load(dict)); scenario_path
  // then names it in error messages.
  std::optional<std::string> scenario_text{};
  std::vector<SweepAxis> axes;
  std::vector<Override> sets;    // applied before each point's --vary values
  std::optional<uint64_t> seed;  // --seed
  bool wall = true;              // include the wall_s column
  // Metric columns (result schema column names) after the axes; empty: the default columns.
  std::vector<std::string> columns;
  bool step = false;    // step columns (set by plan_sweep when the scenario has a workload)
  bool report = false;  // `report:` all_reduce columns (set by plan_sweep)
};

// The cartesian product of the axes' values, in point order (the last axis varies fastest).
std::vector<std::vector<std::string>> sweep_point_values(const std::vector<SweepAxis>& axes);

// A sweep with every point loaded and validated (load_scenario_file on each), ready to run.
struct SweepPlan {
  SweepSpec spec;
  std::vector<std::vector<std::string>> values;  // per point, one per axis
  std::vector<Scenario> scenarios;               // per point
};
// Throws ScenarioError for the first point that does not load.
SweepPlan plan_sweep(SweepSpec spec);

// The metric columns a sweep prints without --columns: sim_time_s, messages, messages_completed,
// fct_mean_s, fct_p99_s, fct_max_s, bytes_dropped, max_queue_bytes, pause_frames, ecn_marks,
// events, then with a workload step_time_s, mfu, exposed_comm_s, tail_s, tokens_per_s, and with a
// `report:` block allreduce_small_bytes, allreduce_small_latency_s, allreduce_large_bytes,
// allreduce_large_busbw_GBps (wall_s follows unless --no-wall).
std::vector<std::string> default_sweep_columns(bool step, bool report);
// `--columns a,b,c`: result schema column names (run/result_schema.hpp), each once; throws
// SweepUsageError naming the known columns.
std::vector<std::string> parse_sweep_columns(const std::string& list);

// The output columns: every axis path, then the metric columns (spec.columns, else the default
// ones and wall_s).
std::vector<std::string> sweep_columns(const SweepSpec& spec);
// One row for a finished run: axis values (numbers when the YAML scalar is a plain number) then the
// metrics, in sweep_columns order.
nlohmann::ordered_json sweep_row(const SweepSpec& spec, const std::vector<std::string>& values,
                                 const RunResult& result);
// Runs point i and returns its row serialized (compact JSON).
std::string run_sweep_point(const SweepPlan& plan, std::size_t i);

// Runs every point on `jobs` threads; rows (serialized) in point order. `on_done` is called (under
// a lock) after each point with the number of points done. The first exception thrown by a point is
// rethrown after every thread has stopped.
std::vector<std::string> run_sweep_local(const SweepPlan& plan, unsigned jobs,
                                         const std::function<void(std::size_t)>& on_done = {});

// Memory check before a sweep runs: point i is refused when its memory estimate times `concurrent`
// (points that may run at once on one machine: --jobs, or MPI ranks on the machine) exceeds
// `available`. One message per refused point, naming it (index and axis values) and both numbers;
// empty when every point fits or `available` is unknown. `estimates` are estimate_run's, per point.
std::vector<std::string> sweep_memory_refusals(const SweepPlan& plan,
                                               const std::vector<Estimate>& estimates,
                                               unsigned concurrent,
                                               std::optional<double> available);

// Output formatting from serialized rows.
std::string sweep_csv(const std::vector<std::string>& columns,
                      const std::vector<std::string>& rows);
std::string sweep_json(const std::vector<std::string>& rows);  // a JSON array, 2-space indent

// Points done / total and ETA on one rewritten stderr line; does nothing when disabled.
class SweepProgress {
 public:
  SweepProgress(std::size_t total, bool enabled, std::ostream& err);
  // Per-point wall estimates (estimate_run) and points running at once: the ETA then weighs the
  // points left by their estimates (points start in index order, so the first `done` are counted
  // done), and before any point is done it is the estimated total over `concurrent`.
  void set_estimates(std::vector<double> wall_s, unsigned concurrent);
  void update(std::size_t done);
  void finish();
  // The line update() prints, without the carriage return; exposed for tests.
  std::string text(std::size_t done, double elapsed_s) const;

 private:
  std::size_t total_;
  bool enabled_;
  std::ostream& err_;
  double start_s_;
  bool printed_ = false;
  std::vector<double> estimated_wall_s_;
  unsigned concurrent_ = 1;
};

}  // namespace syncsim::app
