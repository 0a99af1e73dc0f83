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
#include "cli/calibrate_physical.hpp"
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
std::optional<double> ReportRow::transferred_rel_error() const {
  return rel(transferred_us, measured_us);
}

CalibrationReport make_calibration_report(const std::vector<calibration::Measurement>& measured,
                                          const std::string& profile_path, const Scenario* scenario,
                                          const TransferCheckRequest* transfer) {
  CalibrationReport report;
  if (transfer != nullptr && scenario != nullptr) {
    std::vector<MeasuredPoint> points;
    for (const MeasuredPoint& p : measured_points(measured)) {
      try {
        (void)models::parse_collective_op(p.op);
        points.push_back(p);
      } catch (const std::invalid_argument&) {
        // Reported below as "not a collective syncsim models".
      }
    }
    report.transfer = check_transfer(*scenario, points, transfer->fit_on_ranks, transfer->folds,
                                     transfer->options);
  }
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
  const std::vector<MeasuredPoint> points = measured_points(measured);
  std::vector<std::pair<std::string, int>> keys;
  for (const MeasuredPoint& p : points) {
    const auto key = std::make_pair(p.op, p.ranks);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
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
    for (const MeasuredPoint& point : points) {
      if (point.op != line.op || point.ranks != line.ranks) continue;
      const int64_t bytes = point.bytes;
      ReportRow row;
      row.bytes = bytes;
      row.measured_us = point.measured_us;
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
      if (report.transfer) {
        const TransferCheck& t = *report.transfer;
        for (std::size_t i = 0; i < t.predictions.size(); ++i) {
          const MeasuredPoint& m = t.predictions[i].measured;
          if (m.op == line.op && m.ranks == line.ranks && m.bytes == bytes) {
            row.transferred_us = t.predictions[i].predicted_us;
            row.transferred_in_fit = t.in_fit[i];
          }
        }
        if (!row.transferred_in_fit) {
          widen(line.transferred_max_error, row.transferred_rel_error());
          if (bytes >= kMiB) widen(line.transferred_max_error_ge_1mib, row.transferred_rel_error());
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
  if (r.transfer) {
    const TransferCheck& t = *r.transfer;
    if (t.fit_on_ranks > 0) {
      os << "# transferred: the scenario with its physical parameters fitted on the "
         << t.fit_on_ranks << "-rank points (* marks those), predicting the others\n";
    } else {
      os << "# transferred: the scenario with its physical parameters fitted on " << t.folds - 1
         << " of " << t.folds << " folds of sizes, predicting the held-out fold (" << t.folds
         << "-fold over sizes)\n";
    }
  }
  for (const auto& w : r.warnings) os << "# warning: " << w << "\n";
  for (const auto& l : r.lines) {
    os << "\n"
       << l.op << ", " << l.ranks << " ranks (busbw = algbw x " << opt_fmt("%.4g", l.bus_factor)
       << ")\n";
    std::snprintf(buf, sizeof buf, "%12s %11s %9s %11s %9s %8s %11s %9s %8s", "bytes",
                  "measured_us", "busbw", "calibr_us", "busbw", "rel_err", "sim_us", "busbw",
                  "rel_err");
    os << buf << (r.transfer ? "  transfer_us  rel_err\n" : "\n");
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
      std::string line_text = buf;
      if (r.transfer) {
        line_text.pop_back();  // the newline
        std::snprintf(buf, sizeof buf, " %12s %8s%s\n", opt_fmt("%.2f", row.transferred_us).c_str(),
                      opt_fmt("%+.4f", row.transferred_rel_error()).c_str(),
                      row.transferred_in_fit ? "*" : "");
        line_text += buf;
      }
      os << line_text;
    }
    os << "max |rel_err|: calibrated " << opt_fmt("%.4f", l.calibrated_max_error) << " (from 1 MiB "
       << opt_fmt("%.4f", l.calibrated_max_error_ge_1mib) << "), simulated "
       << opt_fmt("%.4f", l.simulated_max_error) << " (from 1 MiB "
       << opt_fmt("%.4f", l.simulated_max_error_ge_1mib) << ")";
    if (r.transfer) {
      os << ", transferred " << opt_fmt("%.4f", l.transferred_max_error) << " (from 1 MiB "
         << opt_fmt("%.4f", l.transferred_max_error_ge_1mib) << ")";
    }
    os << "\n";
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
                      {"simulated_rel_error", opt_json(row.simulated_rel_error())},
                      {"transferred_us", opt_json(row.transferred_us)},
                      {"transferred_rel_error", opt_json(row.transferred_rel_error())},
                      {"transferred_in_fit", row.transferred_in_fit}});
    }
    lines.push_back(
        {{"op", l.op},
         {"ranks", l.ranks},
         {"bus_factor", l.bus_factor},
         {"rows", rows},
         {"calibrated_max_rel_error", opt_json(l.calibrated_max_error)},
         {"calibrated_max_rel_error_ge_1MiB", opt_json(l.calibrated_max_error_ge_1mib)},
         {"simulated_max_rel_error", opt_json(l.simulated_max_error)},
         {"simulated_max_rel_error_ge_1MiB", opt_json(l.simulated_max_error_ge_1mib)},
         {"transferred_max_rel_error", opt_json(l.transferred_max_error)},
         {"transferred_max_rel_error_ge_1MiB", opt_json(l.transferred_max_error_ge_1mib)}});
  }
  nlohmann::json j{{"profile", r.profile}, {"lines", lines}, {"warnings", r.warnings}};
  if (!r.scenario.empty()) j["scenario"] = {{"name", r.scenario}, {"fidelity", r.fidelity}};
  if (r.transfer) {
    nlohmann::json fits = nlohmann::json::array();
    for (const calibration::PhysicalFit& f : r.transfer->fits)
      fits.push_back(physical_parameters_json(f));
    j["transfer"] = {
        {"fit_on_ranks", r.transfer->fit_on_ranks}, {"folds", r.transfer->folds}, {"fits", fits}};
  }
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
    for (const auto& row : l.rows) emit("transferred", row.bytes, row.transferred_us);
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
  opts.add_options()("fit-on", po::value<int>(),
                     "(with --scenario) fit the physical parameters on this rank count's points "
                     "and predict the others (default: the smallest; k-fold with one)")(
      "folds", po::value<int>()->default_value(3),
      "(with --scenario) folds over sizes when the logs hold one rank count")(
      "no-fit", "(with --scenario) no physical fit: no transferred column");
  add_fit_tuning_options(opts);
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
  load.fabric_only_ok = true;  // the logs' collectives are the traffic
  if (!scenario_path.empty()) scenario = load_scenario_file(scenario_path, load);
  const calibration::ImportedLogs imported = calibration::import_logs(logs, import);
  if (imported.measurements.empty()) {
    throw CalibrateUsageError("--placement " + cl.get<std::string>("placement") +
                              ": the logs have no such rows");
  }
  std::optional<TransferCheckRequest> transfer;
  if (scenario && !cl.has("no-fit")) {
    transfer = TransferCheckRequest{};
    if (cl.has("fit-on")) transfer->fit_on_ranks = cl.get<int>("fit-on");
    transfer->folds = cl.get<int>("folds");
    if ((cl.has("fit-on") && transfer->fit_on_ranks < 2) || transfer->folds < 2) {
      throw CalibrateUsageError("--fit-on: expected a rank count >= 2, --folds: expected >= 2");
    }
    transfer->options = physical_fit_options(cl);
  } else if (!scenario && (cl.has("fit-on") || cl.has("no-fit") || cl.has("parameters"))) {
    throw CalibrateUsageError("--fit-on, --no-fit and --parameters need --scenario");
  }
  CalibrationReport report;
  try {
    report =
        make_calibration_report(imported.measurements, profile, scenario ? &*scenario : nullptr,
                                transfer ? &*transfer : nullptr);
  } catch (const CollectiveUsageError& e) {
    throw CalibrateUsageError(std::string("the physical fit: ") + e.what());
  }
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
