#pragma once
// Calibration measurements and fits as text, JSON and files: nccl-tests logs (or the JSON table
// measurements_json writes) -> Measurement rows; GEMM CSV -> GemmSample rows; fits -> text/JSON.
// `syncsim calibrate import|fit|report` print and read through these.
//
// A log file is an nccl-tests log, or the JSON array measurements_json printed (a file starting
// with '['). A GEMM CSV has lines "m,n,k,dtype,tflops" (an optional header line starting with "m",
// '#' comments). Bad input throws ParseError "file:line: expected, found".
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/nccl_tests_log.hpp"

namespace syncsim::calibration {

struct ImportOptions {
  ParseOptions parse;  // op and rank count for logs that do not state them (nccl_tests_log.hpp)
  // Keep only this block of each row; nullopt keeps both (a fit then weighs both as points, a
  // report averages them per size).
  std::optional<Placement> placement;
};

struct ImportedLogs {
  std::vector<Measurement> measurements;  // every file's, in order
  std::vector<LogWarning> warnings;       // every file's, in order
  std::string gpu_name;  // device name of the first log header that lists devices, or empty
};

// Every file, in order: nccl-tests logs (several tests each, any ops and rank counts) and JSON
// tables; `options.parse` does not apply to JSON tables (they state op and ranks per row).
ImportedLogs import_logs(const std::vector<std::string>& paths, const ImportOptions& options = {});

// "out" | "in" | "both" (nullopt); anything else throws std::invalid_argument naming the choices.
std::optional<Placement> parse_placement_choice(const std::string& text);

// Measurements of every file, in order. When `gpu_name` is given it receives the device name of the
// first log header that lists devices (empty when none does).
std::vector<Measurement> import_measurements(const std::vector<std::string>& paths,
                                             std::string* gpu_name = nullptr);

std::string measurements_text(const std::vector<Measurement>& ms);
nlohmann::json measurements_json(const std::vector<Measurement>& ms);
// The inverse of measurements_json (for `fit` on an imported table); errors name file and index.
std::vector<Measurement> measurements_from_json(const nlohmann::json& j, const std::string& file);

// GEMM samples from a CSV file; malformed lines are ParseErrors "file:line: expected, found".
std::vector<GemmSample> read_gemm_csv(const std::string& path);

std::string fits_text(const std::vector<LineFit>& fits, bool residuals);
nlohmann::json fits_json(const std::vector<LineFit>& fits);

}  // namespace syncsim::calibration
