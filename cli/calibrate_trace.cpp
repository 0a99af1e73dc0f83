#include "cli/calibrate_trace.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <utility>

#include "calibration/profile.hpp"
#include "cli/calibrate_cmd.hpp"
#include "cli/command_line.hpp"
#include "models/gpu.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

namespace syncsim::app {

namespace {

constexpr const char* kUsage =
    "usage: syncsim calibrate trace TRACE.json [--scenario S] [--set PATH=V]... [--peak "
    "DTYPE=TFLOPS]...\n"
    "                               [--out PROFILE.yaml] [--json]\n"
    "\n"
    "  Reads a PyTorch profiler trace (torch.profiler export_chrome_trace; record_shapes=True for\n"
    "  GEMM and attention shapes), classifies its GPU kernels (gemm, attention, nccl, "
    "elementwise,\n"
    "  optimizer, memory, other), fits the GEMM efficiency curve e_max * I / (I + I_half), the\n"
    "  attention efficiency and the per-kernel overhead, and measures forward, backward, "
    "optimizer\n"
    "  and exposed communication per ProfilerStep. --scenario S prints what `syncsim run S` "
    "predicts\n"
    "  beside it, as is and with the trace's fit. Peaks: --peak, else the scenario's GPU, else "
    "the\n"
    "  trace's device name (a100, h100, h200, b200, gb200 presets).\n";

std::optional<models::DType> model_dtype(const std::string& d) {
  if (d == "bf16") return models::DType::Bf16;
  if (d == "fp16") return models::DType::Fp16;
  if (d == "fp8") return models::DType::Fp8;
  if (d == "tf32") return models::DType::Tf32;
  return std::nullopt;
}

const char* dtype_text(models::DType d) {
  switch (d) {
    case models::DType::Fp16:
      return "fp16";
    case models::DType::Fp8:
      return "fp8";
    case models::DType::Tf32:
      return "tf32";
    case models::DType::Bf16:
      return "bf16";
  }
  return "bf16";
}

// The preset whose name the device name contains ("NVIDIA H100 80GB HBM3" -> h100).
std::optional<models::GpuSpec> preset_for_device(const std::string& device_name) {
  std::string n = device_name;
  for (char& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* p : {"gb200", "b200", "h200", "h100", "a100"}) {
    if (n.find(p) != std::string::npos) return models::gpu_preset(p);
  }
  return std::nullopt;
}

PredictedStep predicted(const Scenario& s, const std::string& label) {
  const RunResult r = run_scenario(s);
  PredictedStep p;
  p.label = label;
  const models::StepResult& st = *r.step;
  p.step_us = st.step.seconds() * 1e6;
  p.forward_us = st.forward.seconds() * 1e6;
  p.backward_us = st.backward.seconds() * 1e6;
  p.optimizer_us = st.optimizer.seconds() * 1e6;
  p.tail_us = st.tail.seconds() * 1e6;
  p.exposed_comm_us = st.exposed_comm.seconds() * 1e6;
  return p;
}

std::string fmt(const char* f, double v) {
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), f, v);
  return buf.data();
}

nlohmann::json step_json(const calibration::MeasuredStep& m) {
  return {{"name", m.name},
          {"kernels", m.kernels},
          {"span_us", m.span_us},
          {"busy_us", m.busy_us},
          {"idle_us", m.span_us - m.busy_us},
          {"forward_us", m.forward_us},
          {"backward_us", m.backward_us},
          {"optimizer_us", m.optimizer_us},
          {"comm_us", m.comm_us},
          {"exposed_comm_us", m.exposed_comm_us},
          {"tail_us", m.tail_us}};
}

}  // namespace

std::string trace_calibration_text(const TraceCalibration& c) {
  std::ostringstream os;
  const auto& t = c.trace;
  os << "trace: " << t.file << "  (device " << t.device
     << (t.gpu_name.empty() ? std::string() : ", " + t.gpu_name) << ", " << t.kernels.size()
     << " kernels, " << t.linked_launches << " linked to their launch, " << t.steps.size()
     << " steps; phases by " << t.phase_rule << ")\n";
  std::array<std::pair<int, double>, calibration::kKernelClasses> by_class{};
  for (const auto& k : t.kernels) {
    auto& [n, us] = by_class[static_cast<std::size_t>(k.kind)];
    ++n;
    us += k.duration_us;
  }
  os << "kernels:";
  for (std::size_t i = 0; i < by_class.size(); ++i) {
    if (by_class[i].first == 0) continue;
    os << "  " << calibration::kernel_class_name(static_cast<calibration::KernelClass>(i)) << " "
       << by_class[i].first << " (" << fmt("%.1f", by_class[i].second) << " us)";
  }
  os << "\npeaks: " << c.peak_source << "\n";
  std::array<char, 256> buf{};
  for (const auto& g : c.fit.gemm) {
    int samples = 0;
    for (const auto& s : c.fit.gemm_samples) samples += s.dtype == g.dtype ? 1 : 0;
    std::snprintf(buf.data(), buf.size(),
                  "gemm %-5s peak_tflops %.1f  efficiency = %.4f * I / (I + %.2f)  (I in FLOP/B; "
                  "%d calls, max_rel_error %.4f)\n",
                  g.dtype.c_str(), g.peak_tflops, g.e_max, g.intensity_half, samples,
                  g.max_rel_error);
    os << buf.data();
  }
  for (const auto& a : c.fit.attention) {
    std::snprintf(buf.data(), buf.size(),
                  "attention %-5s efficiency %.4f  (%.1f of %.1f TFLOPS, %d calls)\n",
                  a.dtype.c_str(), a.efficiency, a.achieved_tflops, a.peak_tflops, a.calls);
    os << buf.data();
  }
  if (c.fit.attention.empty()) os << "attention efficiency: unknown\n";
  if (c.fit.kernel_gaps > 0) {
    os << "kernel overhead: " << fmt("%.2f", c.fit.kernel_gap_us)
       << " us, the median gap between back-to-back kernels on one stream (" << c.fit.kernel_gaps
       << " gaps)\n";
  } else {
    os << "kernel overhead: unknown (no back-to-back kernels on one stream)\n";
  }
  for (const auto& n : c.fit.notes) os << "note: " << n << "\n";
  for (const auto& w : t.warnings) os << "warning: " << w << "\n";
  std::snprintf(buf.data(), buf.size(), "%-24s %7s %11s %11s %11s %11s %11s %11s %11s %11s\n",
                "step", "kernels", "span_us", "idle_us", "fwd_us", "bwd_us", "opt_us", "comm_us",
                "exposed_us", "tail_us");
  os << "\n" << buf.data();
  auto row = [&](const calibration::MeasuredStep& m) {
    std::snprintf(buf.data(), buf.size(),
                  "%-24s %7d %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f\n",
                  m.name.c_str(), m.kernels, m.span_us, m.span_us - m.busy_us, m.forward_us,
                  m.backward_us, m.optimizer_us, m.comm_us, m.exposed_comm_us, m.tail_us);
    os << buf.data();
  };
  for (const auto& m : c.measured.steps) row(m);
  if (c.measured.steps.size() > 1) row(c.measured.mean);
  if (!c.predicted.empty()) {
    os << "\nscenario " << c.scenario << " (one GPU's step; times in us)\n";
    std::snprintf(buf.data(), buf.size(), "%-32s %11s %11s %11s %11s %11s %11s\n", "", "step",
                  "fwd", "bwd", "opt", "tail", "exposed");
    os << buf.data();
    const auto& m = c.measured.mean;
    std::snprintf(buf.data(), buf.size(), "%-32s %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f\n",
                  "measured (mean)", m.span_us, m.forward_us, m.backward_us, m.optimizer_us,
                  m.tail_us, m.exposed_comm_us);
    os << buf.data();
    for (const auto& p : c.predicted) {
      std::snprintf(buf.data(), buf.size(), "%-32s %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f\n",
                    p.label.c_str(), p.step_us, p.forward_us, p.backward_us, p.optimizer_us,
                    p.tail_us, p.exposed_comm_us);
      os << buf.data();
    }
  }
  return os.str();
}

nlohmann::json trace_calibration_json(const TraceCalibration& c) {
  using nlohmann::json;
  const auto& t = c.trace;
  json classes = json::object();
  for (const auto& k : t.kernels) {
    json& e = classes[std::string(calibration::kernel_class_name(k.kind))];
    if (e.is_null()) e = {{"kernels", 0}, {"time_us", 0.0}};
    e["kernels"] = e["kernels"].get<int>() + 1;
    e["time_us"] = e["time_us"].get<double>() + k.duration_us;
  }
  json gemm = json::array();
  for (const auto& g : c.fit.gemm) {
    gemm.push_back({{"dtype", g.dtype},
                    {"peak_tflops", g.peak_tflops},
                    {"e_max", g.e_max},
                    {"intensity_half", g.intensity_half},
                    {"max_rel_error", g.max_rel_error}});
  }
  json attention = json::array();
  for (const auto& a : c.fit.attention) {
    attention.push_back({{"dtype", a.dtype},
                         {"peak_tflops", a.peak_tflops},
                         {"achieved_tflops", a.achieved_tflops},
                         {"efficiency", a.efficiency},
                         {"calls", a.calls}});
  }
  json steps = json::array();
  for (const auto& m : c.measured.steps) steps.push_back(step_json(m));
  json j{{"trace", t.file},
         {"gpu", t.gpu_name},
         {"device", t.device},
         {"kernels", t.kernels.size()},
         {"linked_launches", t.linked_launches},
         {"phase_rule", t.phase_rule},
         {"classes", classes},
         {"peak_source", c.peak_source},
         {"gemm_samples", c.fit.gemm_samples.size()},
         {"gemm", gemm},
         {"attention", c.fit.attention.empty() ? json(nullptr) : attention},
         {"kernel_overhead_us", c.fit.kernel_gaps > 0 ? json(c.fit.kernel_gap_us) : json(nullptr)},
         {"kernel_gaps", c.fit.kernel_gaps},
         {"steps", steps},
         {"mean", step_json(c.measured.mean)},
         {"notes", c.fit.notes},
         {"warnings", t.warnings}};
  if (!c.scenario.empty()) {
    json p = json::array();
    for (const auto& s : c.predicted) {
      p.push_back({{"label", s.label},
                   {"step_us", s.step_us},
                   {"forward_us", s.forward_us},
                   {"backward_us", s.backward_us},
                   {"optimizer_us", s.optimizer_us},
                   {"tail_us", s.tail_us},
                   {"exposed_comm_us", s.exposed_comm_us}});
    }
    j["scenario"] = c.scenario;
    j["predicted"] = p;
  }
  return j;
}

int calibrate_trace_main(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")(
      "scenario", po::value<std::string>(),
      "scenario with a workload: print its predicted step beside the measured one")(
      "peak", po::value<std::vector<std::string>>()->composing(),
      "peak TFLOPS of a dtype, D=T (repeatable; default: the scenario's or the trace's GPU)");
  add_override_options(opts, /*with_seed=*/false);
  opts.add_options()("json", "print JSON instead of text")(
      "out", po::value<std::string>(), "write the fit as a calibration profile (YAML)");
  po::options_description hidden;
  hidden.add_options()("trace", po::value<std::vector<std::string>>(), "trace file");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("trace", -1);
  const CommandLine cl = parse_command_line<CalibrateUsageError>(args, all, pos);
  if (cl.has("help")) {
    print_help(out, kUsage, opts);
    return 0;
  }
  const std::vector<std::string> traces = cl.all("trace");
  if (traces.size() != 1) {
    throw CalibrateUsageError("expected one TRACE.json, found " + std::to_string(traces.size()) +
                              "\n" + kUsage);
  }
  const std::string scenario_path = cl.has("scenario") ? cl.get<std::string>("scenario") : "";
  std::map<std::string, double> peaks;
  for (const auto& v : cl.all("peak")) peaks.insert(parse_peak_flag(v));
  LoadOptions load;
  try {
    load = load_options(cl);
  } catch (const std::exception& e) {
    throw CalibrateUsageError(e.what());  // already names --set or --unset
  }
  if (!load.overrides.empty() && scenario_path.empty()) {
    throw CalibrateUsageError("--set and --unset need --scenario");
  }
  std::optional<Scenario> scenario;
  if (!scenario_path.empty()) {
    scenario = load_scenario_file(scenario_path, load);
    if (!scenario->workload) {
      throw CalibrateUsageError("--scenario: expected a scenario with a workload, found none in " +
                                scenario_path);
    }
  }

  TraceCalibration c;
  c.trace = calibration::read_profiler_trace(traces[0]);
  std::optional<models::GpuSpec> gpu;
  std::string gpu_source;
  if (scenario) {
    gpu = scenario->workload->step.gpu;
    gpu_source = "the scenario's workload GPU " + gpu->name;
  } else if ((gpu = preset_for_device(c.trace.gpu_name))) {
    gpu_source = "the " + gpu->name + " preset (device \"" + c.trace.gpu_name + "\")";
  }
  c.peak_source = peaks.empty() ? std::string() : "--peak";
  if (gpu) c.peak_source += (c.peak_source.empty() ? "" : ", else ") + gpu_source;
  if (c.peak_source.empty()) c.peak_source = "none (give --peak DTYPE=TFLOPS)";
  const calibration::PeakTflops peak = [&](const std::string& dtype) {
    if (const auto it = peaks.find(dtype); it != peaks.end()) return it->second;
    const auto d = model_dtype(dtype);
    return gpu && d ? models::peak_flops(*gpu, *d) / 1e12 : 0.0;
  };
  c.fit = calibration::fit_compute(c.trace, peak);
  c.measured = calibration::measure_steps(c.trace);

  if (scenario) {
    c.scenario = scenario->name;
    c.predicted.push_back(predicted(*scenario, "predicted"));
    // The same scenario with the trace's fit on its GPU, as `workload.calibration` would apply it.
    Scenario fitted = *scenario;
    models::StepConfig& step = fitted.workload->step;
    bool applied = false;
    for (const auto& g : c.fit.gemm) {
      if (g.dtype != dtype_text(step.compute.dtype)) continue;
      step.gpu.max_gemm_efficiency = g.e_max;
      step.gpu.gemm_intensity_half = g.intensity_half;
      applied = true;
    }
    if (c.fit.kernel_gaps > 0) {
      step.gpu.kernel_launch_s = c.fit.kernel_gap_us * 1e-6;
      applied = true;
    }
    if (applied) c.predicted.push_back(predicted(fitted, "predicted with the trace's fit"));
  }

  const std::string out_path = cl.has("out") ? cl.get<std::string>("out") : std::string();
  if (!out_path.empty()) {
    calibration::CalibrationProfile profile;
    profile.source = "syncsim calibrate trace " + traces[0];
    profile.gpu_name = c.trace.gpu_name;
    profile.gemm = c.fit.gemm;
    if (c.fit.kernel_gaps > 0) {
      profile.kernel_launch_us = c.fit.kernel_gap_us;
      profile.kernel_gaps = c.fit.kernel_gaps;
    }
    for (const auto& a : c.fit.attention) {
      profile.attention.push_back({a.dtype, a.peak_tflops, a.efficiency, a.calls});
    }
    calibration::write_profile_file(profile, out_path);
  }
  if (cl.has("json")) {
    out << trace_calibration_json(c).dump(2) << "\n";
  } else {
    out << trace_calibration_text(c);
  }
  return 0;
}

}  // namespace syncsim::app
