#include "cli/calibrate_flow.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "cli/calibrate_cmd.hpp"
#include "cli/command_line.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "scenario/units.hpp"

namespace syncsim::app {

namespace {

constexpr const char* kUsage =
    "usage: syncsim calibrate flow [SCENARIO] [--set PATH=V]... [--size BYTES] [--json] [--out "
    "FILE]\n"
    "\n"
    "  Fits fabric.flow.cc_correction (the flow backend's efficiency of contended links) against "
    "the\n"
    "  packet model with the scenario's links, buffers, PFC, ECN and DCQCN (the built-in default\n"
    "  scenario when none is given): N->1 incasts (N = 2, 4, 8, 15) on a 2-leaf x 8-host "
    "spine-leaf\n"
    "  fabric are fitted; a 2:1 oversubscribed permutation and an all_to_all are held out.\n";

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string flow_calibration_text(const calibration::FlowCalibration& c) {
  std::ostringstream os;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-16s %6s %12s %12s %8s %12s %8s\n", "case", "fitted",
                "packet_us", "flow_us", "flow_err", "corrected_us", "corr_err");
  os << buf;
  for (const auto& k : c.cases) {
    std::snprintf(buf, sizeof buf, "%-16s %6s %12.2f %12.2f %+7.1f%% %12.2f %+7.1f%%\n",
                  k.name.c_str(), k.fitted ? "yes" : "no", k.packet_s * 1e6, k.flow_s * 1e6,
                  (k.flow_s / k.packet_s - 1) * 100, k.corrected_s * 1e6,
                  (k.corrected_s / k.packet_s - 1) * 100);
    os << buf;
  }
  os << "contended_efficiency " << fmt("%.4f", c.fit.contended_efficiency)
     << (c.fit.clamped ? " (clamped to (0, 1])" : "") << "  efficiency(n) = 1 - "
     << fmt("%.4f", 1 - c.fit.contended_efficiency) << " * (1 - 1/n)"
     << "  fitted max rel error: uncorrected " << fmt("%.4f", c.fit.uncorrected_max_rel_error)
     << ", corrected " << fmt("%.4f", c.fit.corrected_max_rel_error) << "\n"
     << "apply: --set fabric.flow.cc_correction.contended_efficiency="
     << fmt("%.4f", c.fit.contended_efficiency) << "  (or --out FILE for the YAML snippet)\n";
  return os.str();
}

nlohmann::json flow_calibration_json(const calibration::FlowCalibration& c) {
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& k : c.cases) {
    cases.push_back({{"case", k.name},
                     {"contended_flows", k.contended_flows},
                     {"fitted", k.fitted},
                     {"packet_s", k.packet_s},
                     {"flow_s", k.flow_s},
                     {"corrected_s", k.corrected_s},
                     {"flow_rel_error", k.flow_s / k.packet_s - 1},
                     {"corrected_rel_error", k.corrected_s / k.packet_s - 1}});
  }
  return {{"message_bytes", c.message_bytes},
          {"contended_efficiency", c.fit.contended_efficiency},
          {"clamped", c.fit.clamped},
          {"fitted_uncorrected_max_rel_error", c.fit.uncorrected_max_rel_error},
          {"fitted_corrected_max_rel_error", c.fit.corrected_max_rel_error},
          {"fitted_corrected_rms_rel_error", c.fit.corrected_rms_rel_error},
          {"cases", cases}};
}

std::string flow_calibration_yaml(const calibration::FlowCalibration& c,
                                  const std::string& source) {
  std::ostringstream os;
  os << "# syncsim calibrate flow " << source << " (messages of " << c.message_bytes << " B)\n"
     << "# fitted on N->1 incasts; max relative error of the last completion against the packet "
        "model:\n"
     << "#   uncorrected " << fmt("%.4f", c.fit.uncorrected_max_rel_error) << ", corrected "
     << fmt("%.4f", c.fit.corrected_max_rel_error) << "\n"
     << "fabric:\n"
     << "  flow:\n"
     << "    cc_correction: {contended_efficiency: " << fmt("%.4f", c.fit.contended_efficiency)
     << "}\n";
  return os.str();
}

int calibrate_flow_main(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")(
      "size", po::value<std::string>(),
      "message size of each incast sender and permutation message (default 1MiB; all_to_all sends "
      "size/16 to each peer)");
  add_override_options(opts, /*with_seed=*/false);
  opts.add_options()("json", "print JSON instead of text")(
      "out", po::value<std::string>(),
      "write the fitted `fabric: flow: cc_correction:` YAML snippet");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value<std::vector<std::string>>(), "scenario YAML file");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("scenario", -1);
  const CommandLine cl = parse_command_line<CalibrateUsageError>(args, all, pos);
  if (cl.has("help")) {
    print_help(out, kUsage, opts);
    return 0;
  }
  const std::vector<std::string> scenarios = cl.all("scenario");
  if (scenarios.size() > 1) {
    throw CalibrateUsageError("expected one SCENARIO, found also \"" + scenarios[1] + "\"\n" +
                              kUsage);
  }
  const std::string scenario_path = scenarios.empty() ? std::string() : scenarios[0];
  const bool json = cl.has("json");
  const std::string out_path = cl.has("out") ? cl.get<std::string>("out") : std::string();
  int64_t size = int64_t{1} << 20;
  if (cl.has("size")) {
    const std::string v = cl.get<std::string>("size");
    try {
      size = parse_bytes(v).count();
    } catch (const std::exception& e) {
      throw CalibrateUsageError("--size: expected a size like 1MiB, found \"" + v +
                                "\": " + e.what());
    }
  }
  if (size < 16) {
    throw CalibrateUsageError("--size: expected at least 16B, found " + std::to_string(size) + "B");
  }
  LoadOptions load;
  try {
    load = load_options(cl);
  } catch (const std::exception& e) {
    throw CalibrateUsageError(e.what());  // already names --set or --unset
  }
  const Scenario scenario =
      scenario_path.empty() ? load_default_scenario(load) : load_scenario_file(scenario_path, load);
  const calibration::FlowCalibration c =
      calibration::calibrate_flow(scenario_network(scenario), size, scenario.seed);
  if (!out_path.empty()) {
    std::ofstream f(out_path);
    if (!f) throw CalibrateUsageError("--out: cannot write \"" + out_path + "\"");
    f << flow_calibration_yaml(c, scenario_path.empty() ? "<built-in default>" : scenario_path);
    if (!f) throw CalibrateUsageError("--out: cannot write \"" + out_path + "\"");
  }
  if (json) {
    out << flow_calibration_json(c).dump(2) << "\n";
  } else {
    out << flow_calibration_text(c);
  }
  return 0;
}

}  // namespace syncsim::app
