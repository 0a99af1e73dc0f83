// The top-level loader: parse, apply --set overrides, read the sections in document order, then
// validate the whole scenario. Each section has its own reader (section_readers.hpp).
#include "scenario/scenario_loader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>

#include "models/nccl_channels.hpp"
#include "scenario/default_scenario.hpp"
#include "scenario/physical_parameters.hpp"
#include "scenario/section_readers.hpp"

namespace syncsim::app {

namespace {

std::string format_what(const std::string& file, int line, int column, const std::string& path,
                        const std::string& message) {
  std::string out = file;
  if (line > 0) {
    out.append(":").append(std::to_string(line)).append(":").append(std::to_string(column));
  }
  out += ": ";
  if (!path.empty()) {
    out.append(path).append(": ");
  }
  return out.append(message);
}

}  // namespace

ScenarioError::ScenarioError(std::string file, int line, int column, std::string path,
                             std::string message)
    : std::runtime_error(format_what(file, line, column, path, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      path_(std::move(path)),
      message_(std::move(message)) {}

namespace {

using yaml_reader::MapView;
using yaml_reader::OverriddenTree;
using yaml_reader::Reader;

const std::vector<std::pair<std::string_view, Fidelity>> kFidelities{
    {"packet", Fidelity::Packet},
    {"analytic", Fidelity::Analytic},
    {"flow", Fidelity::Flow},
};

// `workload.channels`, kept from before there was one channel count for everything: it sets
// collective.channels (which the step, `syncsim collective` and `report:` all use), with a warning.
void read_channels_alias(const Reader& in, const MapView& top, Scenario& s) {
  const YAML::Node* w = top.find("workload");
  if (w == nullptr || !w->IsMap() || !(*w)["channels"]) return;
  const YAML::Node v = (*w)["channels"];
  const std::string path = "workload.channels";
  std::optional<uint32_t> channels;
  if (!(v.IsScalar() && v.Scalar() == "auto")) channels = in.read_u32(v, path, 1);
  const YAML::Node* c = top.find("collective");
  if (c != nullptr && c->IsMap() && (*c)["channels"] && s.collective.channels != channels) {
    in.fail(path, v,
            "expected the same value as collective.channels (workload.channels is its alias), "
            "found a different one");
  }
  s.collective.channels = channels;
  s.load_warnings.push_back(in.warning_at(
      path, v,
      "workload.channels is an alias of collective.channels, which the step, `syncsim "
      "collective` and report: share; write collective.channels"));
}

// GPUs behind one PCIe switch, where host-staged copies (roce_host_staged, tcp) cross PCIe and
// host memory: fabric.host.gpus_per_pcie_switch, else the GPU preset's server design, capped at
// fabric.host.gpus.
//   a100: 2. DGX A100 User Guide (system topology): four PCIe Gen4 switches, each with two A100s
//     and two ConnectX-6 compute NICs.
//   h100, h200: 1. DGX H100/H200 User Guide, "Network Modules" table: one ConnectX-7 per GPU
//     (OSFP port, CX device, GPU); each ConnectX-7 has an integrated PCIe Gen5 switch through which
//     its GPU reaches the CPU, in place of DGX A100's four PCIe switches (NVIDIA, GTC 2022
//     DGX H100 block diagram; ConnectX-7 datasheet: "Integrated PCIe switch").
//   b200, gb200: 2, the HGX pattern of two GPUs per PCIe switch (not checked against a published
//     topology; give the key to state it).
void resolve_pcie_switches(const Reader& in, const YAML::Node& fabric, Scenario& s) {
  const uint32_t gpus = std::max<uint32_t>(1, s.fabric.host.gpus);
  uint32_t& per_switch = s.network.transport.staging.gpus_per_pcie_switch;
  if (fabric.IsMap() && fabric["host"] && fabric["host"].IsMap() &&
      fabric["host"]["gpus_per_pcie_switch"]) {
    const YAML::Node at = fabric["host"]["gpus_per_pcie_switch"];
    const std::string path = "fabric.host.gpus_per_pcie_switch";
    per_switch = in.read_u32(at, path, 1);
    if (per_switch > gpus) {
      in.fail(path, at,
              "expected at most fabric.host.gpus (" + std::to_string(gpus) +
                  ") GPUs behind one PCIe switch, found " + std::to_string(per_switch));
    }
    return;
  }
  const std::string& name = s.host_gpu.name;
  const uint32_t preset = name == "h100" || name == "h200" ? 1 : 2;
  per_switch = std::min(preset, gpus);
}

// The hosts' GPU: fabric.host.gpu or workload.gpu (they must agree), else h100. Its NVLink
// (links x NCCL's per-link rate, models/gpu.hpp) is the NVLink port's bandwidth unless the scenario
// gives fabric.links.nvlink.bandwidth.
void resolve_host_gpu(const Reader& in, const MapView& top, Scenario& s) {
  const YAML::Node& fabric = top.require("fabric");
  std::string name = "h100";
  std::string path;
  YAML::Node at;
  if (fabric.IsMap() && fabric["host"] && fabric["host"].IsMap() && fabric["host"]["gpu"]) {
    at = fabric["host"]["gpu"];
    path = "fabric.host.gpu";
    name = in.read_string(at, path);
  }
  if (s.workload) {
    const YAML::Node& w = top.require("workload");
    const std::string& preset = s.workload->step.gpu.name;
    if (!path.empty() && w.IsMap() && w["gpu"] && preset != name) {
      in.fail("workload.gpu", w["gpu"],
              "expected the fabric's GPU (fabric.host.gpu: " + name + "), found " + preset);
    }
    if (path.empty()) name = preset;
  }
  // Jobs run on the fabric's GPUs: each job's workload.gpu is the fabric's (the first job's when
  // fabric.host.gpu is not given).
  for (std::size_t i = 0; i < s.jobs.size(); ++i) {
    const YAML::Node w = top.require("jobs")[i]["workload"];
    const std::string& preset = s.jobs[i].workload.step.gpu.name;
    if (path.empty() && i == 0) {
      name = preset;
      continue;
    }
    if (preset != name && w.IsMap() && w["gpu"]) {
      const std::string gpu_path = "jobs." + std::to_string(i) + ".workload.gpu";
      in.fail(gpu_path, w["gpu"],
              "expected the fabric's GPU (" + name + ", " +
                  (path.empty() ? std::string("the first job's") : path) + "), found " + preset);
    }
  }
  const auto gpu = models::gpu_preset(name);
  if (!gpu) {
    std::string names;
    for (const std::string& n : models::gpu_preset_names())
      names += (names.empty() ? "" : ", ") + n;
    in.fail(path, at, "expected a GPU preset (" + names + "), found \"" + name + "\"");
  }
  s.host_gpu = *gpu;
  // NVLink SHARP comes with the baseboard's NVSwitch generation (models/gpu.hpp).
  s.fabric.host.nvls = gpu->nvswitch_sharp;
  resolve_pcie_switches(in, fabric, s);
  const bool nvlink_given = fabric.IsMap() && fabric["links"] && fabric["links"].IsMap() &&
                            fabric["links"]["nvlink"] && fabric["links"]["nvlink"].IsMap() &&
                            fabric["links"]["nvlink"]["bandwidth"];
  if (!nvlink_given) {
    s.fabric.links.nvlink.bandwidth =
        Bandwidth::bps(static_cast<int64_t>(models::nccl_nvlink_bytes_per_s(*gpu) * 8.0));
  }
  // One channel's copy rate: collective.channel_copy_bandwidth, else the GPU generation's.
  if (s.collective.channel_copy_bytes_per_s <= 0.0) {
    s.collective.channel_copy_bytes_per_s =
        models::nccl_channel_copy_GBps(gpu->compute_capability) * 1e9;
  }
}

Scenario read_root(const Reader& in, bool fabric_only_ok) {
  const MapView top(in, in.root(), "",
                    {"name", "seed", "fidelity", "fabric", "traffic", "collective", "workload",
                     "jobs", "compare_alone", "sweep", "observe", "report", "faults"});
  Scenario s;
  s.source = in.source();
  s.name = in.read_string(top.require("name"), "name");
  if (const YAML::Node* n = top.find("seed")) {
    s.seed = in.read_uint(*n, "seed", 0, std::numeric_limits<uint64_t>::max());
  }
  if (const YAML::Node* n = top.find("fidelity")) {
    s.fidelity = in.read_enum(*n, "fidelity", kFidelities);
  }
  s.fabric = read_fabric(in, top.require("fabric"), "fabric", s.network);
  if (const YAML::Node& f = top.require("fabric"); f.IsMap() && f["route_overrides"]) {
    s.route_overrides = read_route_overrides(in, f["route_overrides"], "fabric.route_overrides");
  }
  if (const YAML::Node& f = top.require("fabric"); f.IsMap() && f["routing_convergence"]) {
    s.routing_convergence =
        read_routing_convergence(in, f["routing_convergence"], "fabric.routing_convergence");
  }
  if (const YAML::Node* n = top.find("faults")) s.faults = read_faults(in, *n, "faults");
  if (const YAML::Node& f = top.require("fabric"); f.IsMap() && f["flow"]) {
    s.flow_cc = read_flow_options(in, f["flow"], "fabric.flow");
  }
  if (const YAML::Node* n = top.find("collective")) {
    s.collective = read_collective(in, *n, "collective");
  }
  if (const YAML::Node* n = top.find("collective")) {
    if (n->IsMap() && (*n)["calibration"]) {
      s.collective_calibration =
          read_collective_calibration(in, (*n)["calibration"], "collective.calibration");
    }
  }

  if (const YAML::Node* n = top.find("workload")) {
    if (n->IsMap() && (*n)["chakra"]) {
      s.chakra = read_chakra_workload(in, *n, "workload");
    } else {
      s.workload = read_workload(in, *n, "workload");
    }
  }
  if (const YAML::Node* n = top.find("jobs")) {
    if (top.find("workload") != nullptr) {
      in.fail("jobs", *n, "expected either workload (one job) or jobs (several), got both");
    }
    s.jobs = read_jobs(in, *n, "jobs");
  }
  if (const YAML::Node* n = top.find("compare_alone")) {
    if (s.jobs.empty()) {
      in.fail("compare_alone", *n, "expected compare_alone only beside jobs:");
    }
    s.compare_alone = in.read_bool(*n, "compare_alone");
  }
  read_channels_alias(in, top, s);
  resolve_host_gpu(in, top, s);
  // A profile's physical parameters replace the defaults the GPU just set (its copy rate).
  if (s.collective_calibration && !s.collective_calibration->physical.empty()) {
    try {
      apply_physical_parameters(s, s.collective_calibration->physical);
    } catch (const std::invalid_argument& e) {
      in.fail_path(
          "collective.calibration",
          std::string("expected a profile whose physical parameters the simulator knows, got: ") +
              e.what());
    }
  }
  if (const YAML::Node* n = top.find("observe")) s.observe = read_observe(in, *n, "observe");
  if (const YAML::Node* n = top.find("report")) s.report = read_report(in, *n, "report");
  if (const YAML::Node* n = top.find("sweep")) s.sweep = read_sweep(in, *n, "sweep");
  // A training workload may run alone; without one, traffic is the whole scenario (unless the
  // command brings its own).
  if ((s.workload || s.chakra || !s.jobs.empty() || fabric_only_ok) &&
      top.find("traffic") == nullptr) {
    return s;
  }
  s.traffic = read_traffic(in, top.require("traffic"), "traffic");
  return s;
}

// Whether `text` has anything but blank lines and comments.
bool has_yaml_content(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#') {
      return true;
    }
  }
  return false;
}

Scenario load(const std::string& text, const std::string& source, const LoadOptions& options) {
  OverriddenTree tree;
  try {
    tree.root.reset(YAML::Load(text));
  } catch (const YAML::ParserException& e) {
    throw ScenarioError(source, e.mark.line + 1, e.mark.column + 1, "", e.msg);
  }
  for (const Override& o : options.overrides) {
    yaml_reader::apply_override(tree, o);
  }
  const Reader in(source, tree);
  Scenario scenario = read_root(in, options.fabric_only_ok);
  if (options.seed) {
    scenario.seed = *options.seed;
  }
  yaml_reader::resolve_global_batch(in, scenario);
  yaml_reader::validate(in, scenario);
  scenario.load_warnings.insert(scenario.load_warnings.end(), in.warnings().begin(),
                                in.warnings().end());
  return scenario;
}

}  // namespace

Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const LoadOptions& options) {
  return load(yaml_text, source_name, options);
}

Scenario load_scenario_file(const std::string& path, const LoadOptions& options) {
  // A directory opens as a stream on Linux and then fails to read; say what it is instead.
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ScenarioError(path, 0, 0, "", "expected a YAML scenario file, found a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw ScenarioError(
        path, 0, 0, "",
        std::string("cannot read file: ") + (err != 0 ? std::strerror(err) : "open failed"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw ScenarioError(path, 0, 0, "", "cannot read file: read error");
  }
  if (!has_yaml_content(text.str())) {
    throw ScenarioError(path, 0, 0, "", "expected a YAML scenario file, found an empty file");
  }
  return load_scenario_text(text.str(), path, options);
}

Scenario load_default_scenario(const LoadOptions& options) {
  return load_scenario_text(default_scenario_yaml(), kDefaultScenarioSource, options);
}

}  // namespace syncsim::app
