#include "cli/calibrate_flow.hpp"

#include <bit>
#include <cmath>
#include <cstdio>
#include <fstream>
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

constexpr uint32_t kHostsPerLeaf = 8;
constexpr uint32_t kHosts = 2 * kHostsPerLeaf;

// The scenario's settings on the small reference fabric, with `traffic` and nothing else.
Scenario reference(const Scenario& base, double oversubscription,
                   std::vector<models::TrafficSpec> traffic) {
  Scenario s;
  s.name = base.name + " (flow calibration)";
  s.source = base.source;
  s.seed = base.seed;
  s.fabric = base.fabric;
  s.network = base.network;
  s.fabric.kind = topo::TopologyKind::SpineLeaf;
  s.fabric.host = topo::HostParams{};
  s.fabric.spine_leaf = topo::SpineLeafParams{};
  s.fabric.spine_leaf.leaves = 2;
  s.fabric.spine_leaf.hosts_per_leaf = kHostsPerLeaf;
  s.fabric.spine_leaf.oversubscription = oversubscription;
  s.traffic = std::move(traffic);
  return s;
}

uint8_t traffic_priority(const Scenario& s) {
  // The first lossless class when PFC is on: where RoCE traffic (and DCQCN) runs.
  if (s.network.pfc.enabled && s.network.pfc.lossless_mask != 0) {
    return static_cast<uint8_t>(
        std::countr_zero(static_cast<unsigned>(s.network.pfc.lossless_mask)));
  }
  return 0;
}

double last_completion_s(const Scenario& s, Fidelity fidelity,
                         const net::FlowCcCorrection& correction) {
  Scenario run = s;
  run.fidelity = fidelity;
  run.flow_cc = correction;
  const RunResult r = run_scenario(run);
  if (r.messages_completed != r.messages) {
    throw calibration::FitError("flow calibration: " + std::string(fidelity_name(fidelity)) +
                                " run left " + std::to_string(r.messages - r.messages_completed) +
                                " messages unfinished (drops without a reliable transport?)");
  }
  return r.fct.max_s;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

FlowCalibration calibrate_flow(const Scenario& scenario, int64_t message_bytes) {
  if (message_bytes < 16) throw CalibrateUsageError("--size: expected at least 16B");
  FlowCalibration out;
  out.message_bytes = message_bytes;
  const uint8_t priority = traffic_priority(scenario);
  const Bytes size{message_bytes};

  struct Case {
    FlowCalibrationCase result;
    Scenario scenario;
  };
  std::vector<Case> cases;
  auto add = [&cases](std::string name, uint32_t contended_flows, Scenario s) {
    Case c;
    c.result.name = std::move(name);
    c.result.contended_flows = contended_flows;
    c.result.fitted = contended_flows > 0;
    c.scenario = std::move(s);
    cases.push_back(std::move(c));
  };
  for (uint32_t n : {2u, 4u, 8u, 15u}) {
    models::TrafficSpec t;
    t.pattern = models::TrafficPattern::Incast;
    t.size = size;
    t.priority = priority;
    t.senders = n;
    t.receiver = 0;
    add("incast-" + std::to_string(n), n, reference(scenario, 1.0, {t}));
  }
  {
    models::TrafficSpec t;
    t.pattern = models::TrafficPattern::Permutation;
    t.size = size;
    t.priority = priority;
    add("permutation-2:1", 0, reference(scenario, 2.0, {t}));
  }
  {
    models::TrafficSpec t;
    t.pattern = models::TrafficPattern::AllToAll;
    t.size = Bytes{std::max<int64_t>(1, message_bytes / kHosts)};
    t.priority = priority;
    add("all_to_all", 0, reference(scenario, 1.0, {t}));
  }

  // The receiver's host link is each incast's bottleneck; the flow model drains it at its payload
  // rate (bandwidth * mtu / (mtu + header)).
  const net::LinkParams& host = scenario.fabric.links.host;
  const double payload_Bps = host.bandwidth.bytes_per_second() *
                             static_cast<double>(host.mtu.count()) /
                             static_cast<double>(host.mtu.count() + host.header.count());
  std::vector<calibration::ContendedSample> samples;
  for (Case& c : cases) {
    c.result.packet_s = last_completion_s(c.scenario, Fidelity::Packet, {});
    c.result.flow_s = last_completion_s(c.scenario, Fidelity::Flow, {});
    if (c.result.fitted) {
      samples.push_back({.flows = c.result.contended_flows,
                         .flow_time_s = c.result.flow_s,
                         .flow_drain_s = static_cast<double>(c.result.contended_flows) *
                                         static_cast<double>(message_bytes) / payload_Bps,
                         .packet_time_s = c.result.packet_s});
    }
  }
  out.fit = calibration::fit_contended_efficiency(samples);
  const net::FlowCcCorrection corrected{.enabled = true,
                                        .contended_efficiency = out.fit.contended_efficiency};
  for (Case& c : cases) {
    c.result.corrected_s = last_completion_s(c.scenario, Fidelity::Flow, corrected);
    out.cases.push_back(c.result);
  }
  return out;
}

std::string flow_calibration_text(const FlowCalibration& c) {
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

nlohmann::json flow_calibration_json(const FlowCalibration& c) {
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

std::string flow_calibration_yaml(const FlowCalibration& c, const std::string& source) {
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
  LoadOptions load;
  try {
    load = load_options(cl);
  } catch (const std::exception& e) {
    throw CalibrateUsageError(e.what());  // already names --set or --unset
  }
  const Scenario scenario =
      scenario_path.empty() ? load_default_scenario(load) : load_scenario_file(scenario_path, load);
  const FlowCalibration c = calibrate_flow(scenario, size);
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
