#include "cli/calibrate_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/measurement_io.hpp"
#include "calibration/profile.hpp"
#include "cli/calibrate_cmd.hpp"
#include "cli/calibrate_import_flags.hpp"
#include "cli/command_line.hpp"
#include "cli/plot.hpp"
#include "run/calibrated_collective.hpp"
#include "run/collective_cmd.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/backends/make_backend.hpp"

namespace syncsim::app {

namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

constexpr const char* kUsage =
    "usage: syncsim calibrate report LOG... [--profile P] [--scenario S] [--set PATH=V]... [--plot "
    "FILE.svg]\n"
    "                                [--op OP] [--ranks N] [--placement out|in|both] [--json]\n"
    "\n"
    "  measured (the nccl-tests logs) vs predicted, per op, rank count and size, with relative "
    "errors:\n"
    "  calibrated  the profile's fitted line, as `syncsim collective --calibration P` evaluates "
    "it\n"
    "              (default profile: the fit of these logs)\n"
    "  simulated   `syncsim collective S` without a profile (the uncalibrated simulator), with "
    "--scenario\n"
    "\n"
    "  --set overrides a value of S, e.g. --set fidelity=analytic\n"
    "  measured is the mean of a size's out-of-place and in-place times (--placement both), or "
    "one of them\n";

std::optional<double> rel(const std::optional<double>& predicted, double measured) {
  if (!predicted || !(measured > 0)) return std::nullopt;
  return (*predicted - measured) / measured;
}

void widen(std::optional<double>& max, const std::optional<double>& e) {
  if (e) max = std::max(max.value_or(0.0), std::abs(*e));
}

std::string opt_fmt(const char* f, const std::optional<double>& v) {
  if (!v) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, *v);
  return buf;
}

nlohmann::json opt_json(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

}  // namespace

std::optional<double> ReportRow::calibrated_rel_error() const {
  return rel(calibrated_us, measured_us);
}
std::optional<double> ReportRow::simulated_rel_error() const {
  return rel(simulated_us, measured_us);
}

CalibrationReport make_calibration_report(const std::vector<calibration::Measurement>& measured,
                                          const std::string& profile_path,
                                          const Scenario* scenario) {
  CalibrationReport report;
  CollectiveCalibration cal;
  if (profile_path.empty()) {
    cal.file = "fitted from the logs";
    for (const auto& f : calibration::fit_collectives(measured))
      cal.collectives.push_back(calibration::to_profile(f));
  } else {
    cal = read_collective_calibration(profile_path);
  }
  report.profile = cal.file;
  if (scenario != nullptr) {
    report.scenario = scenario->name;
    report.fidelity = fidelity_name(scenario->fidelity);
  }

  // (op, ranks) in order of first appearance; per size the mean of its usable blocks.
  std::vector<std::pair<std::string, int>> keys;
  std::map<std::pair<std::string, int>, std::map<int64_t, std::pair<double, int>>> sums;
  for (const auto& m : measured) {
    if (!(m.time_us > 0) || (m.wrong && *m.wrong > 0)) continue;
    const auto key = std::make_pair(m.op, m.ranks);
    if (!sums.count(key)) keys.push_back(key);
    auto& s = sums[key][m.bytes];
    s.first += m.time_us;
    s.second += 1;
  }
  for (const auto& key : keys) {
    ReportLine line;
    line.op = key.first;
    line.ranks = key.second;
    std::optional<models::CollectiveOp> op;
    try {
      op = models::parse_collective_op(line.op);
    } catch (const std::invalid_argument&) {
      report.warnings.push_back(line.op +
                                ": not a collective syncsim models; measured column only");
    }
    const auto ranks = static_cast<uint32_t>(line.ranks);
    line.bus_factor = op ? models::bus_bandwidth_factor(*op, ranks) : 1.0;
    const calibration::CollectiveProfile* fit = op ? find_collective_fit(cal, *op, ranks) : nullptr;
    if (op && fit == nullptr) {
      report.warnings.push_back(calibration_miss(cal, *op, ranks) +
                                ": no calibrated column for it");
    }
    bool simulate = scenario != nullptr && op.has_value();
    for (const auto& [bytes, sum] : sums[key]) {
      ReportRow row;
      row.bytes = bytes;
      row.measured_us = sum.first / sum.second;
      row.measured_busbw = static_cast<double>(bytes) / 1e3 / row.measured_us * line.bus_factor;
      if (fit != nullptr) row.calibrated_us = calibrated_time_us(*fit, bytes);
      if (simulate) {
        CollectiveSweepOptions o;
        o.op = *op;
        o.ranks = ranks;
        o.min_bytes = bytes;
        o.max_bytes = bytes;
        try {
          const CollectiveSweep sim = run_collective_sweep(*scenario, o);
          row.simulated_us = sim.rows.front().out_of_place.time_us;
        } catch (const CollectiveUsageError& e) {
          report.warnings.push_back(line.op + " at " + std::to_string(line.ranks) +
                                    " ranks on scenario " + scenario->name + ": " + e.what() +
                                    ": no simulated column for it");
          simulate = false;
        }
      }
      widen(line.calibrated_max_error, row.calibrated_rel_error());
      widen(line.simulated_max_error, row.simulated_rel_error());
      if (bytes >= kMiB) {
        widen(line.calibrated_max_error_ge_1mib, row.calibrated_rel_error());
        widen(line.simulated_max_error_ge_1mib, row.simulated_rel_error());
      }
      line.rows.push_back(row);
    }
    report.lines.push_back(std::move(line));
  }
  return report;
}

std::string report_text(const CalibrationReport& r) {
  std::ostringstream os;
  char buf[320];
  os << "# profile: " << r.profile << "\n";
  if (!r.scenario.empty())
    os << "# simulated: scenario " << r.scenario << ", fidelity " << r.fidelity << ", no profile\n";
  for (const auto& w : r.warnings) os << "# warning: " << w << "\n";
  for (const auto& l : r.lines) {
    os << "\n"
       << l.op << ", " << l.ranks << " ranks (busbw = algbw x " << opt_fmt("%.4g", l.bus_factor)
       << ")\n";
    std::snprintf(buf, sizeof buf, "%12s %11s %9s %11s %9s %8s %11s %9s %8s\n", "bytes",
                  "measured_us", "busbw", "calibr_us", "busbw", "rel_err", "sim_us", "busbw",
                  "rel_err");
    os << buf;
    for (const auto& row : l.rows) {
      auto busbw = [&](const std::optional<double>& t) -> std::optional<double> {
        if (!t || !(*t > 0)) return std::nullopt;
        return static_cast<double>(row.bytes) / 1e3 / *t * l.bus_factor;
      };
      std::snprintf(buf, sizeof buf, "%12lld %11.2f %9.2f %11s %9s %8s %11s %9s %8s\n",
                    static_cast<long long>(row.bytes), row.measured_us, row.measured_busbw,
                    opt_fmt("%.2f", row.calibrated_us).c_str(),
                    opt_fmt("%.2f", busbw(row.calibrated_us)).c_str(),
                    opt_fmt("%+.4f", row.calibrated_rel_error()).c_str(),
                    opt_fmt("%.2f", row.simulated_us).c_str(),
                    opt_fmt("%.2f", busbw(row.simulated_us)).c_str(),
                    opt_fmt("%+.4f", row.simulated_rel_error()).c_str());
      os << buf;
    }
    os << "max |rel_err|: calibrated " << opt_fmt("%.4f", l.calibrated_max_error) << " (from 1 MiB "
       << opt_fmt("%.4f", l.calibrated_max_error_ge_1mib) << "), simulated "
       << opt_fmt("%.4f", l.simulated_max_error) << " (from 1 MiB "
       << opt_fmt("%.4f", l.simulated_max_error_ge_1mib) << ")\n";
  }
  return os.str();
}

nlohmann::json report_json(const CalibrationReport& r) {
  nlohmann::json lines = nlohmann::json::array();
  for (const auto& l : r.lines) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : l.rows) {
      rows.push_back({{"bytes", row.bytes},
                      {"measured_us", row.measured_us},
                      {"measured_busbw_GBps", row.measured_busbw},
                      {"calibrated_us", opt_json(row.calibrated_us)},
                      {"calibrated_rel_error", opt_json(row.calibrated_rel_error())},
                      {"simulated_us", opt_json(row.simulated_us)},
                      {"simulated_rel_error", opt_json(row.simulated_rel_error())}});
    }
    lines.push_back({{"op", l.op},
                     {"ranks", l.ranks},
                     {"bus_factor", l.bus_factor},
                     {"rows", rows},
                     {"calibrated_max_rel_error", opt_json(l.calibrated_max_error)},
                     {"calibrated_max_rel_error_ge_1MiB", opt_json(l.calibrated_max_error_ge_1mib)},
                     {"simulated_max_rel_error", opt_json(l.simulated_max_error)},
                     {"simulated_max_rel_error_ge_1MiB", opt_json(l.simulated_max_error_ge_1mib)}});
  }
  nlohmann::json j{{"profile", r.profile}, {"lines", lines}, {"warnings", r.warnings}};
  if (!r.scenario.empty()) j["scenario"] = {{"name", r.scenario}, {"fidelity", r.fidelity}};
  return j;
}

std::string report_plot_csv(const CalibrationReport& r) {
  std::ostringstream os;
  os << "bytes,series,busbw_GBps\n";
  char buf[64];
  for (const auto& l : r.lines) {
    const std::string suffix = r.lines.size() > 1 ? " " + l.op + "/" + std::to_string(l.ranks) : "";
    auto emit = [&](const char* series, int64_t bytes, const std::optional<double>& t) {
      if (!t || !(*t > 0)) return;
      std::snprintf(buf, sizeof buf, "%.6g", static_cast<double>(bytes) / 1e3 / *t * l.bus_factor);
      os << bytes << "," << series << suffix << "," << buf << "\n";
    };
    for (const auto& row : l.rows) emit("measured", row.bytes, row.measured_us);
    for (const auto& row : l.rows) emit("calibrated", row.bytes, row.calibrated_us);
    for (const auto& row : l.rows) emit("simulated", row.bytes, row.simulated_us);
  }
  return os.str();
}

int calibrate_report_main(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")(
      "profile", po::value<std::string>(),
      "calibration profile (syncsim calibrate fit --out, syncsim-probe)")(
      "scenario", po::value<std::string>(),
      "scenario whose fabric and fidelity give the simulated column");
  add_override_options(opts, /*with_seed=*/false);
  add_import_options(opts);
  opts.add_options()("plot", po::value<std::string>(),
                     "busbw vs size for every column, drawn by gnuplot (.svg or .png)")(
      "json", "print JSON instead of text");
  po::options_description hidden;
  hidden.add_options()("log", po::value<std::vector<std::string>>(), "nccl-tests logs");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("log", -1);
  const CommandLine cl = parse_command_line<CalibrateUsageError>(args, all, pos);
  if (cl.has("help")) {
    print_help(out, kUsage, opts);
    return 0;
  }
  const std::vector<std::string> logs = cl.all("log");
  const auto text = [&](const char* name) {
    return cl.has(name) ? cl.get<std::string>(name) : std::string();
  };
  const std::string profile = text("profile");
  const std::string scenario_path = text("scenario");
  const std::string plot = text("plot");
  const bool json = cl.has("json");
  const calibration::ImportOptions import = import_options(cl);
  LoadOptions load;
  try {
    load = load_options(cl);
  } catch (const std::exception& e) {
    throw CalibrateUsageError(e.what());  // already names --set or --unset
  }
  if (logs.empty()) {
    throw CalibrateUsageError("expected at least one LOG file, found none\n" + std::string(kUsage));
  }
  if (!load.overrides.empty() && scenario_path.empty()) {
    throw CalibrateUsageError("--set and --unset need --scenario");
  }
  if (!plot.empty() && !plot.ends_with(".svg") && !plot.ends_with(".png")) {
    throw CalibrateUsageError("--plot: expected a file name ending in .svg or .png, found \"" +
                              plot + "\"");
  }
  std::optional<Scenario> scenario;
  if (!scenario_path.empty()) scenario = load_scenario_file(scenario_path, load);
  const calibration::ImportedLogs imported = calibration::import_logs(logs, import);
  if (imported.measurements.empty()) {
    throw CalibrateUsageError("--placement " + cl.get<std::string>("placement") +
                              ": the logs have no such rows");
  }
  CalibrationReport report =
      make_calibration_report(imported.measurements, profile, scenario ? &*scenario : nullptr);
  const auto import_warnings = import_warning_texts(imported.warnings);
  report.warnings.insert(report.warnings.begin(), import_warnings.begin(), import_warnings.end());
  if (json) {
    out << report_json(report).dump(2) << "\n";
  } else {
    out << report_text(report);
  }
  if (!plot.empty()) {
    const std::string csv = plot + ".csv";
    {
      std::ofstream f(csv, std::ios::binary);
      f << report_plot_csv(report);
      if (!f) throw PlotError("cannot write " + csv);
    }
    std::string title = "measured vs predicted busbw";
    if (report.lines.size() == 1)
      title =
          report.lines[0].op + ", " + std::to_string(report.lines[0].ranks) + " ranks: " + title;
    std::ostringstream plot_out, plot_err;
    // Sizes on a log2 axis labelled 1K/1M/1G, busbw from 0, and the measured line drawn last and
    // thickest so the model lines never hide it.
    const int rc =
        plot_main({csv, "--x", "bytes", "--y", "busbw_GBps", "--series", "series", "--xbytes",
                   "--yzero", "--emphasise", "measured", "--xlabel", "message size (bytes)",
                   "--ylabel", "busbw (GB/s)", "--out", plot, "--title", title},
                  plot_out, plot_err);
    if (rc != 0) throw PlotError(plot_err.str());
    // JSON stays one object on stdout; the text report names the picture.
    if (!json) out << "# " << plot_out.str();
  }
  return 0;
}

}  // namespace syncsim::app
