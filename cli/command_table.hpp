#pragma once
// The one table of `syncsim` commands: their names and one-line summaries (the usage text of
// `syncsim --help`), the function each runs, and each command's option table as its parser sees
// it. `syncsim completion bash` and the test that docs/cli.md documents every option
// (tests/cli/test_option_tables.cpp) read the options from here, so completion, `--help` and the
// docs all come from the options_description each command parses with.
#include <iosfwd>
#include <string>
#include <vector>

#include "cli/command_line.hpp"

namespace syncsim::app {

struct CommandInfo {
  std::string name;      // "run"; a subcommand is "calibrate import"
  std::string synopsis;  // "run [SCENARIO]", as the usage text shows it
  std::string summary;   // what it does, one line
  bool listed = true;    // shown in the usage text (subcommands share their parent's line)
};

// Every command and subcommand, in the order of the usage text.
const std::vector<CommandInfo>& command_table();

// `syncsim --help`: the commands and their summaries.
std::string usage_text();

// Runs `command` (the first word of the command line) with `args`; throws what the command throws.
// An unknown command prints the usage on `err` and returns 2.
int run_command_named(const std::string& command, const std::vector<std::string>& args,
                      std::ostream& out, std::ostream& err);

// The options `name` (a command_table() entry) parses with, read by running `name --help` while
// the parser records its table (cli/command_line.hpp, OptionTableCapture).
std::vector<OptionInfo> command_options(const std::string& name);

// `syncsim completion bash`: a bash completion script for every command and option.
std::string bash_completion();

// `syncsim completion markdown`: every command's options as the Markdown table docs/cli.md holds
// between its options markers (a test compares them).
std::string options_markdown();

}  // namespace syncsim::app
