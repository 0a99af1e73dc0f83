// syncsim command line: parses arguments, loads scenarios, runs them and prints results.
// Exit codes: 0 success, 2 bad input (scenario or arguments), 1 internal failure.
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/bench.hpp"
#include "cli/calibrate_cmd.hpp"
#include "run/calibrated_collective.hpp"
#include "run/collective_cmd.hpp"
#include "run/estimate.hpp"
#include "run/progress.hpp"
#include "run/result_schema.hpp"
#include "run/runner.hpp"
#include "run/trace.hpp"
#include "cli/plot.hpp"
#include "scenario/scenario_loader.hpp"
#include "run/sweep.hpp"
#include "scenario/units.hpp"
#include "calibration/profile.hpp"
#include "sim/core/check.hpp"

namespace po = boost::program_options;
using namespace syncsim;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

const char* kUsage =
    "usage: syncsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run [SCENARIO]   simulate a scenario (the built-in default when no file is given)\n"
    "  bench            event-queue and packet-forwarding throughput on the reference scenarios\n"
    "  calibrate import|fit|report LOG...  nccl-tests logs -> table / alpha-beta fits / measured vs simulated\n"
    "  calibrate flow [SCENARIO]  fit the flow backend's congestion-control correction to the packet model\n"
    "  collective [SCENARIO]  nccl-tests-style sweep of one collective (all_reduce_perf table)\n"
    "  sweep SCENARIO --vary PATH=V1,V2,...  one row per point of a parameter grid (CSV/JSON; threads, MPI)\n"
    "  plot RESULTS.csv --x COL --y COL --out FILE.svg  render sweep results with gnuplot\n"
    "\n"
    "`syncsim <command> --help` describes a command's options.\n";

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

po::variables_map parse(const std::vector<std::string>& args, const po::options_description& opts,
                        const po::positional_options_description& pos) {
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(opts).positional(pos).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return vm;
}

int cmd_run(const std::vector<std::string>& args) {
  po::options_description opts("syncsim run [SCENARIO] [options]");
  opts.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>(), "scenario YAML file (default: the built-in scenario)")(
      "seed", po::value<uint64_t>(), "override the scenario's seed")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario value: --set dotted.path=value (repeatable; =null removes the key)")(
      "unset", po::value<std::vector<std::string>>()->composing(),
      "remove a scenario key, e.g. --unset workload.fsdp (repeatable; applied before --set)")(
      "json", "print one JSON object instead of the text summary")(
      "list-keys", "print the keys of --json (path, unit, description; the table of docs/cli.md) and exit")(
      "trace", po::value<std::string>(),
      "write the training step as Chrome-trace/Perfetto JSON to this file (workload scenarios)")(
      "verbose,v", "print the pre-run memory/time estimate (stderr)")(
      "force", "run even when the memory estimate exceeds the available memory")(
      "quiet,q", "no progress line on a terminal")(
      "timeseries", po::value<std::string>(),
      "write queue depth, pause state and per-flow rate time series as CSV files into this folder "
      "(packet fidelity; scenario `observe:` picks ports and interval)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const po::variables_map vm = parse(args, opts, pos);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return kExitOk;
  }
  if (vm.count("list-keys")) {
    std::cout << app::result_keys_markdown();
    return kExitOk;
  }
  app::LoadOptions load;
  if (vm.count("seed")) load.seed = vm["seed"].as<uint64_t>();
  if (vm.count("unset")) {
    for (const auto& s : vm["unset"].as<std::vector<std::string>>()) {
      load.overrides.push_back(app::unset_override(s));
    }
  }
  if (vm.count("set")) {
    for (const auto& s : vm["set"].as<std::vector<std::string>>()) {
      load.overrides.push_back(app::parse_override(s));
    }
  }
  app::Scenario scenario = vm.count("scenario")
                               ? app::load_scenario_file(vm["scenario"].as<std::string>(), load)
                               : app::load_default_scenario(load);
  if (vm.count("timeseries")) {
    if (scenario.fidelity != Fidelity::Packet || scenario.workload) {
      throw UsageError("--timeseries needs a packet-fidelity scenario without a workload");
    }
    if (!scenario.observe) scenario.observe.emplace();
    scenario.observe->csv_dir = vm["timeseries"].as<std::string>();
  }
  if (vm.count("trace") && !scenario.workload) {
    throw UsageError("--trace needs a scenario with a workload (a training step to draw)");
  }
  // Estimate before anything is built; refuse what would not fit rather than be OOM-killed.
  const app::Estimate estimate = app::estimate_run(scenario);
  if (vm.count("verbose")) std::cerr << app::to_text(estimate);
  if (!vm.count("force")) {
    if (const auto why = app::refusal(estimate, app::available_memory_bytes())) {
      std::cerr << "syncsim run: " << scenario.source << ": " << *why << "\n";
      return kExitBadInput;
    }
  }
  app::RunOptions run_options;
  run_options.progress = !vm.count("quiet") && app::stderr_is_terminal();
  run_options.estimated_wall_s = estimate.wall_s;
  run_options.expected_sim_s = estimate.sim_time_s;
  app::RunResult result = app::run_scenario(scenario, run_options);
  if (vm.count("trace")) {
    const std::string path = vm["trace"].as<std::string>();
    std::ofstream out(path);
    if (!out) throw UsageError("cannot write the trace to " + path);
    out << app::step_trace(*result.step).dump() << "\n";
  }
  if (vm.count("json")) {
    result.estimate = estimate;
    result.peak_rss_bytes = app::peak_rss_bytes();
    std::cout << app::to_json(result).dump(2) << "\n";
  } else {
    std::cout << app::to_text(result);
  }
  return kExitOk;
}

int cmd_bench(const std::vector<std::string>& args) {
  po::options_description opts("syncsim bench [options]");
  opts.add_options()("help,h", "show this help")(
      "scenarios", po::value<std::string>()->default_value(SYNCSIM_SCENARIO_DIR),
      "folder holding ring-next-leaf-128.yaml and ring-next-leaf-1024.yaml")(
      "hold-events", po::value<uint64_t>()->default_value(20'000'000), "events in the hold model")(
      "hold-pending", po::value<std::size_t>()->default_value(4096), "pending events in the hold model")(
      "repetitions", po::value<int>()->default_value(3), "runs per scenario; the best is reported")(
      "json", "print one JSON object");
  const po::variables_map vm = parse(args, opts, {});
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return kExitOk;
  }
  const bool json = vm.count("json") > 0;
  const auto hold =
      app::bench_hold(vm["hold-pending"].as<std::size_t>(), vm["hold-events"].as<uint64_t>(), 1);
  if (!json) {
    std::cout << std::fixed << std::setprecision(2) << "hold model: " << hold.events << " events, "
              << hold.pending << " pending, " << hold.wall_s << " s, " << hold.events_per_s / 1e6
              << " M events/s\n";
  }
  nlohmann::json out;
  out["hold"] = {{"events", hold.events}, {"pending", hold.pending}, {"wall_s", hold.wall_s},
                 {"events_per_s", hold.events_per_s}};
  const std::string dir = vm["scenarios"].as<std::string>();
  const int reps = vm["repetitions"].as<int>();
  for (const char* name : {"ring-next-leaf-128", "ring-next-leaf-1024"}) {
    const auto r = app::bench_scenario(dir + "/" + name + ".yaml", reps);
    out["scenarios"][name] = {{"wall_s", r.wall_s},          {"packet_hops", r.packet_hops},
                              {"packet_hops_per_s", r.packet_hops_per_s},
                              {"events", r.events},          {"events_per_s", r.events_per_s},
                              {"peak_rss_mib", r.peak_rss_mib}};
    if (!json) {
      std::cout << std::fixed << std::setprecision(3) << name << ": " << r.wall_s << " s (load+build+run, best of "
                << reps << "), " << r.packet_hops << " packet hops, " << std::setprecision(2)
                << r.packet_hops_per_s / 1e6 << " M hops/s, " << r.events_per_s / 1e6
                << " M events/s, peak RSS so far " << std::setprecision(1) << r.peak_rss_mib << " MiB\n";
    }
  }
  if (json) std::cout << out.dump(2) << "\n";
  return kExitOk;
}

int cmd_collective(const std::vector<std::string>& args) {
  po::options_description opts("syncsim collective [SCENARIO] [options]");
  opts.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>(), "scenario YAML file (default: the built-in scenario)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override a scenario value: --set dotted.path=value (repeatable; =null removes the key)")(
      "unset", po::value<std::vector<std::string>>()->composing(),
      "remove a scenario key, e.g. --unset workload.fsdp (repeatable; applied before --set)")(
      "op", po::value<std::string>()->default_value("all_reduce"),
      "all_reduce | reduce_scatter | all_gather | broadcast | reduce | all_to_all | send_recv")(
      "algo", po::value<std::string>(),
      "ring | tree | halving_doubling | hierarchical | pairwise | auto (NCCL's cost model picks "
      "ring or tree per size; default: the scenario's collective.algorithm, auto; all_to_all and "
      "send_recv run pairwise)")(
      "protocol", po::value<std::string>(),
      "LL | LL128 | Simple | auto (default: the scenario's collective.protocol, auto)")(
      "model", po::value<std::string>()->default_value("sim"),
      "sim: simulate on the scenario's fidelity | nccl: NCCL's cost model alone (cheapest) | "
      "calibrated: a profile's fitted line for the op and rank count (the default when the scenario "
      "has collective.calibration or --calibration is given; simulated, with a warning, where the "
      "profile lacks the line)")(
      "calibration", po::value<std::string>(),
      "calibration profile (syncsim calibrate fit --out, syncsim-probe); replaces collective.calibration")(
      "ranks", po::value<uint32_t>()->default_value(0), "ranks = the first N GPUs (0: all)")(
      "min-bytes,b", po::value<std::string>()->default_value("32M"),
      "smallest size; K/M/G/T are powers of 1024 as in nccl-tests, or units like 64MiB, 1GB")(
      "max-bytes,e", po::value<std::string>()->default_value("32M"), "largest size")(
      "step-factor,f", po::value<int64_t>()->default_value(2), "size multiplier between rows")(
      "channels", po::value<uint32_t>(), "parallel rings (default: collective.channels, 1)")(
      "chunk-bytes", po::value<std::string>(),
      "pipelining chunk (0: none; default: from the protocol's buffer size and steps)")(
      "root", po::value<uint32_t>()->default_value(0), "broadcast/reduce root, send_recv sender")(
      "step-latency", po::value<std::string>()->default_value("0"),
      "delay before every transfer, e.g. 2us (default 0: the protocol's NVLink/network latencies)")(
      "hbm", po::value<std::string>()->default_value(app::kDefaultCollectiveHbm),
      "GPU memory bandwidth for reductions (3 bytes of traffic per byte reduced); 0 = free")(
      "json", "print the rows as JSON");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const po::variables_map vm = parse(args, opts, pos);
  if (vm.count("help")) {
    std::cout << opts << "\n";
    return kExitOk;
  }
  app::CollectiveSweepOptions o;
  app::LoadOptions load;
  load.fabric_only_ok = true;  // the collective is the traffic
  try {
    o.op = models::parse_collective_op(vm["op"].as<std::string>());
    if (vm.count("algo")) {
      const std::string algo = vm["algo"].as<std::string>();
      if (algo == "auto") {
        o.auto_algo = true;
      } else {
        o.algo = models::parse_collective_algo(algo);
      }
    }
    o.ranks = vm["ranks"].as<uint32_t>();
    o.min_bytes = app::parse_size_flag(vm["min-bytes"].as<std::string>());
    o.max_bytes = app::parse_size_flag(vm["max-bytes"].as<std::string>());
    o.step_factor = vm["step-factor"].as<int64_t>();
    if (vm.count("channels")) o.channels = vm["channels"].as<uint32_t>();
    if (vm.count("chunk-bytes")) o.chunk_bytes = app::parse_size_flag(vm["chunk-bytes"].as<std::string>());
    if (vm.count("protocol")) {
      const std::string proto = vm["protocol"].as<std::string>();
      if (proto == "auto") {
        o.auto_protocol = true;
      } else {
        o.protocol = models::parse_nccl_protocol(proto);
      }
    }
    const std::string model = vm["model"].as<std::string>();
    if (model != "sim" && model != "nccl" && model != "calibrated") {
      throw UsageError("--model must be sim, nccl or calibrated");
    }
    o.nccl_model = model == "nccl";
    o.root = vm["root"].as<uint32_t>();
    o.run.step_latency = app::parse_time(vm["step-latency"].as<std::string>());
    const std::string hbm = vm["hbm"].as<std::string>();
    o.run.hbm_bytes_per_s = hbm == "0" ? 0.0 : app::parse_bandwidth(hbm).bytes_per_second();
  } catch (const std::invalid_argument& e) {  // unknown op/algo, app::UnitError
    throw UsageError(e.what());
  }
  if (vm.count("unset")) {
    for (const auto& s : vm["unset"].as<std::vector<std::string>>()) {
      load.overrides.push_back(app::unset_override(s));
    }
  }
  if (vm.count("set")) {
    for (const auto& s : vm["set"].as<std::vector<std::string>>()) {
      load.overrides.push_back(app::parse_override(s));
    }
  }
  const app::Scenario scenario = vm.count("scenario")
                                     ? app::load_scenario_file(vm["scenario"].as<std::string>(), load)
                                     : app::load_default_scenario(load);
  // A profile (flag, else the scenario's) makes `calibrated` the default model; an explicit
  // --model sim or nccl still wins.
  std::optional<app::CollectiveCalibration> calibration = scenario.collective_calibration;
  if (vm.count("calibration")) {
    calibration = app::read_collective_calibration(vm["calibration"].as<std::string>());
  }
  const bool calibrated = vm["model"].as<std::string>() == "calibrated" ||
                          (vm["model"].defaulted() && calibration.has_value());
  if (calibrated && !calibration) {
    throw UsageError("--model calibrated needs --calibration FILE or a scenario with collective.calibration");
  }
  app::CalibratedSweep result;
  if (calibrated) {
    result = app::run_calibrated_sweep(scenario, o, *calibration);
  } else {
    result.sweep = app::run_collective_sweep(scenario, o);
  }
  const app::CollectiveSweep& sweep = result.sweep;
  if (vm.count("json")) {
    nlohmann::json j = app::nccl_tests_json(sweep.header, sweep.rows);
    j["model"] = result.calibrated ? "calibrated" : o.nccl_model ? "nccl" : "sim";
    if (calibrated) j["calibration"] = calibration->file;
    j["warnings"] = result.warnings;
    std::cout << j.dump(2) << "\n";
  } else {
    for (const std::string& w : result.warnings) std::cout << "# warning: " << w << "\n";
    std::cout << app::format_nccl_tests(sweep.header, sweep.rows);
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kExitBadInput : kExitOk;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "run") return cmd_run(args);
    if (command == "bench") return cmd_bench(args);
    if (command == "calibrate") return app::calibrate_main(args, std::cout);
    if (command == "collective") return cmd_collective(args);
    if (command == "sweep") return app::sweep_main(args, std::cout, std::cerr);
    if (command == "plot") return app::plot_main(args, std::cout, std::cerr);
    std::cerr << "syncsim: unknown command \"" << command << "\"\n" << kUsage;
    return kExitBadInput;
  } catch (const app::ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const app::CollectiveUsageError& e) {
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const calibration::ParseError& e) {  // nccl-tests log: "file:line: expected, found"
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const calibration::FitError& e) {
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const calibration::ProfileError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const app::CalibrateUsageError& e) {
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const app::PlotError& e) {  // gnuplot missing or failing (calibrate report --plot)
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitInternal;
  } catch (const UsageError& e) {
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const InternalError& e) {
    std::cerr << "syncsim: " << e.what() << "\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "syncsim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
