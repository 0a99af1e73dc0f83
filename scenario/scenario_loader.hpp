#pragma once
// YAML scenario -> Scenario structs. yaml-cpp stays inside scenario/*.cpp (linked PRIVATE), so
// nothing outside scenario/ sees YAML types.
//
// Every input error is one ScenarioError printed as `file.yaml:LINE:COL: dotted.path: message`,
// with 1-based line and column. Errors in values that came from a --set override point at
// `--set:1:1` (or the position inside the override's value) instead of the file.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace syncsim::app {

class ScenarioError : public std::runtime_error {
 public:
  // line/column are 1-based; 0 means "no position" (e.g. an unreadable file) and is left out of
  // what(), as is an empty path.
  ScenarioError(std::string file, int line, int column, std::string path, std::string message);

  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string path_;
  std::string message_;
};

// One `--set dotted.path=value`. Numeric path components index sequences (traffic.0.size); the
// value is parsed as YAML, so it may be a scalar, `[1, 2]` or `{a: 1}`. A null value (`null`, `~`
// or nothing) removes the key instead, so the scenario reads as if it had never been written (a
// key that is not there is left alone; an entry of a sequence cannot be removed).
struct Override {
  std::string path;
  std::string value;
};

struct LoadOptions {
  std::vector<Override> overrides;  // applied in order to the YAML tree before it is read
  std::optional<uint64_t> seed;     // replaces the scenario's `seed`
  // A scenario needs `traffic:` or `workload:` (something to run); commands that bring their own
  // traffic (`syncsim collective`) also take a fabric-only one.
  bool fabric_only_ok = false;
};

// Parses, applies overrides, reads every field, then validates the result by building the fabric
// and expanding the traffic, so a returned Scenario is known to be runnable.
Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const LoadOptions& options = {});
// An unreadable file throws ScenarioError(path, 0, 0, "", "cannot read file: ...").
Scenario load_scenario_file(const std::string& path, const LoadOptions& options = {});
// The built-in default (scenarios/default.yaml compiled in), reported as "<built-in default>".
Scenario load_default_scenario(const LoadOptions& options = {});

// Splits "a.b=c" at the first '='. A missing '=' or an empty path component throws ScenarioError
// with file "--set".
Override parse_override(const std::string& arg);
// `--unset dotted.path`: the same as `--set dotted.path=null`.
Override unset_override(const std::string& path);

}  // namespace syncsim::app
