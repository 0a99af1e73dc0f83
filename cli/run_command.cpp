// `syncsim run [SCENARIO]`: load, estimate (refuse what would not fit), simulate, print.
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <thread>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "models/step_bound.hpp"
#include "run/chakra_export.hpp"
#include "run/estimate.hpp"
#include "run/machine_speed.hpp"
#include "run/port_counters.hpp"
#include "run/progress.hpp"
#include "run/result_schema.hpp"
#include "run/runner.hpp"
#include "run/threads_advice.hpp"
#include "run/trace.hpp"

namespace syncsim::app {

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  po::options_description opts("syncsim run [SCENARIO] [options]");
  opts.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>(), "scenario YAML file (default: the built-in scenario)");
  add_override_options(opts, /*with_seed=*/true);
  opts.add_options()("json", "print one JSON object instead of the text summary")(
      "list-keys",
      "print the keys of --json (path, unit, description; the table of docs/cli.md) and exit")(
      "list-counters", "print the columns of --counters (the table of docs/cli.md) and exit")(
      "trace", po::value<std::string>(),
      "write the training step as Chrome-trace/Perfetto JSON to this file (workload scenarios)")(
      "chakra-out", po::value<std::string>(),
      "write the simulated DDP or FSDP step as a Chakra execution trace, one DIR/syncsim.<rank>.et "
      "file "
      "per rank (docs/chakra.md)")("verbose,v", "print the pre-run memory/time estimate (stderr)")(
      "force", "run even when the memory estimate exceeds the available memory")(
      "strict-memory",
      "exit 2 instead of printing the result when the workload's layout does not fit the GPU's "
      "memory (memory_per_gpu_bytes > gpu_memory_bytes; without it a warning says so)")(
      "quiet,q", "no progress line on a terminal")(
      "threads", po::value<std::string>()->value_name("N"),
      "run a training step's private idle-fabric simulations (DDP buckets' timings, the closed "
      "forms' collectives; at packet level each one's fabric partitions on the threads the "
      "others leave), or a packet-level run's fabric partitions (traffic, and a step, jobs or a "
      "Chakra replay whose "
      "collectives run live over RoCE), on N threads (default 1); results are identical for any "
      "N, peak memory grows with it; `auto`: as many as the estimate says help, within the "
      "available memory")(
      "min-window-events", po::value<std::string>()->value_name("N"),
      "a packet-level run's window goes to as many threads as give each N of the events it is "
      "expected to hold, to one below 2 N (default 128, measured on a 2-vCPU VM; 0: every window "
      "to every thread); results are identical for any N")(
      "timeseries", po::value<std::string>(),
      "write queue depth, pause state and per-flow rate time series as CSV files into this folder "
      "(packet fidelity; scenario `observe:` picks ports and interval)")(
      "counters", po::value<std::string>(),
      "write per port x priority counters (bytes, packets, PFC pauses and paused time, ECN marks, "
      "drops by reason, queue depth mean/p99/max) to this CSV file, one row per egress port and "
      "priority (packet fidelity; columns in docs/cli.md)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const CommandLine cl = parse_command_line(args, opts, pos);
  if (cl.has("help")) {
    out << opts << "\n";
    return 0;
  }
  if (cl.has("list-keys")) {
    out << result_keys_markdown();
    return 0;
  }
  if (cl.has("list-counters")) {
    out << port_counters_csv_columns();
    return 0;
  }
  const LoadOptions load = load_options(cl);
  Scenario scenario = cl.has("scenario") ? load_scenario_file(cl.get<std::string>("scenario"), load)
                                         : load_default_scenario(load);
  if (cl.has("timeseries")) {
    if (scenario.fidelity != Fidelity::Packet || scenario.workload) {
      throw UsageError("--timeseries needs a packet-fidelity scenario without a workload");
    }
    if (!scenario.observe) scenario.observe.emplace();
    scenario.observe->csv_dir = cl.get<std::string>("timeseries");
  }
  if (cl.has("counters") && scenario.fidelity != Fidelity::Packet) {
    throw UsageError("--counters needs a packet-fidelity scenario (this one runs " +
                     std::string(fidelity_name(scenario.fidelity)) + ")");
  }
  if (cl.has("trace") && !scenario.workload && scenario.jobs.empty()) {
    throw UsageError("--trace needs a scenario with a workload or jobs (training steps to draw)");
  }
  if (cl.has("chakra-out") && !scenario.workload) {
    throw UsageError("--chakra-out needs a scenario with a DDP workload (a training step)");
  }
  // Estimate before anything is built; refuse what would not fit rather than be OOM-killed.
  const std::optional<double> available = available_memory_bytes();
  const bool auto_threads_asked = cl.has("threads") && cl.get<std::string>("threads") == "auto";
  // The wall on this machine's speed (run/machine_speed.hpp: a probe sized to the run).
  EstimateOptions one{cl.has("counters"), 1, cl.has("json"), 1};
  Estimate one_thread = estimate_run(scenario, one);
  one.machine_speed = machine_speed_for(one_thread.wall_s);
  scale_to_machine(one_thread, one.machine_speed);
  uint32_t threads = 1;
  if (auto_threads_asked) {
    threads =
        auto_threads(scenario, one_thread, one, std::thread::hardware_concurrency(), available);
  } else if (cl.has("threads")) {
    const std::string value = cl.get<std::string>("threads");
    try {
      threads = parse_positive_count("threads", value);
    } catch (const UsageError&) {
      throw UsageError("--threads: expected a positive integer (at most 1024) or auto, found \"" +
                       value + "\"");
    }
  }
  EstimateOptions asked = one;
  asked.threads = threads;
  const Estimate estimate = threads == 1 ? one_thread : estimate_run(scenario, asked);
  if (cl.has("verbose")) err << to_text(estimate);
  if (auto_threads_asked && !cl.has("quiet")) {
    char text[160];
    std::snprintf(text, sizeof text, "--threads auto: %u thread%s (estimated %.0f s, %.1f GiB)",
                  threads, threads == 1 ? "" : "s", estimate.wall_s,
                  estimate.memory_bytes / (1024.0 * 1024.0 * 1024.0));
    err << "syncsim run: note: " << text << "\n";
  }
  if (!cl.has("force")) {
    if (const auto why = refusal(estimate, available)) {
      err << "syncsim run: " << scenario.source << ": " << *why << "\n";
      return 2;
    }
  }
  if (!cl.has("threads") && !cl.has("quiet")) {
    const auto advice =
        threads_advice(scenario, estimate, one, std::thread::hardware_concurrency(), available);
    if (advice) err << "syncsim run: note: " << to_text(*advice, estimate) << "\n";
  }
  RunOptions run_options;
  run_options.threads = threads;
  if (cl.has("min-window-events")) {
    run_options.min_window_events_per_thread =
        parse_count("min-window-events", cl.get<std::string>("min-window-events"));
  }
  run_options.progress = !cl.has("quiet") && stderr_is_terminal();
  run_options.estimated_wall_s = estimate.wall_s;
  run_options.expected_sim_s = estimate.sim_time_s;
  run_options.port_counters = cl.has("counters");
  RunResult result = run_scenario(scenario, run_options);
  if (cl.has("strict-memory") && result.step && !models::fits_gpu_memory(*result.step)) {
    err << "syncsim run: " << scenario.source
        << ": workload: the layout does not fit the GPU's memory (--strict-memory): about "
        << std::fixed << std::setprecision(1) << result.step->memory_per_gpu_bytes / 1e9
        << " GB per GPU, the GPU has " << result.step->gpu_memory_bytes / 1e9
        << " GB; shard more (parallelism: fsdp, tensor/pipeline parallelism) or recompute\n";
    return 2;
  }
  if (cl.has("trace")) {
    const std::string path = cl.get<std::string>("trace");
    std::ofstream file(path);
    if (!file) throw UsageError("cannot write the trace to " + path);
    file << (result.jobs.empty() ? step_trace(*result.step, 64, result.faults)
                                 : jobs_trace(result.jobs))
                .dump()
         << "\n";
  }
  if (cl.has("chakra-out")) {
    try {
      write_step_chakra(*result.step, cl.get<std::string>("chakra-out"));
    } catch (const std::exception& e) {
      throw UsageError(std::string("--chakra-out: ") + e.what());
    }
  }
  if (cl.has("counters")) {
    const std::string path = cl.get<std::string>("counters");
    std::ofstream file(path);
    if (!file) throw UsageError("cannot write the counters to " + path);
    file << port_counters_csv(result.port_counters);
  }
  if (cl.has("json")) {
    result.estimate = estimate;
    result.peak_rss_bytes = peak_rss_bytes();
    out << to_json(result).dump(2) << "\n";
  } else {
    out << to_text(result);
  }
  return 0;
}

}  // namespace syncsim::app
