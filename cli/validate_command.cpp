// `syncsim validate [CASE_OR_GROUP...]`: the validation suite (validation/*.yaml) against public
// measurements. The work is in run/validate.cpp; this file parses flags and prints.
#include <charconv>
#include <fstream>
#include <ostream>
#include <sstream>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "cli/plot.hpp"
#include "run/validate.hpp"

#ifndef SYNCSIM_VALIDATION_DIR
#define SYNCSIM_VALIDATION_DIR "validation"
#endif

namespace syncsim::app {

namespace {

const char* kUsage =
    "usage: syncsim validate [CASE_OR_GROUP...] [--json] [--csv FILE] [--plot FILE.svg] "
    "[--jobs N]\n"
    "                        [--suite DIR]\n"
    "\n"
    "Runs the validation cases (one YAML file per published source, docs/validation.md) and "
    "prints\n"
    "one row per measured value: case, quantity, measured, predicted, signed relative error,\n"
    "tolerance and verdict (pass, fail or inexpressible), then the mean and max |error| per group\n"
    "(collectives, training_steps, congestion). CASE_OR_GROUP picks cases by id or group.\n"
    "Exit code: 0 every compared value within its tolerance, 3 some not, 2 a bad case file or\n"
    "argument.\n";

// The plot's data: measured against predicted, one series per group (compared values only).
std::string plot_csv(const ValidationReport& report) {
  std::string out = "measured,predicted,group\n";
  for (const ValidationRow& r : report.rows) {
    if (!r.predicted || !r.measured || !(*r.predicted > 0)) continue;
    std::ostringstream line;
    line.precision(10);
    line << *r.measured << "," << *r.predicted << "," << r.group << "\n";
    out += line.str();
  }
  return out;
}

}  // namespace

int validate_command(const std::vector<std::string>& args, std::ostream& out) {
  po::options_description opts("options");
  opts.add_options()("help,h", "show this help")(
      "json", "print one JSON object: `cases` (one per value) and `groups`")(
      "csv", po::value<std::string>(), "also write the rows as CSV to FILE")(
      "plot", po::value<std::string>(),
      "draw predicted against measured (log-log, y = x, one marker per group) with gnuplot to "
      "FILE.svg or FILE.png")("jobs,j", po::value<std::string>()->value_name("N"),
                              "values run in parallel on N threads (default 1)")(
      "suite", po::value<std::string>()->default_value(SYNCSIM_VALIDATION_DIR),
      "folder of case files (*.yaml)");
  po::options_description hidden;
  hidden.add_options()("case", po::value<std::vector<std::string>>(), "case ids or groups");
  po::options_description all;
  all.add(opts).add(hidden);
  po::positional_options_description pos;
  pos.add("case", -1);
  const CommandLine cl = parse_command_line(args, all, pos);
  if (cl.has("help")) {
    print_help(out, kUsage, opts);
    return 0;
  }
  unsigned jobs = 1;
  if (cl.has("jobs")) {
    const std::string& v = cl.get<std::string>("jobs");
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), jobs);
    if (ec != std::errc() || p != v.data() + v.size() || jobs == 0) {
      throw UsageError("--jobs: expected a positive integer, found \"" + v + "\"");
    }
  }
  std::string plot;
  if (cl.has("plot")) {
    plot = cl.get<std::string>("plot");
    if (!plot.ends_with(".svg") && !plot.ends_with(".png")) {
      throw UsageError("--plot: expected a file name ending in .svg or .png, found \"" + plot +
                       "\"");
    }
  }
  const std::vector<ValidationCase> suite = load_validation_suite(cl.get<std::string>("suite"));
  std::vector<ValidationCase> cases;
  try {
    cases = select_cases(suite, cl.all("case"));
  } catch (const ValidationUsageError& e) {
    throw UsageError(e.what());
  }
  const ValidationReport report = run_validation(cases, jobs);

  if (cl.has("json")) {
    out << validation_json(report).dump(2) << "\n";
  } else {
    out << validation_text(report);
  }
  if (cl.has("csv")) {
    const std::string path = cl.get<std::string>("csv");
    std::ofstream f(path, std::ios::binary);
    f << validation_csv(report);
    if (!f) throw UsageError("--csv: cannot write " + path);
  }
  if (!plot.empty()) {
    const std::string csv = plot + ".csv";
    {
      std::ofstream f(csv, std::ios::binary);
      f << plot_csv(report);
      if (!f) throw PlotError("cannot write " + csv);
    }
    std::ostringstream plot_out, plot_err;
    const int rc = plot_main({csv, "--x", "measured", "--y", "predicted", "--series", "group",
                              "--logx", "--logy", "--points", "--diagonal", "--out", plot,
                              "--title", "syncsim validate: predicted against measured", "--xlabel",
                              "measured (case units)", "--ylabel", "predicted (case units)"},
                             plot_out, plot_err);
    if (rc != 0) throw PlotError(plot_err.str());
    if (!cl.has("json")) out << "# " << plot_out.str();
  }
  return validation_exit_code(report);
}

}  // namespace syncsim::app
