// syncsim command line: picks the command and maps its errors to exit codes. Each command lives in
// its own file (cli/commands.hpp), listed in cli/command_table.hpp; this file only dispatches.
// `--version` prints the version and git commit; with `--json` among a command's arguments an
// error is also printed as a JSON object on stdout (cli/error_report.hpp).
// Exit codes: 0 success, 2 bad input (scenario or arguments), 1 internal failure; `validate` exits
// 3 when some case is out of tolerance.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/nccl_tests_log.hpp"
#include "calibration/profile.hpp"
#include "calibration/profiler_trace.hpp"
#include "cli/calibrate_cmd.hpp"
#include "cli/command_line.hpp"
#include "cli/command_table.hpp"
#include "cli/error_report.hpp"
#include "cli/plot.hpp"
#include "cli/version.hpp"
#include "run/collective_cmd.hpp"
#include "run/report_page.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/core/check.hpp"
#include "sim/core/units.hpp"

using namespace syncsim;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

// Prints the error: `line` on stderr as always, and with `--json` on the command line also the
// error object on stdout (cli/error_report.hpp). Returns `code`.
int fail(int code, const std::string& line, const std::exception& e, bool json) {
  std::cerr << line << "\n";
  if (json) std::cout << app::error_json(app::error_report(e)).dump(2) << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << app::usage_text();
    return args.empty() ? kExitBadInput : kExitOk;
  }
  if (args[0] == "--version") {
    std::cout << "syncsim " << app::kVersion << " (git " << app::kGitCommit << ")\n";
    return kExitOk;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  const bool json = std::find(args.begin(), args.end(), "--json") != args.end();
  const std::string prefix = "syncsim " + command + ": ";
  try {
    return app::run_command_named(command, args, std::cout, std::cerr);
  } catch (const app::ScenarioError& e) {
    return fail(kExitBadInput, e.what(), e, json);
  } catch (const app::ReportInputError& e) {  // `report`: "file[:line:col]: path: message"
    return fail(kExitBadInput, e.what(), e, json);
  } catch (const app::CollectiveUsageError& e) {
    return fail(kExitBadInput, prefix + e.what(), e, json);
  } catch (const calibration::ParseError& e) {  // nccl-tests log: "file:line: expected, found"
    return fail(kExitBadInput, e.what(), e, json);
  } catch (const calibration::FitError& e) {
    return fail(kExitBadInput, prefix + e.what(), e, json);
  } catch (const calibration::TraceError& e) {  // profiler trace: "file: expected, found"
    return fail(kExitBadInput, e.what(), e, json);
  } catch (const calibration::ProfileError& e) {
    return fail(kExitBadInput, e.what(), e, json);
  } catch (const app::CalibrateUsageError& e) {
    return fail(kExitBadInput, prefix + e.what(), e, json);
  } catch (const app::PlotError& e) {  // gnuplot missing or failing (calibrate report --plot)
    return fail(kExitInternal, prefix + e.what(), e, json);
  } catch (const app::UsageError& e) {
    return fail(kExitBadInput, prefix + e.what(), e, json);
  } catch (const InternalError& e) {
    return fail(kExitInternal, std::string("syncsim: ") + e.what(), e, json);
  } catch (const TimeOverflow& e) {  // inputs beyond what int64 picoseconds can simulate
    return fail(kExitInternal, prefix + e.what(), e, json);
  } catch (const std::exception& e) {
    return fail(kExitInternal, std::string("syncsim: internal error: ") + e.what(), e, json);
  }
}
