// `syncsim report FILE --html OUT.html`: reads a `syncsim run --json` result or a `syncsim sweep
// --csv` table and writes the self-contained page run/report_page.hpp draws.
#include <fstream>
#include <iterator>
#include <ostream>
#include <sstream>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "run/report_page.hpp"

namespace syncsim::app {

namespace {

constexpr const char* kUsage =
    "usage: syncsim report RESULT.json|SWEEP.csv --html FILE.html\n"
    "\n"
    "Writes one self-contained HTML page (inline CSS and SVG, no network needed to open it): for "
    "a\n"
    "`syncsim run --json` result the scenario summary, the fabric's tiers coloured by link\n"
    "utilisation, the step breakdown, the first ranks' timeline and the most paused ports; for a\n"
    "`syncsim sweep --csv` table every varying result column plotted against each swept axis.\n";

}  // namespace

po::options_description report_options() {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")("html", po::value<std::string>(),
                                                 "write the page to this file (required)")(
      "input", po::value<std::string>(), "the run result (JSON) or sweep table (CSV) to draw")(
      "json", "on bad input, print the error as a JSON object on stdout");
  return opts;
}

int report_command(const std::vector<std::string>& args, std::ostream& out) {
  const po::options_description opts = report_options();
  po::positional_options_description pos;
  pos.add("input", 1);
  const CommandLine cl = parse_command_line(args, opts, pos);
  if (cl.has("help")) {
    print_help(out, kUsage, opts);
    return 0;
  }
  if (!cl.has("input")) throw UsageError("expected a RESULT.json or SWEEP.csv file to draw");
  if (!cl.has("html")) throw UsageError("expected --html FILE.html (where to write the page)");
  const std::string input = cl.get<std::string>("input");
  std::ifstream in(input, std::ios::binary);
  if (!in) throw ReportInputError(input, "", "cannot read the file");
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const std::string html = report_page(input, text);
  const std::string path = cl.get<std::string>("html");
  std::ofstream file(path, std::ios::binary);
  if (!file || !(file << html) || !file.flush()) {
    throw UsageError("cannot write the page to " + path);
  }
  return 0;
}

}  // namespace syncsim::app
