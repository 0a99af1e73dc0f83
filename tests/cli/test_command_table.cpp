// The command table (cli/command_table.hpp): every command's options come from the table its parser
// uses, and --help, the bash completion and docs/cli.md agree with them; errors as JSON.
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "cli/command_table.hpp"
#include "cli/error_report.hpp"
#include "run/report_page.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("command table: every command lists its options, and --help shows each of them") {
  for (const app::CommandInfo& c : app::command_table()) {
    if (c.name == "calibrate") continue;
    const auto options = app::command_options(c.name);
    CAPTURE(c.name);
    REQUIRE(!options.empty());
    std::vector<std::string> args;
    std::string command = c.name;
    if (const auto space = c.name.find(' '); space != std::string::npos) {
      command = c.name.substr(0, space);
      args.push_back(c.name.substr(space + 1));
    }
    args.emplace_back("--help");
    std::ostringstream out;
    std::ostringstream err;
    CHECK(app::run_command_named(command, args, out, err) == 0);
    for (const app::OptionInfo& o : options) {
      if (o.positional) continue;
      CAPTURE(o.long_name);
      CHECK(out.str().find("--" + o.long_name) != std::string::npos);
    }
  }
  CHECK(app::command_options("run").front().long_name == "help");
}

TEST_CASE("command table: docs/cli.md holds the generated option table") {
  const std::string doc = read_file(SYNCSIM_SOURCE_DIR "/docs/cli.md");
  const std::string begin = "<!-- options:begin -->\n";
  const std::string end = "<!-- options:end -->";
  const auto b = doc.find(begin);
  const auto e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  // Regenerate with: syncsim completion markdown
  CHECK(doc.substr(b + begin.size(), e - b - begin.size()) == app::options_markdown());
  // ... and every option of every parser is in it (a flag added to a command shows up here).
  for (const app::CommandInfo& c : app::command_table()) {
    if (c.name == "calibrate") continue;
    for (const app::OptionInfo& o : app::command_options(c.name)) {
      if (o.positional || o.long_name == "help") continue;
      CAPTURE(c.name);
      CHECK(doc.find("| `" + c.name + "` | `--" + o.long_name) != std::string::npos);
    }
  }
}

TEST_CASE("command table: the bash completion offers every command and flag") {
  const std::string script = app::bash_completion();
  CHECK(script.find("complete -o default -F _syncsim syncsim") != std::string::npos);
  for (const app::CommandInfo& c : app::command_table()) {
    if (c.name.find(' ') == std::string::npos)
      CHECK(script.find(c.name + " ") != std::string::npos);
    if (c.name == "calibrate") continue;
    CHECK(script.find("\"" + c.name + "\") flags=") != std::string::npos);
  }
  CHECK(script.find("--strict-memory") != std::string::npos);
  CHECK(script.find("--html") != std::string::npos);
  CHECK(app::usage_text().find("report RESULT.json|SWEEP.csv --html FILE.html") !=
        std::string::npos);
}

TEST_CASE("errors as JSON: a scenario error keeps file, line, column and path") {
  const app::ScenarioError e("bad.yaml", 6, 23, "fabric.links.host.bandwidth", "expected more");
  const auto j = app::error_json(app::error_report(e));
  CHECK(j.at("error").at("file") == "bad.yaml");
  CHECK(j.at("error").at("line") == 6);
  CHECK(j.at("error").at("column") == 23);
  CHECK(j.at("error").at("path") == "fabric.links.host.bandwidth");
  CHECK(j.at("error").at("message") == "expected more");
  const auto usage = app::error_json(app::error_report(app::UsageError("unknown option")));
  CHECK(usage.at("error").at("file").is_null());
  CHECK(usage.at("error").at("line").is_null());
  CHECK(usage.at("error").at("message") == "unknown option");
  const app::ReportInputError r("r.json", "link_tiers", "expected a list", 0, 0);
  CHECK(app::error_json(app::error_report(r)).at("error").at("path") == "link_tiers");
}
