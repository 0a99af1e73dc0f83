#pragma once
// A failed command's error as data: where (file, 1-based line and column, dotted path) and what.
// main.cpp prints it as one line on stderr and, when the command line has `--json`, also as
// {"error": {"file", "line", "column", "path", "message"}} on stdout, so a script reading --json
// output gets an object either way. Unknown parts are null.
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

namespace syncsim::app {

struct ErrorReport {
  std::string file;
  int line = 0;    // 0: unknown
  int column = 0;  // 0: unknown
  std::string path;
  std::string message;
};

// The parts of a library error that carries them (ScenarioError, ReportInputError, the
// nccl-tests log's ParseError); anything else is its what() as the message.
ErrorReport error_report(const std::exception& e);

nlohmann::json error_json(const ErrorReport& r);

}  // namespace syncsim::app
