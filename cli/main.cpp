// syncsim command line: picks the command and maps its errors to exit codes. Each command lives in
// its own file (cli/commands.hpp); this file only dispatches.
// Exit codes: 0 success, 2 bad input (scenario or arguments), 1 internal failure; `validate` exits
// 3 when some case is out of tolerance.
#include <iostream>
#include <string>
#include <vector>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/nccl_tests_log.hpp"
#include "calibration/profile.hpp"
#include "calibration/profiler_trace.hpp"
#include "cli/calibrate_cmd.hpp"
#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/plot.hpp"
#include "run/collective_cmd.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/core/check.hpp"
#include "sim/core/units.hpp"

using namespace syncsim;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitInternal = 1;
constexpr int kExitBadInput = 2;

const char* kUsage =
    "usage: syncsim <command> [options]\n"
    "\n"
    "commands:\n"
    "  run [SCENARIO]   simulate a scenario (the built-in default when no file is given)\n"
    "  bench            event-queue and packet-forwarding throughput on the reference scenarios\n"
    "  calibrate import|fit|report LOG...  nccl-tests logs -> table / alpha-beta fits / measured "
    "vs simulated\n"
    "  calibrate flow [SCENARIO]  fit the flow backend's congestion-control correction to the "
    "packet model\n"
    "  calibrate trace TRACE.json  compute fit and measured step phases from a PyTorch profiler "
    "trace\n"
    "  collective [SCENARIO]  nccl-tests-style sweep of one collective (all_reduce_perf table)\n"
    "  ports [SCENARIO]  the fabric's egress port names (observe.ports, --counters rows)\n"
    "  sweep SCENARIO --vary PATH=V1,V2,...  one row per point of a parameter grid (CSV/JSON; "
    "threads, MPI)\n"
    "  plot RESULTS.csv --x COL --y COL --out FILE.svg  render sweep results with gnuplot\n"
    "  validate [CASE_OR_GROUP...]  the validation suite against public measurements (exit 3: "
    "some case out of tolerance)\n"
    "\n"
    "`syncsim <command> --help` describes a command's options.\n";

int dispatch(const std::string& command, const std::vector<std::string>& args) {
  if (command == "run") return app::run_command(args, std::cout, std::cerr);
  if (command == "bench") return app::bench_command(args, std::cout);
  if (command == "calibrate") return app::calibrate_main(args, std::cout);
  if (command == "collective") return app::collective_command(args, std::cout);
  if (command == "ports") return app::ports_command(args, std::cout);
  if (command == "sweep") return app::sweep_main(args, std::cout, std::cerr);
  if (command == "plot") return app::plot_main(args, std::cout, std::cerr);
  if (command == "validate") return app::validate_command(args, std::cout);
  std::cerr << "syncsim: unknown command \"" << command << "\"\n" << kUsage;
  return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? kExitBadInput : kExitOk;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    return dispatch(command, args);
  } catch (const app::ScenarioError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const app::CollectiveUsageError& e) {
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const calibration::ParseError& e) {  // nccl-tests log: "file:line: expected, found"
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const calibration::FitError& e) {
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const calibration::TraceError& e) {  // profiler trace: "file: expected, found"
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const calibration::ProfileError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadInput;
  } catch (const app::CalibrateUsageError& e) {
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const app::PlotError& e) {  // gnuplot missing or failing (calibrate report --plot)
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitInternal;
  } catch (const app::UsageError& e) {
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitBadInput;
  } catch (const InternalError& e) {
    std::cerr << "syncsim: " << e.what() << "\n";
    return kExitInternal;
  } catch (const TimeOverflow& e) {  // inputs beyond what int64 picoseconds can simulate
    std::cerr << "syncsim " << command << ": " << e.what() << "\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "syncsim: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}
