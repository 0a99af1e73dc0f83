#pragma once
// `syncsim calibrate report LOG... [--profile P] [--scenario S] [--set PATH=V]... [--plot FILE.svg]
// [--json]`: measured (the logs) against predicted, per (op, ranks) and size, side by side:
//   - calibrated: `syncsim collective`'s calibrated model with profile P (by default the profile
//     `calibrate fit` makes from these same logs, so the column shows the fit's own error);
//   - simulated (with --scenario S): `syncsim collective` on S without any profile, the
//     uncalibrated simulator at S's fidelity, for the same op, rank count and sizes.
// Relative errors are (predicted - measured) / measured; measured is the mean of a size's
// out-of-place and in-place times, or the one `--placement out|in` keeps (rows with #wrong > 0 are
// left out, as in the fit). --op/--ranks: cli/calibrate_import_flags.hpp. --plot draws busbw
// against size for each column with gnuplot (`syncsim plot`), data kept in FILE.svg.csv.
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "calibration/nccl_tests_log.hpp"
#include "run/physical_fit.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

struct ReportRow {
  int64_t bytes = 0;
  double measured_us = 0;
  double measured_busbw = 0;
  std::optional<double> calibrated_us;
  std::optional<double> simulated_us;
  // The physical fit's prediction (with --scenario): from the fit on another rank count, or from
  // the folds that held this size out; in_fit when the fit saw this point.
  std::optional<double> transferred_us;
  bool transferred_in_fit = false;
  std::optional<double> calibrated_rel_error() const;
  std::optional<double> simulated_rel_error() const;
  std::optional<double> transferred_rel_error() const;
};

struct ReportLine {
  std::string op;
  int ranks = 0;
  double bus_factor = 1;
  std::vector<ReportRow> rows;  // ascending size
  // Largest |relative error| over all sizes and over sizes >= 1 MiB; nullopt without that column.
  std::optional<double> calibrated_max_error, calibrated_max_error_ge_1mib;
  std::optional<double> simulated_max_error, simulated_max_error_ge_1mib;
  // Over the points the fit did not see.
  std::optional<double> transferred_max_error, transferred_max_error_ge_1mib;
};

// How the report checks the physical fit (run/physical_fit.hpp check_transfer).
struct TransferCheckRequest {
  int fit_on_ranks = 0;  // 0: the smallest rank count, or k-fold when the logs hold one
  int folds = 3;
  PhysicalFitOptions options;
};

struct CalibrationReport {
  std::string profile;   // file, or "fitted from the logs"
  std::string scenario;  // scenario name, empty without --scenario
  std::string fidelity;  // the scenario's fidelity
  std::vector<ReportLine> lines;
  std::vector<std::string> warnings;
  std::optional<TransferCheck> transfer;  // with a TransferCheckRequest
};

// `profile` empty: fit the measurements. `scenario` null: no simulated column. `transfer` (needs
// a scenario): the physical fit's column.
CalibrationReport make_calibration_report(const std::vector<calibration::Measurement>& measured,
                                          const std::string& profile_path, const Scenario* scenario,
                                          const TransferCheckRequest* transfer = nullptr);

std::string report_text(const CalibrationReport& r);
nlohmann::json report_json(const CalibrationReport& r);
// The CSV --plot draws: bytes, series ("measured", "calibrated", "simulated", with op/ranks when
// the report has several lines), busbw_GBps.
std::string report_plot_csv(const CalibrationReport& r);

// `calibrate report ...` (args after "report"). Returns the exit code; usage errors throw
// CalibrateUsageError, a failing gnuplot throws PlotError.
int calibrate_report_main(const std::vector<std::string>& args, std::ostream& out);

}  // namespace syncsim::app
