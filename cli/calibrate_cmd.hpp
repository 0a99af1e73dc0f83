#pragma once
// `syncsim calibrate import|fit|report` (report: cli/calibrate_report.hpp): nccl-tests logs ->
// measurement table -> alpha-beta fits -> profile.
//
//   syncsim calibrate import LOG... [--op OP] [--ranks N] [--placement out|in|both] [--json]
//   syncsim calibrate fit [LOG...] [--op OP] [--ranks N] [--placement out|in|both] [--gemm CSV]
//                         [--peak DTYPE=TFLOPS]... [--json] [--residuals] [--out profile.yaml]
//
// --op/--ranks/--placement: cli/calibrate_import_flags.hpp. Warnings of the import (an inferred
// rank count, a header busbw/algbw contradicts) are "# warning: file:line: ..." lines before the
// text output; with --json, fit puts them in each fit's "warnings" and import, whose JSON is the
// bare table `fit` reads back, writes them to `err`.
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
int calibrate_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// The same with `err` = std::cerr.
int calibrate_main(const std::vector<std::string>& args, std::ostream& out);

}  // namespace syncsim::app
