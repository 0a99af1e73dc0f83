#pragma once
// `syncsim validate` (flags and printing: cli/validate_command.cpp): every measured value of the
// validation cases against syncsim's prediction for it, the signed relative error, a verdict per
// value and the mean and max absolute error per group. docs/validation.md describes the suite.
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "scenario/validation_case.hpp"

namespace syncsim::app {

// A case or group name on the command line that matches nothing (exit 2).
class ValidationUsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

enum class Verdict : uint8_t { Pass, Fail, Inexpressible };
std::string_view to_string(Verdict v);

// One measured value, judged.
struct ValidationRow {
  std::string id;
  std::string group;
  std::string quantity;
  std::string unit;
  std::optional<double> measured;   // in `unit`, as published
  std::optional<double> predicted;  // in `unit`; absent when inexpressible
  std::optional<double> error;      // (predicted - measured) / measured
  double tolerance = 0;             // relative
  Verdict verdict = Verdict::Inexpressible;
  std::string reason;  // the tolerance's reason, or what syncsim lacks
};

// Per group: `count` values compared (pass or fail), their mean and max |error| (absent when none
// was compared), and the values that could not be expressed.
struct GroupSummary {
  std::string group;
  std::size_t count = 0;
  std::optional<double> mean_abs_error;
  std::optional<double> max_abs_error;
  std::size_t inexpressible = 0;
};

struct ValidationReport {
  std::vector<ValidationRow> rows;   // case order (file name), then the order of `measured`
  std::vector<GroupSummary> groups;  // every group, in validation_group_names() order
};

// The cases whose id or group is one of `names` (every case when empty), in suite order. Throws
// ValidationUsageError for a name that matches neither.
std::vector<ValidationCase> select_cases(const std::vector<ValidationCase>& cases,
                                         const std::vector<std::string>& names);

// The row of one value from its prediction (in the value's unit; nullopt: inexpressible, with
// `why`): error and verdict. Pure.
ValidationRow judge(const ValidationCase& c, const MeasuredValue& v,
                    std::optional<double> predicted, const std::string& why = "");

// Mean and max |error| per group over `rows`. Pure.
std::vector<GroupSummary> summarize(const std::vector<ValidationRow>& rows);

// syncsim's prediction for one value, in the value's unit; nullopt with `why` set when the case or
// value is inexpressible. Loads the case's scenario with its and the value's overrides (a bad one
// throws ScenarioError) and runs it at the scenario's fidelity.
std::optional<double> predict(const ValidationCase& c, const MeasuredValue& v, std::string& why);

// Runs every value of `cases` on `jobs` threads; rows in case and value order whatever the
// threads. The first exception of a value is rethrown after all threads stopped.
ValidationReport run_validation(const std::vector<ValidationCase>& cases, unsigned jobs);

// 0 when every compared value is within its tolerance, 3 when some is not.
inline constexpr int kValidationExitFail = 3;
int validation_exit_code(const ValidationReport& report);

// A value's error as a committed baseline run recorded it (validation/baseline.csv, the suite's
// own --csv output): absent when that run could not express the value.
struct BaselineValue {
  std::string id;
  std::string quantity;
  std::optional<double> error;
};
// A value that got worse than the baseline: |error| grew by more than the allowance (an absolute
// difference of relative errors: 0.02 = 2 percentage points), or it was compared then and is
// inexpressible now.
struct Regression {
  std::string id;
  std::string quantity;
  std::optional<double> baseline_error;
  std::optional<double> error;
};
// The regressions of `report` against `baseline` (values missing from either side are not
// regressions: new cases, or cases since removed). In report order. Pure.
std::vector<Regression> find_regressions(const ValidationReport& report,
                                         const std::vector<BaselineValue>& baseline,
                                         double allowance);
// Exit code when some value regressed against the baseline (before any tolerance failure).
inline constexpr int kValidationExitRegression = 4;
// "id quantity: |error| 12.0% -> 15.3% (baseline ...)" lines, for the terminal.
std::string regression_text(const std::vector<Regression>& regressions, double allowance);

// {"cases": [{id, group, quantity, unit, measured, predicted, error, tolerance, verdict, reason}],
//  "groups": {GROUP: {count, mean_abs_error, max_abs_error, inexpressible}}}; absent numbers null.
nlohmann::ordered_json validation_json(const ValidationReport& report);
// The rows as CSV with the JSON's case keys as columns.
std::string validation_csv(const ValidationReport& report);
// One row per value, then the group lines: for the terminal.
std::string validation_text(const ValidationReport& report);

}  // namespace syncsim::app
