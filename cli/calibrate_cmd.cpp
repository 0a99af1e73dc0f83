#include "cli/calibrate_cmd.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <ostream>
#include <utility>

#include <nlohmann/json.hpp>

#include "calibration/measurement_io.hpp"
#include "calibration/profile.hpp"
#include "cli/calibrate_flow.hpp"
#include "cli/calibrate_import_flags.hpp"
#include "cli/calibrate_physical.hpp"
#include "cli/calibrate_report.hpp"
#include "cli/calibrate_trace.hpp"
#include "cli/command_line.hpp"

namespace syncsim::app {

using calibration::fits_json;
using calibration::fits_text;
using calibration::measurements_json;
using calibration::measurements_text;
using calibration::read_gemm_csv;

namespace {

constexpr const char* kSynopsis =
    "usage: syncsim calibrate import LOG... [--op OP] [--ranks N] [--placement out|in|both] "
    "[--json]\n"
    "       syncsim calibrate fit [LOG...] [--op OP] [--ranks N] [--placement out|in|both]\n"
    "                             [--gemm CSV] [--peak DTYPE=TFLOPS]... [--json] [--residuals]\n"
    "                             [--out PROFILE.yaml]\n"
    "       syncsim calibrate report LOG... [--profile P] [--scenario S] [--set PATH=V]... [--plot "
    "FILE.svg]\n"
    "                                [--json]\n"
    "       syncsim calibrate flow [SCENARIO] [--set PATH=V]... [--size BYTES] [--json] [--out "
    "FILE]\n"
    "       syncsim calibrate trace TRACE.json [--scenario S] [--set PATH=V]... [--peak "
    "DTYPE=TFLOPS]...\n"
    "                               [--out PROFILE.yaml] [--json]\n"
    "\n"
    "  import  parse nccl-tests logs (all_reduce_perf, all_gather_perf, reduce_scatter_perf,\n"
    "          alltoall_perf, sendrecv_perf, broadcast_perf, reduce_perf) into a table\n"
    "  fit     fit time_us = latency_us + bytes / (1000 * algbw_GBps) per op and rank count, with\n"
    "          size regimes where one line does not fit; LOG may also be an `import --json` table\n"
    "  report  measured vs predicted per size: the profile's calibrated line (default: the fit of "
    "the\n"
    "          logs) and, with --scenario, the uncalibrated simulator; `calibrate report --help`\n"
    "  flow    fit the flow backend's congestion-control correction against the packet model on\n"
    "          small contended cases with the scenario's PFC/ECN/DCQCN; `calibrate flow --help`\n"
    "  trace   a PyTorch profiler trace: GEMM efficiency curve, attention efficiency, kernel "
    "overhead,\n"
    "          measured forward/backward/optimizer and exposed communication per step; `calibrate "
    "trace --help`\n";

// The flags of import and fit, as `calibrate --help` lists them.
constexpr const char* kFlags =
    "\n"
    "  --json         print JSON instead of text\n"
    "  --op OP        collective of logs that do not name it (a bare pasted table)\n"
    "  --ranks N      rank count of logs that do not state it (default: from busbw/algbw)\n"
    "  --placement P  out, in or both (default): which block of each row to use\n"
    "  --residuals    (fit) print the relative error of every point\n"
    "  --out FILE     (fit) write the fitted calibration profile (YAML)\n"
    "  --gemm CSV     (fit) also fit GEMM efficiency from lines m,n,k,dtype,tflops\n"
    "  --peak D=T     (fit) peak TFLOPS of dtype D (default: its best measured throughput)\n";

std::string usage() { return std::string(kSynopsis) + kFlags; }

}  // namespace

std::pair<std::string, double> parse_peak_flag(const std::string& v) {
  const auto eq = v.find('=');
  double tflops = 0;
  try {
    std::size_t used = 0;
    tflops = eq == std::string::npos ? 0.0 : std::stod(v.substr(eq + 1), &used);
    if (used != v.size() - eq - 1) tflops = 0;
  } catch (const std::exception&) {
    tflops = 0;
  }
  if (!(tflops > 0)) {
    throw CalibrateUsageError("--peak: expected DTYPE=TFLOPS like bf16=989, found \"" + v + "\"");
  }
  return {v.substr(0, eq), tflops};
}

int calibrate_main(const std::vector<std::string>& args, std::ostream& out) {
  return calibrate_main(args, out, std::cerr);
}

int calibrate_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty())
    throw CalibrateUsageError("expected import, fit, report, flow or trace\n" + usage());
  const std::string sub = args[0];
  if (sub == "--help" || sub == "-h" || sub == "help") {
    out << usage();
    return 0;
  }
  if (sub == "report") return calibrate_report_main({args.begin() + 1, args.end()}, out);
  if (sub == "flow") return calibrate_flow_main({args.begin() + 1, args.end()}, out);
  if (sub == "trace") return calibrate_trace_main({args.begin() + 1, args.end()}, out);
  if (sub != "import" && sub != "fit") {
    throw CalibrateUsageError("expected import, fit, report, flow or trace, found \"" + sub +
                              "\"\n" + usage());
  }
  const bool fit = sub == "fit";
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")("json", "print JSON instead of text");
  add_import_options(opts);
  if (fit) {
    opts.add_options()("residuals", "print the relative error of every point")(
        "out", po::value<std::string>(),
        "write the fitted calibration profile (YAML) to this file")(
        "gemm", po::value<std::string>(), "also fit GEMM efficiency from lines m,n,k,dtype,tflops")(
        "peak", po::value<std::vector<std::string>>()->composing(),
        "peak TFLOPS of a dtype, D=T (repeatable; default: its best measured throughput)");
    add_physical_fit_options(opts);
  }
  po::options_description hidden;
  hidden.add_options()("log", po::value<std::vector<std::string>>()->composing(), "LOG files");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("log", -1);
  const CommandLine cl = parse_command_line<CalibrateUsageError>(
      std::vector<std::string>(args.begin() + 1, args.end()), all, pos);
  if (cl.has("help")) {
    print_help(out, kSynopsis, opts);
    return 0;
  }
  const bool json = cl.has("json");
  const calibration::ImportOptions import = import_options(cl);
  const bool residuals = cl.has("residuals");
  const std::string out_path = cl.has("out") ? cl.get<std::string>("out") : std::string();
  const std::string gemm_path = cl.has("gemm") ? cl.get<std::string>("gemm") : std::string();
  std::vector<std::pair<std::string, double>> peaks;
  for (const auto& v : cl.all("peak")) peaks.push_back(parse_peak_flag(v));
  const std::vector<std::string> logs = cl.all("log");
  if (logs.empty() && gemm_path.empty()) {
    throw CalibrateUsageError("expected at least one LOG file, found none\n" + usage());
  }
  const calibration::ImportedLogs imported = calibration::import_logs(logs, import);
  const auto& ms = imported.measurements;
  const std::string& gpu_name = imported.gpu_name;
  if (import.placement && !logs.empty() && ms.empty()) {
    throw CalibrateUsageError("--placement " + cl.get<std::string>("placement") +
                              ": the logs have no such rows");
  }
  if (json && sub == "import") {
    for (const auto& w : imported.warnings)
      err << "syncsim calibrate: warning: " << w.text() << "\n";
  } else if (!json) {
    out << import_warnings_text(imported.warnings);
  }
  if (sub == "import") {
    if (json) {
      out << measurements_json(ms).dump(2) << "\n";
    } else {
      out << measurements_text(ms);
    }
    return 0;
  }
  const auto fits = calibration::fit_collectives(ms);
  const std::optional<PhysicalFitResult> physical = physical_fit_from_command_line(cl, ms);
  std::vector<calibration::GemmFit> gemm;
  if (!gemm_path.empty()) {
    const auto samples = read_gemm_csv(gemm_path);
    std::vector<std::string> dtypes;
    for (const auto& g : samples) {
      if (std::find(dtypes.begin(), dtypes.end(), g.dtype) == dtypes.end())
        dtypes.push_back(g.dtype);
    }
    for (const auto& d : dtypes) {
      double peak = 0;
      for (const auto& [pd, pt] : peaks) {
        if (pd == d) peak = pt;
      }
      if (peak <= 0) {
        for (const auto& g : samples) {
          if (g.dtype == d) peak = std::max(peak, g.tflops);
        }
      }
      gemm.push_back(calibration::fit_gemm(samples, d, peak));
    }
  }
  if (!out_path.empty()) {
    calibration::CalibrationProfile profile;
    profile.gpu_name = gpu_name;
    profile.source = "syncsim calibrate fit";
    for (const auto& l : logs) profile.source += " " + l;
    for (const auto& f : fits) profile.collectives.push_back(calibration::to_profile(f));
    profile.gemm = gemm;
    if (physical) profile.physical = physical->fit;
    calibration::write_profile_file(profile, out_path);
  }
  if (json) {
    nlohmann::json fits_j = fits_json(fits);
    for (std::size_t i = 0; i < fits.size(); ++i) {
      fits_j[i]["warnings"] = import_warning_texts(imported.warnings, fits[i].op, fits[i].ranks);
    }
    if (gemm_path.empty() && !physical) {
      out << fits_j.dump(2) << "\n";
    } else {
      // With --gemm or --scenario the output is one object.
      nlohmann::json j{{"collectives", fits_j}};
      if (!gemm_path.empty()) {
        nlohmann::json g = nlohmann::json::array();
        for (const auto& f : gemm) {
          g.push_back({{"dtype", f.dtype},
                       {"peak_tflops", f.peak_tflops},
                       {"e_max", f.e_max},
                       {"intensity_half", f.intensity_half},
                       {"max_rel_error", f.max_rel_error}});
        }
        j["gemm"] = g;
      }
      if (physical) j["physical"] = physical_fit_json(*physical);
      out << j.dump(2) << "\n";
    }
  } else {
    if (!fits.empty()) out << fits_text(fits, residuals);
    if (physical) out << physical_fit_text(*physical, residuals);
    for (const auto& f : gemm) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "gemm %-5s peak_tflops %.1f  efficiency = %.4f * I / (I + %.2f)  (I in FLOP/B) "
                    " max_rel_error %.4f\n",
                    f.dtype.c_str(), f.peak_tflops, f.e_max, f.intensity_half, f.max_rel_error);
      out << buf;
    }
  }
  return 0;
}

}  // namespace syncsim::app
