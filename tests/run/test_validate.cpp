// `syncsim validate`'s library part: errors, verdicts, group aggregation and exit codes on small
// synthetic cases, and predictions checked against the commands they stand for.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/collective_cmd.hpp"
#include "run/runner.hpp"
#include "run/validate.hpp"
#include "scenario/scenario_loader.hpp"
#include "scenario/units.hpp"

using namespace syncsim::app;

namespace {

// Two hosts of two GPUs on one leaf pair, analytic: a prediction takes milliseconds.
const std::string kFabric =
    "{name: t, fidelity: analytic, fabric: {topology: spine_leaf, spine_leaf: {leaves: 2, "
    "hosts_per_leaf: 1, spines: 1}, host: {gpus: 2, nics: 2}, links: {host: {bandwidth: 400Gbps, "
    "delay: 500ns}}}}";

std::string case_text(const std::string& metric, const std::string& values,
                      const std::string& extra = "") {
  // Appended piecewise: GCC 12 at -O3 reports a false -Wrestrict for a chain of `+`.
  std::string out =
      "id: t\ngroup: collectives\nsource: s\nhardware: h\nsoftware: w\nconditions: c\n";
  out.append(extra).append("scenario:\n  inline: ").append(kFabric);
  out.append("\nmetric: ").append(metric);
  out.append("\ntolerance: {relative: 0.1, reason: test}\nmeasured:\n").append(values);
  return out;
}

ValidationCase synthetic(const std::string& id, ValidationGroup group, double tolerance) {
  ValidationCase c;
  c.id = id;
  c.group = group;
  c.tolerance = tolerance;
  c.tolerance_reason = "because";
  return c;
}

MeasuredValue value(double v) {
  return MeasuredValue{.quantity = "q", .value = v, .unit = *find_measured_unit("GB/s")};
}

}  // namespace

TEST_CASE("judge: signed relative error and the tolerance boundary") {
  const ValidationCase c = synthetic("a", ValidationGroup::Collectives, 0.10);
  const ValidationRow low = judge(c, value(100), 80.0);
  CHECK(*low.error == doctest::Approx(-0.2));
  CHECK(low.verdict == Verdict::Fail);
  CHECK(low.reason == "because");
  const ValidationRow high = judge(c, value(100), 109.0);
  CHECK(*high.error == doctest::Approx(0.09));
  CHECK(high.verdict == Verdict::Pass);
  const ValidationRow none = judge(c, value(100), std::nullopt, "no preset");
  CHECK(none.verdict == Verdict::Inexpressible);
  CHECK(none.reason == "no preset");
  CHECK_FALSE(none.error);
}

TEST_CASE("summarize: mean and max |error| per group, inexpressible counted apart") {
  const ValidationCase coll = synthetic("a", ValidationGroup::Collectives, 0.5);
  const ValidationCase steps = synthetic("b", ValidationGroup::TrainingSteps, 0.5);
  const std::vector<ValidationRow> rows = {
      judge(coll, value(100), 90.0), judge(coll, value(100), 130.0),
      judge(coll, value(100), std::nullopt, "x"), judge(steps, value(10), std::nullopt, "y")};
  const std::vector<GroupSummary> g = summarize(rows);
  REQUIRE(g.size() == 3);
  CHECK(g[0].group == "collectives");
  CHECK(g[0].count == 2);
  CHECK(*g[0].mean_abs_error == doctest::Approx(0.2));
  CHECK(*g[0].max_abs_error == doctest::Approx(0.3));
  CHECK(g[0].inexpressible == 1);
  CHECK(g[1].group == "training_steps");
  CHECK(g[1].count == 0);
  CHECK_FALSE(g[1].mean_abs_error);
  CHECK(g[1].inexpressible == 1);
  CHECK(g[2].group == "congestion");

  ValidationReport report;
  report.rows = rows;
  CHECK(validation_exit_code(report) == 0);  // every compared value within 50 %
  report.rows.push_back(judge(coll, value(100), 200.0));
  CHECK(validation_exit_code(report) == kValidationExitFail);
  report.rows = {judge(coll, value(100), std::nullopt, "x")};
  CHECK(validation_exit_code(report) == 0);  // inexpressible is reported, never a failure
}

TEST_CASE("select_cases: by id or group, suite order kept, unknown names refused") {
  const std::vector<ValidationCase> cases = {synthetic("a", ValidationGroup::Collectives, 1),
                                             synthetic("b", ValidationGroup::TrainingSteps, 1),
                                             synthetic("c", ValidationGroup::Collectives, 1)};
  CHECK(select_cases(cases, {}).size() == 3);
  const auto coll = select_cases(cases, {"c", "collectives"});
  REQUIRE(coll.size() == 2);
  CHECK(coll[0].id == "a");
  CHECK(coll[1].id == "c");
  CHECK(select_cases(cases, {"b"}).at(0).id == "b");
  CHECK_THROWS_AS(select_cases(cases, {"nope"}), ValidationUsageError);
}

TEST_CASE("a collective prediction is the row `syncsim collective` prints") {
  const ValidationCase c = load_validation_case_text(
      case_text("{collective: all_reduce}",
                "  - {quantity: busbw, size: 64MiB, value: 40, unit: GB/s}\n"
                "  - {quantity: time, size: 8B, value: 5, unit: us}\n"),
      "case.yaml", ".");
  const ValidationReport report = run_validation({c}, 2);
  REQUIRE(report.rows.size() == 2);

  LoadOptions load;
  load.fabric_only_ok = true;
  const Scenario s = load_scenario_text(*c.scenario_inline, "inline", load);
  CollectiveSweepOptions o;
  o.min_bytes = o.max_bytes = 64 << 20;
  o.run.hbm_bytes_per_s = parse_bandwidth(kDefaultCollectiveHbm).bytes_per_second();
  const double busbw = run_collective_sweep(s, o).rows.at(0).out_of_place.busbw;
  o.min_bytes = o.max_bytes = 8;
  const double time_us = run_collective_sweep(s, o).rows.at(0).out_of_place.time_us;
  CHECK(*report.rows[0].predicted == doctest::Approx(busbw));
  CHECK(*report.rows[0].error == doctest::Approx((busbw - 40) / 40));
  CHECK(*report.rows[1].predicted == doctest::Approx(time_us));
  CHECK(busbw > 1);  // a real number came back, not a default
}

TEST_CASE("a run metric reads a result column; bad keys and units point at the case file") {
  std::string traffic = "scenario:\n  inline: ";
  traffic.append(kFabric).append("\n  set: ['traffic=[{pattern: ring_shift, size: 1MiB}]']\n");
  auto with = [&](const std::string& metric, const std::string& unit) {
    std::string entry = "  - {quantity: q, value: 1, unit: ";
    std::string text = case_text(metric, entry.append(unit).append("}\n"));
    // The inline scenario needs traffic for a run: add it through the case's `set`.
    std::string from = "scenario:\n  inline: ";
    from.append(kFabric).append("\n");
    text.replace(text.find(from), from.size(), traffic);
    return load_validation_case_text(text, "case.yaml", ".");
  };
  const ValidationCase ok = with("{run: sim_time_s}", "ms");
  std::string why;
  const auto predicted = predict(ok, ok.measured[0], why);
  REQUIRE(predicted);
  LoadOptions load;
  load.overrides = ok.overrides;
  const RunResult r = run_scenario(load_scenario_text(*ok.scenario_inline, "inline", load));
  CHECK(*predicted == doctest::Approx(r.sim_time_s * 1e3));

  const ValidationCase bad_key = with("{run: step_s}", "s");
  CHECK_THROWS_WITH_AS(predict(bad_key, bad_key.measured[0], why),
                       doctest::Contains("case.yaml:10:15: metric.run: expected a column of"),
                       ScenarioError);
  const ValidationCase bad_unit = with("{run: sim_time_s}", "GB/s");
  CHECK_THROWS_WITH_AS(predict(bad_unit, bad_unit.measured[0], why),
                       doctest::Contains("case.yaml:13:5: measured.0.unit: expected a unit of s"),
                       ScenarioError);
  const ValidationCase absent = with("{run: step_time_s}", "s");
  CHECK_THROWS_WITH_AS(predict(absent, absent.measured[0], why),
                       doctest::Contains("the scenario's run has no \"step_time_s\""),
                       ScenarioError);
}

TEST_CASE("validation JSON has exactly the documented keys") {
  const ValidationCase c = synthetic("a", ValidationGroup::Congestion, 0.1);
  ValidationReport report;
  report.rows = {judge(c, value(10), 11.0), judge(c, value(10), std::nullopt, "x")};
  report.groups = summarize(report.rows);
  const auto j = validation_json(report);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.at("cases").at(0).items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"id", "group", "quantity", "unit", "measured", "predicted",
                                         "error", "tolerance", "verdict", "reason"});
  CHECK(j["cases"][1]["predicted"].is_null());
  CHECK(j["cases"][1]["verdict"] == "inexpressible");
  std::vector<std::string> group_keys;
  for (const auto& [k, v] : j.at("groups").at("congestion").items()) group_keys.push_back(k);
  CHECK(group_keys ==
        std::vector<std::string>{"count", "mean_abs_error", "max_abs_error", "inexpressible"});
  CHECK(j["groups"]["collectives"]["mean_abs_error"].is_null());
  CHECK(validation_csv(report).find("a,congestion,q,GB/s,10,11,0.1") != std::string::npos);
}
