#pragma once
// The `syncsim` commands, one file each (cli/<name>_command.cpp, plot.cpp, calibrate_*.cpp). Each
// takes its arguments without the command's name and returns the exit code: 0 success, 2 bad input
// (UsageError and the libraries' input errors propagate; main.cpp prints them), 1 internal failure.
#include <iosfwd>
#include <string>
#include <vector>

namespace syncsim::app {

int run_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `syncsim ports [SCENARIO]`: the fabric's egress port names, one a line.
int ports_command(const std::vector<std::string>& args, std::ostream& out);
int collective_command(const std::vector<std::string>& args, std::ostream& out);
int bench_command(const std::vector<std::string>& args, std::ostream& out);
// Usage errors print "syncsim sweep: ..." to `err` and return 2; ScenarioError propagates.
// `syncsim validate`: 0 all within tolerance, 3 some not (run/validate.hpp); bad case files throw
// ScenarioError (exit 2).
int validate_command(const std::vector<std::string>& args, std::ostream& out);
int sweep_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);
// `syncsim report FILE --html OUT.html` (run/report_page.hpp); bad input throws ReportInputError.
int report_command(const std::vector<std::string>& args, std::ostream& out);

}  // namespace syncsim::app
