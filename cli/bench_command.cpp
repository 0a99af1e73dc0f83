// `syncsim bench`: event-queue and packet-forwarding throughput on the reference scenarios.
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/bench.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "run/machine_speed.hpp"

namespace syncsim::app {

namespace {

// The source tree's scenarios/ (its path is compiled in), else ./scenarios: found when the
// command runs, so `bench --help` shows no path of the machine that built it.
std::string default_scenario_dir() {
  const std::filesystem::path source_tree = SYNCSIM_SCENARIO_DIR;
  std::error_code ec;
  if (std::filesystem::is_directory(source_tree, ec)) return source_tree.string();
  return "scenarios";
}

}  // namespace

int bench_command(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("syncsim bench [options]");
  opts.add_options()("help,h", "show this help")(
      "scenarios", po::value<std::string>(),
      "folder holding ring-next-leaf-128.yaml, ring-next-leaf-1024.yaml, "
      "ring-next-leaf-128-dcqcn.yaml and default.yaml (default: the scenarios/ directory of the "
      "source tree)")("hold-events", po::value<uint64_t>()->default_value(20'000'000),
                      "events in the hold model")("hold-pending",
                                                  po::value<std::size_t>()->default_value(4096),
                                                  "pending events in the hold model")(
      "repetitions", po::value<int>()->default_value(3), "runs per scenario; the best is reported")(
      "threads", po::value<std::string>()->value_name("N"),
      "threads of the threads case (run --threads; default: the machine's cores, at least 2)")(
      "json", "print one JSON object");
  const CommandLine cl = parse_command_line(args, opts);
  const po::variables_map& vm = cl.values;
  if (cl.has("help")) {
    out << opts << "\n";
    return 0;
  }
  const bool json = vm.count("json") > 0;
  const auto hold =
      bench_hold(vm["hold-pending"].as<std::size_t>(), vm["hold-events"].as<uint64_t>(), 1);
  if (!json) {
    out << std::fixed << std::setprecision(2) << "hold model: " << hold.events << " events, "
        << hold.pending << " pending, " << hold.wall_s << " s, " << hold.events_per_s / 1e6
        << " M events/s";
    // With the default 4,096 pending, the same measure the estimate's machine speed is.
    if (hold.pending == 4096) {
      out << " (" << hold.events_per_s / kReferenceHoldEventsPerS
          << "x the machine the estimate's costs were measured on)";
    }
    out << "\n";
  }
  nlohmann::json report;
  report["hold"] = {{"events", hold.events},
                    {"pending", hold.pending},
                    {"wall_s", hold.wall_s},
                    {"events_per_s", hold.events_per_s},
                    {"speed_vs_estimate_reference", hold.events_per_s / kReferenceHoldEventsPerS}};
  const std::string dir =
      cl.has("scenarios") ? cl.get<std::string>("scenarios") : default_scenario_dir();
  const int reps = vm["repetitions"].as<int>();
  // The reference cases: the ring-next-leaf runs as shipped (one ACK per 16 data packets), with
  // one ACK per data packet (htsim's RoCE driver acknowledges each), and the 128-host run lossless
  // (PFC, ECN, DCQCN).
  struct Case {
    const char* name;
    const char* file;
    std::vector<std::string> overrides;
  };
  const std::string ack_every_packet = "fabric.transport.go_back_n.ack_every=1";
  const std::vector<Case> cases = {
      {"ring-next-leaf-128", "ring-next-leaf-128", {}},
      {"ring-next-leaf-1024", "ring-next-leaf-1024", {}},
      {"ring-next-leaf-128 ack_every=1", "ring-next-leaf-128", {ack_every_packet}},
      {"ring-next-leaf-1024 ack_every=1", "ring-next-leaf-1024", {ack_every_packet}},
      {"ring-next-leaf-128-dcqcn", "ring-next-leaf-128-dcqcn", {}},
  };
  std::vector<NamedBenchResult> results;
  for (const Case& c : cases) {
    const auto r = bench_scenario(dir + "/" + c.file + ".yaml", c.overrides, reps);
    results.push_back({c.name, r});
    nlohmann::json row = {{"file", std::string(c.file) + ".yaml"},
                          {"overrides", c.overrides},
                          {"wall_s", r.wall_s},
                          {"packet_hops", r.packet_hops},
                          {"packet_hops_per_s", r.packet_hops_per_s},
                          {"events", r.events},
                          {"events_per_s", r.events_per_s},
                          {"peak_rss_mib", r.peak_rss_mib}};
    report["scenarios"][c.name] = row;
    if (!json) {
      out << std::fixed << std::setprecision(3) << c.name << ": " << r.wall_s
          << " s (load+build+run, best of " << reps << "), " << r.packet_hops << " packet hops, "
          << std::setprecision(2) << r.packet_hops_per_s / 1e6 << " M hops/s, "
          << r.events_per_s / 1e6 << " M events/s, peak RSS " << std::setprecision(1)
          << r.peak_rss_mib << " MiB\n";
    }
  }
  nlohmann::json targets = nlohmann::json::array();
  for (const BenchTarget& t : bench_targets(results)) {
    targets.push_back({{"figure", t.figure},
                       {"value", t.value},
                       {"target", t.target},
                       {"at_least", t.at_least},
                       {"met", t.met()}});
    if (!json) {
      // Rates in millions, the rest as they are.
      const double scale = t.target >= 1e5 ? 1e6 : 1;
      const char* unit = t.target >= 1e5 ? " M" : "";
      out << std::setprecision(2) << "target: " << t.figure << " " << t.value / scale << unit
          << (t.at_least ? ", at least " : ", under ") << t.target / scale << unit
          << (t.met() ? ": met\n" : ": not met\n");
    }
  }
  report["targets"] = targets;
  // The threads case: a DDP step (the default scenario's, 64 GPUs, as DDP) on one thread and on
  // N (`run --threads`): its private idle-fabric simulations at once. The step must come out the
  // same; the bench fails otherwise.
  const unsigned threads = cl.has("threads")
                               ? parse_positive_count("threads", cl.get<std::string>("threads"))
                               : std::max(2U, std::thread::hardware_concurrency());
  const std::vector<std::string> ddp = {"workload.parallelism=ddp"};
  const auto one = bench_scenario(dir + "/default.yaml", ddp, reps, 1);
  const auto many = bench_scenario(dir + "/default.yaml", ddp, reps, threads);
  if (many.step_s != one.step_s) {
    throw std::logic_error("bench: the DDP step on " + std::to_string(threads) +
                           " threads differs from one thread's");
  }
  report["threads"] = {{"file", "default.yaml"},
                       {"overrides", ddp},
                       {"threads", threads},
                       {"wall_1_thread_s", one.wall_s},
                       {"wall_s", many.wall_s},
                       {"speedup", one.wall_s / many.wall_s},
                       {"peak_rss_mib_1_thread", one.peak_rss_mib},
                       {"peak_rss_mib", many.peak_rss_mib},
                       {"step_s", many.step_s}};
  if (!json) {
    out << std::fixed << std::setprecision(3) << "default.yaml as DDP, " << threads
        << " threads: " << many.wall_s << " s against " << one.wall_s << " s on one (best of "
        << reps << "), speed-up " << std::setprecision(2) << one.wall_s / many.wall_s
        << ", peak RSS " << std::setprecision(1) << many.peak_rss_mib << " MiB against "
        << one.peak_rss_mib << " MiB, the same step\n";
  }
  // The packet threads case: ring-next-leaf-1024 as shipped, its fabric's partitions in windows
  // on one thread and on N (`run --threads` on traffic). The run must come out the same.
  const auto packet_one = bench_scenario(dir + "/ring-next-leaf-1024.yaml", {}, reps, 1);
  const auto packet_many = bench_scenario(dir + "/ring-next-leaf-1024.yaml", {}, reps, threads);
  if (packet_many.sim_time_s != packet_one.sim_time_s ||
      packet_many.packet_hops != packet_one.packet_hops ||
      packet_many.events != packet_one.events) {
    throw std::logic_error("bench: ring-next-leaf-1024 on " + std::to_string(threads) +
                           " threads differs from one thread's");
  }
  report["packet_threads"] = {{"file", "ring-next-leaf-1024.yaml"},
                              {"threads", threads},
                              {"partitions", packet_many.partitions},
                              {"wall_1_thread_s", packet_one.wall_s},
                              {"wall_s", packet_many.wall_s},
                              {"speedup", packet_one.wall_s / packet_many.wall_s},
                              {"speedup_bound", packet_many.speedup_bound},
                              {"packet_hops", packet_many.packet_hops},
                              {"packet_hops_per_s", packet_many.packet_hops_per_s},
                              {"peak_rss_mib_1_thread", packet_one.peak_rss_mib},
                              {"peak_rss_mib", packet_many.peak_rss_mib}};
  if (!json) {
    out << std::fixed << std::setprecision(3) << "ring-next-leaf-1024 in " << packet_many.partitions
        << " partitions, " << threads << " threads: " << packet_many.wall_s << " s against "
        << packet_one.wall_s << " s on one (best of " << reps << "), speed-up "
        << std::setprecision(2) << packet_one.wall_s / packet_many.wall_s
        << " (its windows' load allows " << packet_many.speedup_bound << "), "
        << packet_many.packet_hops_per_s / 1e6 << " M hops/s, peak RSS " << std::setprecision(1)
        << packet_many.peak_rss_mib << " MiB, the same run\n";
  }
  if (json) out << report.dump(2) << "\n";
  return 0;
}

}  // namespace syncsim::app
