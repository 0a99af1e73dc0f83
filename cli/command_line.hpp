#pragma once
// The one flag parser of every `syncsim` command, on Boost.Program_options: `--flag VALUE`,
// `--flag=VALUE`, short aliases, positional arguments anywhere, exact names only (no guessing of
// abbreviations, so `--x` never means `--xlabel`). Each command declares its options with their
// help text; `--help` prints the command's usage lines followed by that generated table.
#include <boost/program_options.hpp>
#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "scenario/scenario_loader.hpp"

namespace syncsim::app {

namespace po = boost::program_options;

// Bad flags: the CLI prints "syncsim COMMAND: what" and exits with 2.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct CommandLine {
  po::variables_map values;
  // Every option as given, in command-line order: (long name, value), for flags whose relative
  // order matters (a sweep's --vary and --set axes).
  std::vector<std::pair<std::string, std::string>> in_order;

  bool has(const std::string& name) const { return values.count(name) > 0; }
  template <class T>
  const T& get(const std::string& name) const {
    return values[name].as<T>();
  }
  std::vector<std::string> all(const std::string& name) const {
    return has(name) ? get<std::vector<std::string>>(name) : std::vector<std::string>{};
  }
};

// One option of a command's table, as the parser knows it.
struct OptionInfo {
  std::string long_name;   // "json"
  std::string short_name;  // "q" for -q, else empty
  bool takes_value = false;
  bool positional = false;  // filled from a positional argument (SCENARIO), not a user flag
  std::string description;
};

// While one is alive, every parse records the option table it was given, so a command's options
// can be listed from the table it parses with (cli/command_table.cpp). One at a time, one thread.
struct OptionTableCapture {
  std::vector<OptionInfo> options;
  OptionTableCapture();
  ~OptionTableCapture();
  OptionTableCapture(const OptionTableCapture&) = delete;
  OptionTableCapture& operator=(const OptionTableCapture&) = delete;
};

// Parses `args` (the command's arguments, without its name); throws `Error` with Program_options'
// message ("unrecognised option '--bogus'", "the required argument for option '--out' is missing").
CommandLine parse_command_line_or_throw(const std::vector<std::string>& args,
                                        const po::options_description& options,
                                        const po::positional_options_description& positional);
template <class Error = UsageError>
CommandLine parse_command_line(const std::vector<std::string>& args,
                               const po::options_description& options,
                               const po::positional_options_description& positional = {}) {
  try {
    return parse_command_line_or_throw(args, options, positional);
  } catch (const po::error& e) {
    throw Error(e.what());
  }
}

// A flag's positive count (--threads N); UsageError "--FLAG: expected a positive integer, found
// "V"" otherwise (also beyond 1024, more threads than any machine here runs usefully).
unsigned parse_positive_count(const std::string& flag, const std::string& value);
// A flag's count, zero allowed (--min-window-events N); UsageError "--FLAG: expected a
// non-negative integer, found "V"" otherwise.
uint64_t parse_count(const std::string& flag, const std::string& value);

// `usage` (the command's synopsis and prose) then the generated option table.
void print_help(std::ostream& out, const std::string& usage,
                const po::options_description& options);

// The scenario flags `run`, `collective`, `calibrate flow` and `calibrate report` share.
//   --set PATH=VALUE and --unset PATH (repeatable; every --unset applies before the --sets), and
//   --seed N when `with_seed`.
void add_override_options(po::options_description& options, bool with_seed);
// LoadOptions from those flags; a malformed --set throws ScenarioError as `syncsim run` always did.
LoadOptions load_options(const CommandLine& cl);

}  // namespace syncsim::app
