#pragma once
// `syncsim calibrate import|fit|report` (report: cli/calibrate_report.hpp): nccl-tests logs -> measurement table -> alpha-beta fits -> profile.
//
//   syncsim calibrate import LOG... [--json]
//   syncsim calibrate fit [LOG...] [--gemm CSV] [--peak DTYPE=TFLOPS]... [--json] [--residuals]
//                         [--out profile.yaml]
//
// A LOG is an nccl-tests log, or the JSON array `import --json` printed (a file starting with '[').
// A GEMM CSV has lines "m,n,k,dtype,tflops" (an optional header line starting with "m", '#' comments);
// each dtype is fitted against --peak DTYPE=TFLOPS, or against its best measured throughput when no
// peak is given. `fit --json` prints the array of collective fits, or {"collectives": [...],
// "gemm": [...]} when --gemm is given.
// Bad input throws calibration::ParseError / FitError / ProfileError or CalibrateUsageError; the CLI
// prints the message and exits with 2.
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/nccl_tests_log.hpp"

namespace syncsim::app {

class CalibrateUsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Measurements of every file, in order. When `gpu_name` is given it receives the device name of the
// first log header that lists devices (empty when none does).
std::vector<calibration::Measurement> import_measurements(const std::vector<std::string>& paths,
                                                          std::string* gpu_name = nullptr);

std::string measurements_text(const std::vector<calibration::Measurement>& ms);
nlohmann::json measurements_json(const std::vector<calibration::Measurement>& ms);
// The inverse of measurements_json (for `fit` on an imported table); errors name file and index.
std::vector<calibration::Measurement> measurements_from_json(const nlohmann::json& j, const std::string& file);

// GEMM samples from a CSV file; malformed lines are ParseErrors "file:line: expected, found".
std::vector<calibration::GemmSample> read_gemm_csv(const std::string& path);

std::string fits_text(const std::vector<calibration::LineFit>& fits, bool residuals);
nlohmann::json fits_json(const std::vector<calibration::LineFit>& fits);

// The whole subcommand; args exclude "calibrate". Returns the exit code.
int calibrate_main(const std::vector<std::string>& args, std::ostream& out);

}  // namespace syncsim::app
