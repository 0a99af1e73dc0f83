#include "cli/command_table.hpp"

#include <iostream>
#include <sstream>

#include "cli/calibrate_cmd.hpp"
#include "cli/commands.hpp"
#include "cli/plot.hpp"

namespace syncsim::app {

const std::vector<CommandInfo>& command_table() {
  static const std::vector<CommandInfo> table = {
      {"run", "run [SCENARIO]", "simulate a scenario (the built-in default when no file is given)"},
      {"bench", "bench", "event-queue and packet-forwarding throughput on the reference scenarios"},
      {"calibrate", "calibrate import|fit|report LOG...",
       "nccl-tests logs -> table / alpha-beta fits / measured vs simulated"},
      {"calibrate import", "", "", false},
      {"calibrate fit", "", "", false},
      {"calibrate report", "", "", false},
      {"calibrate flow", "calibrate flow [SCENARIO]",
       "fit the flow backend's congestion-control correction to the packet model"},
      {"calibrate trace", "calibrate trace TRACE.json",
       "compute fit and measured step phases from a PyTorch profiler trace"},
      {"collective", "collective [SCENARIO]",
       "nccl-tests-style sweep of one collective (all_reduce_perf table)"},
      {"ports", "ports [SCENARIO]",
       "the fabric's egress port names (observe.ports, --counters rows)"},
      {"sweep", "sweep SCENARIO --vary PATH=V1,V2,...",
       "one row per point of a parameter grid (CSV/JSON; threads, MPI)"},
      {"plot", "plot RESULTS.csv --x COL --y COL --out FILE.svg",
       "render sweep results with gnuplot"},
      {"report", "report RESULT.json|SWEEP.csv --html FILE.html",
       "one self-contained HTML page of a run result or a sweep"},
      {"validate", "validate [CASE_OR_GROUP...]",
       "the validation suite against public measurements (exit 3: some case out of tolerance)"},
      {"completion", "completion bash|markdown",
       "print a bash completion script (source it), or the option table of docs/cli.md"},
  };
  return table;
}

std::string usage_text() {
  std::ostringstream o;
  o << "usage: syncsim <command> [options]\n       syncsim --version\n\ncommands:\n";
  for (const CommandInfo& c : command_table()) {
    if (c.listed) o << "  " << c.synopsis << "  " << c.summary << "\n";
  }
  o << "\n`syncsim <command> --help` describes a command's options; `--json` on a command that "
       "takes it\nprints a bad-input error as {\"error\": {...}} on stdout (docs/cli.md).\n";
  return o.str();
}

namespace {

int completion_command(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")(
      "shell", po::value<std::string>(), "bash, or markdown for the option table of docs/cli.md");
  po::positional_options_description pos;
  pos.add("shell", 1);
  const CommandLine cl = parse_command_line(args, opts, pos);
  if (cl.has("help")) {
    print_help(out,
               "usage: syncsim completion bash|markdown\n\nPrints a bash completion script; load "
               "it with\n  source <(syncsim completion bash)\n`markdown` prints every command's "
               "options as docs/cli.md lists them.\n",
               opts);
    return 0;
  }
  const std::string shell = cl.has("shell") ? cl.get<std::string>("shell") : "";
  if (shell == "bash") {
    out << bash_completion();
  } else if (shell == "markdown") {
    out << options_markdown();
  } else {
    throw UsageError("expected bash or markdown, found \"" + shell + "\"");
  }
  return 0;
}

}  // namespace

int run_command_named(const std::string& command, const std::vector<std::string>& args,
                      std::ostream& out, std::ostream& err) {
  if (command == "run") return run_command(args, out, err);
  if (command == "bench") return bench_command(args, out);
  if (command == "calibrate") return calibrate_main(args, out, err);
  if (command == "collective") return collective_command(args, out);
  if (command == "ports") return ports_command(args, out);
  if (command == "sweep") return sweep_main(args, out, err);
  if (command == "plot") return plot_main(args, out, err);
  if (command == "report") return report_command(args, out);
  if (command == "validate") return validate_command(args, out);
  if (command == "completion") return completion_command(args, out);
  err << "syncsim: unknown command \"" << command << "\"\n" << usage_text();
  return 2;
}

std::vector<OptionInfo> command_options(const std::string& name) {
  std::vector<std::string> args;
  std::string command = name;
  if (const auto space = name.find(' '); space != std::string::npos) {
    command = name.substr(0, space);
    args.push_back(name.substr(space + 1));
  }
  args.emplace_back("--help");
  OptionTableCapture capture;
  std::ostringstream out;
  std::ostringstream err;
  run_command_named(command, args, out, err);
  // A command that parses twice (calibrate's subcommands re-parse) lists an option once.
  std::vector<OptionInfo> unique;
  for (OptionInfo& o : capture.options) {
    bool seen = false;
    for (const OptionInfo& u : unique) seen = seen || u.long_name == o.long_name;
    if (!seen) unique.push_back(std::move(o));
  }
  return unique;
}

std::string options_markdown() {
  std::ostringstream o;
  o << "| command | option | meaning |\n|---|---|---|\n";
  for (const CommandInfo& c : command_table()) {
    if (c.name == "calibrate") continue;  // its subcommands carry the options
    for (const OptionInfo& opt : command_options(c.name)) {
      if (opt.positional || opt.long_name == "help") continue;
      std::string description;
      for (const char ch : opt.description) {
        if (ch == '|') description += '\\';
        description += ch == '\n' ? ' ' : ch;
      }
      o << "| `" << c.name << "` | `--" << opt.long_name << (opt.takes_value ? " VALUE" : "")
        << "`";
      if (!opt.short_name.empty()) o << ", `-" << opt.short_name << "`";
      o << " | " << description << " |\n";
    }
  }
  return o.str();
}

}  // namespace syncsim::app
