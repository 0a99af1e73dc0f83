// `syncsim validate [CASE_OR_GROUP...]`: the validation suite (validation/*.yaml) against public
// measurements. The work is in run/validate.cpp; this file parses flags and prints.
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
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
    "                        [--suite DIR] [--baseline FILE.csv] [--allowance PTS]\n"
    "\n"
    "Runs the validation cases (one YAML file per published source, docs/validation.md) and "
    "prints\n"
    "one row per measured value: case, quantity, measured, predicted, signed relative error,\n"
    "tolerance and verdict (pass, fail or inexpressible), then the mean and max |error| per group\n"
    "(collectives, training_steps, congestion). CASE_OR_GROUP picks cases by id or group.\n"
    "--baseline FILE.csv compares every value's error with a saved run's (--csv output; the\n"
    "suite's is validation/baseline.csv): a value whose |error| grew by more than --allowance\n"
    "percentage points (default 2), or that became inexpressible, is a regression.\n"
    "Exit code: 0 every compared value within its tolerance, 3 some not, 4 a regression against\n"
    "the baseline, 2 a bad case file or argument.\n";

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

// The (id, quantity, error) of every row of a saved `--csv` run.
std::vector<BaselineValue> read_baseline(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw UsageError("--baseline: cannot read " + path);
  std::ostringstream text;
  text << f.rdbuf();
  const CsvTable t = parse_csv(text.str(), path);
  const auto column = [&](const char* name) {
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      if (t.columns[i] == name) return i;
    }
    throw UsageError("--baseline: " + path + " has no column `" + name +
                     "` (expected the CSV of syncsim validate --csv)");
  };
  const std::size_t id = column("id"), quantity = column("quantity"), error = column("error");
  std::vector<BaselineValue> out;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    BaselineValue b{row[id], row[quantity], std::nullopt};
    if (!row[error].empty()) {
      double e = 0;
      auto [p, ec] = std::from_chars(row[error].data(), row[error].data() + row[error].size(), e);
      if (ec != std::errc() || p != row[error].data() + row[error].size()) {
        throw UsageError("--baseline: " + path + ":" + std::to_string(r + 2) +
                         ": error: expected a number, found \"" + row[error] + "\"");
      }
      b.error = e;
    }
    out.push_back(std::move(b));
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
      "folder of case files (*.yaml)")("baseline", po::value<std::string>()->value_name("FILE"),
                                       "a saved --csv run to check for regressions against")(
      "allowance", po::value<std::string>()->value_name("PTS"),
      "how many percentage points worse a value's |error| may get (default 2)");
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
  double allowance = 0.02;
  if (cl.has("allowance")) {
    const std::string& v = cl.get<std::string>("allowance");
    double pts = -1;
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), pts);
    if (ec != std::errc() || p != v.data() + v.size() || !(pts >= 0 && std::isfinite(pts))) {
      throw UsageError("--allowance: expected percentage points >= 0, found \"" + v + "\"");
    }
    allowance = pts / 100.0;
  }
  std::vector<BaselineValue> baseline;
  const bool with_baseline = cl.has("baseline");
  if (with_baseline) baseline = read_baseline(cl.get<std::string>("baseline"));
  const std::vector<ValidationCase> suite = load_validation_suite(cl.get<std::string>("suite"));
  std::vector<ValidationCase> cases;
  try {
    cases = select_cases(suite, cl.all("case"));
  } catch (const ValidationUsageError& e) {
    throw UsageError(e.what());
  }
  const ValidationReport report = run_validation(cases, jobs);
  const std::vector<Regression> regressions =
      with_baseline ? find_regressions(report, baseline, allowance) : std::vector<Regression>{};

  if (cl.has("json")) {
    nlohmann::ordered_json j = validation_json(report);
    if (with_baseline) {
      j["regressions"] = nlohmann::ordered_json::array();
      for (const Regression& g : regressions) {
        j["regressions"].push_back(
            {{"id", g.id},
             {"quantity", g.quantity},
             {"baseline_error", g.baseline_error ? nlohmann::ordered_json(*g.baseline_error)
                                                 : nlohmann::ordered_json()},
             {"error", g.error ? nlohmann::ordered_json(*g.error) : nlohmann::ordered_json()}});
      }
    }
    out << j.dump(2) << "\n";
  } else {
    out << validation_text(report);
    if (with_baseline) {
      out << regression_text(regressions, allowance);
      out << "# baseline: " << regressions.size() << " regression(s) against "
          << cl.get<std::string>("baseline") << "\n";
    }
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
  if (!regressions.empty()) return kValidationExitRegression;
  return validation_exit_code(report);
}

}  // namespace syncsim::app
