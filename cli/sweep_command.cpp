// `syncsim sweep`: flags -> SweepSpec, then plan, estimate, run (threads or MPI) and print.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "run/estimate.hpp"
#include "run/machine_speed.hpp"
#include "run/sweep.hpp"
#include "run/sweep_mpi.hpp"

namespace syncsim::app {

namespace {

const char* kUsage =
    "usage: syncsim sweep SCENARIO --set dotted.path=v1,v2,... [--set ...]... [options]\n"
    "       (--vary PATH=V1,V2,... is the same axis; --set PATH=V with one value fixes a value)\n"
    "\n"
    "Runs SCENARIO once per point of the cartesian product of the axes (the last varies\n"
    "fastest) and prints one row per point: every swept value, then sim_time_s, messages,\n"
    "messages_completed, fct_mean_s, fct_p99_s, fct_max_s, bytes_dropped, max_queue_bytes,\n"
    "pause_frames, ecn_marks, events, (for workload scenarios) step_time_s, mfu, exposed_comm_s,\n"
    "tail_s, tokens_per_s, (with a report: block) allreduce_small_bytes, "
    "allreduce_small_latency_s,\n"
    "allreduce_large_bytes, allreduce_large_busbw_GBps, cnps, queue_mean_bytes, queue_p99_bytes,\n"
    "(for workload scenarios) memory_per_gpu_bytes, fits_memory, bound_by, and wall_s; with a\n"
    "workload it names the point with the most tokens/s among those that fit the GPU's memory.\n"
    "Every point is loaded, checked and its memory estimated before any runs.\n"
    "Under `mpirun -n N` (Open MPI build) rank 0 hands points out to ranks 1..N-1.\n"
    "\n";

}  // namespace

int sweep_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  SweepSpec spec;
  unsigned jobs = 1;
  std::string csv_path;
  std::string out_path;  // CSV, or JSON when the name ends in .json
  bool json = false;
  bool quiet = false;
  bool force = false;
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")(
      "vary", po::value<std::vector<std::string>>()->composing()->value_name("PATH=V1,V2,..."),
      "values of one scenario value (each read as YAML, e.g. 400Gbps); repeatable")(
      "set", po::value<std::vector<std::string>>()->composing()->value_name("PATH=V1,V2,..."),
      "an axis (two or more values); --set PATH=VALUE fixes a value; repeatable")(
      "unset", po::value<std::vector<std::string>>()->composing()->value_name("PATH"),
      "remove a key of the scenario (as --set PATH=null); repeatable")(
      "seed", po::value<std::string>()->value_name("N"), "override the scenario's seed")(
      "jobs,j", po::value<std::string>()->value_name("N"),
      "points run in parallel on N threads (default 1)")(
      "csv", po::value<std::string>()->value_name("FILE"),
      "write the CSV table to FILE (default: stdout unless --json or --out)")(
      "out", po::value<std::string>()->value_name("FILE"),
      "write the rows to FILE: JSON if it ends in .json, else CSV")(
      "json", "print the rows as a JSON array")(
      "columns", po::value<std::string>()->value_name("A,B,..."),
      "the result columns to print after the swept values, in this order (any sweep column "
      "of `syncsim run --list-keys`; default: the ones above)")(
      "no-wall", "leave out wall_s, so the output of two runs compares byte for byte")(
      "quiet,q", "no progress line (it is shown only when stderr is a terminal)")(
      "force",
      "run even when a point's memory estimate times the points running at once (--jobs, or MPI "
      "ranks "
      "per machine) exceeds the available memory")("scenario",
                                                   po::value<std::string>()->value_name("FILE"),
                                                   "scenario YAML file (or the first argument)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  try {
    const CommandLine cl = parse_command_line<SweepUsageError>(args, opts, pos);
    if (cl.has("help")) {
      print_help(out, kUsage, opts);
      return 0;
    }
    // Axes in command-line order, whichever flag names them.
    for (const auto& [flag, value] : cl.in_order) {
      if (flag == "vary") {
        spec.axes.push_back(parse_vary(value));
      } else if (flag == "set") {
        // `--set path=v` fixes a value; `--set path=v1,v2,...` makes it an axis, like --vary.
        const Override o = parse_override(value);
        SweepAxis axis = parse_vary(value);
        if (axis.values.size() > 1) {
          spec.axes.push_back(std::move(axis));
        } else {
          spec.sets.push_back(o);
        }
      } else if (flag == "unset") {
        spec.sets.push_back(unset_override(value));
      }
    }
    if (cl.has("seed")) {
      const std::string& v = cl.get<std::string>("seed");
      uint64_t seed = 0;
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), seed);
      if (ec != std::errc() || p != v.data() + v.size()) {
        throw SweepUsageError("--seed: expected a non-negative integer, found \"" + v + "\"");
      }
      spec.seed = seed;
    }
    if (cl.has("jobs")) {
      const std::string& v = cl.get<std::string>("jobs");
      auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), jobs);
      if (ec != std::errc() || p != v.data() + v.size() || jobs == 0) {
        throw SweepUsageError("--jobs: expected a positive integer, found \"" + v + "\"");
      }
    }
    if (cl.has("csv")) csv_path = cl.get<std::string>("csv");
    if (cl.has("out")) out_path = cl.get<std::string>("out");
    if (cl.has("columns")) spec.columns = parse_sweep_columns(cl.get<std::string>("columns"));
    json = cl.has("json");
    quiet = cl.has("quiet");
    force = cl.has("force");
    spec.wall = !cl.has("no-wall");
    if (cl.has("scenario")) spec.scenario_path = cl.get<std::string>("scenario");
    if (spec.scenario_path.empty())
      throw SweepUsageError(std::string("expected a scenario file\n") + kUsage);
    if (spec.axes.empty() && !spec.scenario_path.empty()) {
      // No axes on the command line: the scenario's own `sweep:` block.
      for (auto& axis : load_scenario_file(spec.scenario_path).sweep) {
        spec.axes.push_back(SweepAxis{axis.path, axis.values, axis.labels});
      }
    }
    if (spec.axes.empty()) {
      throw SweepUsageError(
          "expected at least one axis: --set dotted.path=v1,v2,... or --vary "
          "dotted.path=v1,v2,...");
    }
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      for (std::size_t b = 0; b < a; ++b) {
        if (spec.axes[a].path == spec.axes[b].path) {
          throw SweepUsageError("--vary " + spec.axes[a].path + " is given twice");
        }
      }
    }
  } catch (const SweepUsageError& e) {
    err << "syncsim sweep: " << e.what() << "\n";
    return 2;
  }

  const std::unique_ptr<MpiWorld> world = MpiWorld::init_if_launched();
  const int rank = world ? world->rank() : launcher_world_rank();
  if (!world && launcher_world_size() > 1) {
    if (rank == 0) {
      err << "syncsim sweep: warning: started by an MPI launcher (" << launcher_world_size()
          << " ranks) but built without MPI; rank 0 runs every point serially, the other ranks "
             "exit\n";
    }
    if (rank != 0) return 0;
  }

  // Every rank loads every point: the same errors everywhere, printed once (by rank 0).
  SweepPlan plan;
  try {
    plan = plan_sweep(spec);
  } catch (const ScenarioError&) {
    if (world && world->rank() != 0) return 2;
    throw;
  }
  const std::size_t n = plan.scenarios.size();

  // Estimate every point before any runs (as `run` does), and refuse the sweep when a point would
  // not fit next to the others running at once. Under MPI every rank uses the smallest MemAvailable
  // and the largest ranks-per-machine of all ranks, so all ranks take the same decision.
  std::vector<Estimate> estimates;
  estimates.reserve(n);
  double reference_wall_s = 0;
  for (const Scenario& s : plan.scenarios) {
    estimates.push_back(estimate_run(s, /*port_counters=*/true));
    reference_wall_s += estimates.back().wall_s;
  }
  // The walls on this machine's speed (they only pace the progress line; memory decides refusals).
  const double speed = machine_speed_for(reference_wall_s);
  for (Estimate& e : estimates) scale_to_machine(e, speed);
  std::optional<double> available = available_memory_bytes();
  unsigned concurrent =
      world ? static_cast<unsigned>(std::max(1, launcher_local_size()))
            : static_cast<unsigned>(std::min<std::size_t>(jobs, std::max<std::size_t>(1, n)));
  if (world) {
    const double smallest = world->min_over_ranks(available.value_or(-1.0));
    available = smallest < 0 ? std::nullopt : std::optional<double>(smallest);
    concurrent = static_cast<unsigned>(-world->min_over_ranks(-static_cast<double>(concurrent)));
  }
  if (!force) {
    const std::vector<std::string> refused =
        sweep_memory_refusals(plan, estimates, concurrent, available);
    if (!refused.empty()) {
      if (rank == 0) {
        for (const auto& why : refused) err << "syncsim sweep: " << why << "\n";
        err << "syncsim sweep: refusing to start: " << refused.size() << " of " << n
            << " points would not fit (MemAvailable in /proc/meminfo or SYNCSIM_MEM_AVAILABLE"
            << (world ? ", smallest over the MPI ranks" : "")
            << "); fewer --jobs, or --force runs it anyway\n";
      }
      return 2;
    }
  }
  const bool progress_on = !quiet && rank == 0 && isatty(STDERR_FILENO) == 1;
  SweepProgress progress(n, progress_on, err);
  {
    std::vector<double> wall;
    for (const Estimate& e : estimates) wall.push_back(e.wall_s);
    progress.set_estimates(
        std::move(wall),
        world ? static_cast<unsigned>(std::max(1, world->size() - 1)) : concurrent);
  }
  std::vector<std::string> rows;
  if (world) {
    if (world->rank() != 0) {
      world->work([&](std::size_t i) {
        try {
          return run_sweep_point(plan, i);
        } catch (const std::exception& e) {
          err << "syncsim sweep: rank " << world->rank() << ", point " << i << ": " << e.what()
              << "\n"
              << std::flush;
          world->abort(1);
        }
      });
      return 0;
    }
    progress.update(0);
    rows = world->coordinate(n, [&](std::size_t done) { progress.update(done); });
  } else {
    progress.update(0);
    rows = run_sweep_local(plan, jobs, [&](std::size_t done) { progress.update(done); });
  }
  progress.finish();

  const auto columns = sweep_columns(plan.spec);
  if (!out_path.empty()) {
    std::ofstream f(out_path, std::ios::binary);
    f << (out_path.ends_with(".json") ? sweep_json(rows) : sweep_csv(columns, rows));
    if (!f) {
      err << "syncsim sweep: cannot write " << out_path << "\n";
      return 1;
    }
  }
  const bool rows_have_rate =
      !rows.empty() && std::find(columns.begin(), columns.end(), "tokens_per_s") != columns.end() &&
      std::find(columns.begin(), columns.end(), "step_time_s") != columns.end();
  if (plan.spec.step && !quiet && rows_have_rate) {
    // Name the best point: the most tokens per second (the shortest step when the batch is fixed),
    // among the points whose layout fits the GPU's memory when the rows say so.
    const bool rows_have_fit =
        std::find(columns.begin(), columns.end(), "fits_memory") != columns.end();
    std::size_t best = 0;
    double best_rate = 0;
    double best_step = 0;
    bool best_fits = false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto row = nlohmann::json::parse(rows[i]);
      const double rate = row.at("tokens_per_s").get<double>();
      const bool fits = !rows_have_fit || row.at("fits_memory").get<bool>();
      // A point that fits beats one that does not; then the higher rate wins.
      if (i == 0 || (fits && !best_fits) || (fits == best_fits && rate > best_rate)) {
        best = i;
        best_rate = rate;
        best_step = row.at("step_time_s").get<double>();
        best_fits = fits;
      }
    }
    err << "syncsim sweep: best point (most tokens/s"
        << (rows_have_fit ? (best_fits ? " of the points that fit the GPU's memory"
                                       : "; no point fits the GPU's memory")
                          : "")
        << ": " << best_rate << ", step " << best_step << " s):";
    for (std::size_t a = 0; a < plan.spec.axes.size(); ++a) {
      err << " " << plan.spec.axes[a].path << "=" << plan.values[best][a];
    }
    err << "\n";
  }
  if (!csv_path.empty()) {
    std::ofstream f(csv_path, std::ios::binary);
    f << sweep_csv(columns, rows);
    if (!f) {
      err << "syncsim sweep: cannot write " << csv_path << "\n";
      return 1;
    }
  }
  if (json) {
    out << sweep_json(rows);
  } else if (csv_path.empty() && out_path.empty()) {
    out << sweep_csv(columns, rows);
  }
  return 0;
}

}  // namespace syncsim::app
