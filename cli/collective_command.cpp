// `syncsim collective [SCENARIO]`: an nccl-tests-style sweep of one collective (all_reduce_perf's
// table), simulated, from NCCL's cost model, or from a calibration profile.
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "run/collective_cmd.hpp"
#include "run/collective_request.hpp"
#include "run/nccl_tests_format.hpp"
#include "scenario/units.hpp"

namespace syncsim::app {

int collective_command(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("syncsim collective [SCENARIO] [options]");
  opts.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>(), "scenario YAML file (default: the built-in scenario)");
  add_override_options(opts, /*with_seed=*/false);
  opts.add_options()(
      "op", po::value<std::string>()->default_value("all_reduce"),
      "all_reduce | reduce_scatter | all_gather | broadcast | reduce | all_to_all | send_recv")(
      "algo", po::value<std::string>(),
      "ring | tree | halving_doubling | hierarchical | pairwise | nvls | nvls_tree | pat | "
      "collnet_direct | collnet_chain | auto (NCCL's cost model picks per size among what the "
      "fabric has: NVLink SHARP, InfiniBand SHARP; default: the scenario's collective.algorithm, "
      "auto; all_to_all and send_recv run pairwise)")(
      "protocol", po::value<std::string>(),
      "LL | LL128 | Simple | auto (default: the scenario's collective.protocol, auto)")(
      "model", po::value<std::string>()->default_value("sim"),
      "sim: simulate on the scenario's fidelity | nccl: NCCL's cost model alone (cheapest) | "
      "calibrated: a profile's fitted line for the op and rank count (the default when the "
      "scenario "
      "has collective.calibration or --calibration is given; simulated, with a warning, where the "
      "profile lacks the line)")("calibration", po::value<std::string>(),
                                 "calibration profile (syncsim calibrate fit --out, "
                                 "syncsim-probe); replaces collective.calibration")(
      "ranks", po::value<uint32_t>()->default_value(0), "ranks = the first N GPUs (0: all)")(
      "min-bytes,b", po::value<std::string>()->default_value("32M"),
      "smallest size; K/M/G/T are powers of 1024 as in nccl-tests, or units like 64MiB, 1GB")(
      "max-bytes,e", po::value<std::string>()->default_value("32M"), "largest size")(
      "step-factor,f", po::value<int64_t>()->default_value(2), "size multiplier between rows")(
      "channels", po::value<uint32_t>(),
      "NCCL channels (default: collective.channels, auto = NCCL's own count)")(
      "chunk-bytes", po::value<std::string>(),
      "pipelining chunk (0: none; default: from the protocol's buffer size and steps)")(
      "root", po::value<uint32_t>()->default_value(0), "broadcast/reduce root, send_recv sender")(
      "step-latency", po::value<std::string>()->default_value("0"),
      "delay before every transfer, e.g. 2us (default 0: the protocol's NVLink/network latencies)")(
      "hbm", po::value<std::string>()->default_value(kDefaultCollectiveHbm),
      "GPU memory bandwidth for reductions (3 bytes of traffic per byte reduced); 0 = free")(
      "threads", po::value<std::string>()->value_name("N"),
      "simulate N sizes at once (default 1), and at packet level run each size's fabric partitions "
      "on the threads the sizes leave (all N for one size); the rows are the same for any N, and "
      "peak memory grows with it")("json", "print the rows as JSON");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  const CommandLine cl = parse_command_line(args, opts, pos);
  const po::variables_map& vm = cl.values;
  if (cl.has("help")) {
    out << opts << "\n";
    return 0;
  }
  CollectiveSweepOptions o;
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
    o.min_bytes = parse_size_flag(vm["min-bytes"].as<std::string>());
    o.max_bytes = parse_size_flag(vm["max-bytes"].as<std::string>());
    o.step_factor = vm["step-factor"].as<int64_t>();
    if (vm.count("channels")) o.channels = vm["channels"].as<uint32_t>();
    if (vm.count("chunk-bytes"))
      o.chunk_bytes = parse_size_flag(vm["chunk-bytes"].as<std::string>());
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
    if (cl.has("threads")) {
      o.threads = parse_positive_count("threads", cl.get<std::string>("threads"));
    }
    o.run.step_latency = parse_time(vm["step-latency"].as<std::string>());
    const std::string hbm = vm["hbm"].as<std::string>();
    o.run.hbm_bytes_per_s = hbm == "0" ? 0.0 : parse_bandwidth(hbm).bytes_per_second();
  } catch (const std::invalid_argument& e) {  // unknown op/algo, UnitError
    throw UsageError(e.what());
  }
  LoadOptions load = load_options(cl);
  load.fabric_only_ok = true;  // the collective is the traffic
  const Scenario scenario = vm.count("scenario")
                                ? load_scenario_file(vm["scenario"].as<std::string>(), load)
                                : load_default_scenario(load);
  CollectiveModelRequest request;
  if (!vm["model"].defaulted()) request.model = vm["model"].as<std::string>();
  if (vm.count("calibration")) request.calibration_file = vm["calibration"].as<std::string>();
  const CollectiveOutcome outcome = run_collective_request(scenario, o, request);
  const CollectiveSweep& sweep = outcome.result.sweep;
  const std::vector<std::string>& warnings = outcome.warnings;
  const models::NcclChannels& ch = sweep.channels;
  if (vm.count("json")) {
    out << collective_json(scenario, outcome).dump(2) << "\n";
  } else {
    for (const std::string& w : warnings) out << "# warning: " << w << "\n";
    if (!outcome.result.calibrated) {
      out << "# syncsim: NCCL channels " << ch.channels
          << (ch.requested ? " (requested; NCCL's own " + std::to_string(ch.default_channels) + ")"
                           : " (auto)")
          << ", NICs per node " << ch.nics_used;
      if (ch.nvls_heads > 0) {
        out << "; NVLS " << ch.nvls_heads << " heads on " << ch.nvls_channels << " channels";
      }
      out << "\n";
    }
    out << format_nccl_tests(sweep.header, sweep.rows);
  }
  return 0;
}

}  // namespace syncsim::app
