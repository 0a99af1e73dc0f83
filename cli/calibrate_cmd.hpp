#pragma once
// `syncsim calibrate import|fit|report` (report: cli/calibrate_report.hpp): nccl-tests logs ->
// measurement table -> alpha-beta fits -> profile.
//
//   syncsim calibrate import LOG... [--json]
//   syncsim calibrate fit [LOG...] [--gemm CSV] [--peak DTYPE=TFLOPS]... [--json] [--residuals]
//                         [--out profile.yaml]
//
// A LOG is an nccl-tests log, or the JSON array `import --json` printed (a file starting with '[').
// A GEMM CSV has lines "m,n,k,dtype,tflops" (an optional header line starting with "m", '#'
// comments); each dtype is fitted against --peak DTYPE=TFLOPS, or against its best measured
// throughput when no peak is given. `fit --json` prints the array of collective fits, or
// {"collectives": [...], "gemm": [...]} when --gemm is given. Bad input throws
// calibration::ParseError / FitError / ProfileError or CalibrateUsageError; the CLI prints the
// message and exits with 2.
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace syncsim::app {

class CalibrateUsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// One --peak DTYPE=TFLOPS value (fit, trace).
std::pair<std::string, double> parse_peak_flag(const std::string& v);

// The whole subcommand; args exclude "calibrate". Returns the exit code.
int calibrate_main(const std::vector<std::string>& args, std::ostream& out);

}  // namespace syncsim::app
