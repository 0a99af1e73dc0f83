#pragma once
// A validation case (validation/*.yaml) -> a plain ValidationCase: one published measurement (or
// several from one source), the scenario that should reproduce it and how the simulated value is
// read. yaml-cpp stays inside scenario/*.cpp; errors are ScenarioErrors at file:line:col, and
// unknown keys are errors, as in scenarios. docs/validation.md describes the format.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective_plan.hpp"
#include "scenario/scenario_loader.hpp"

namespace syncsim::app {

// The groups the suite reports separately (`group:`), in report order.
enum class ValidationGroup : uint8_t { Collectives, TrainingSteps, Congestion };
std::string_view to_string(ValidationGroup group);
std::vector<std::string> validation_group_names();

// What a measured unit measures. A metric's simulated value is compared only with a measured value
// of the same dimension.
enum class UnitDimension : uint8_t { Time, Bandwidth, Throughput, Ratio };
std::string_view to_string(UnitDimension dimension);

// A unit a measurement may be written in: "us", "ms", "s" (time, to seconds), "GB/s" (1e9 B/s, as
// nccl-tests prints busbw), "tokens/s", "%" (a ratio, 0.01) and "-" (a plain ratio).
struct MeasuredUnit {
  std::string name;
  UnitDimension dimension = UnitDimension::Ratio;
  double scale = 1;  // value * scale = the quantity in seconds, GB/s, tokens/s or a plain ratio
};
// nullopt for a unit not in the list above.
std::optional<MeasuredUnit> find_measured_unit(std::string_view name);
std::string measured_unit_names();

// Where a key sits in its case file, for errors found only when the case runs (a result key the
// schema does not know, a unit that does not match the metric).
struct CasePosition {
  std::string file;
  int line = 0;
  int column = 0;
  std::string path;
};

// `metric: {collective: OP, ranks: N, bandwidth: busbw|algbw}`: one row of `syncsim collective
// --op OP --ranks N -b SIZE -e SIZE` per measured value (its `size`); a time unit reads the
// row's time, a GB/s unit its busbw (or algbw).
struct CollectiveMetric {
  models::CollectiveOp op = models::CollectiveOp::AllReduce;
  uint32_t ranks = 0;  // 0: every GPU of the fabric
  bool algbw = false;  // bandwidth units read algbw instead of nccl-tests' busbw
};

// `metric: {run: KEY, per_gpu: BOOL}`: a column of `syncsim run --json` (result schema column name,
// e.g. step_time_s, mfu, tokens_per_s), divided by the job's GPUs when per_gpu.
struct RunMetric {
  std::string key;
  CasePosition where;
  bool per_gpu = false;
};

struct ValidationMetric {
  std::optional<CollectiveMetric> collective;
  std::optional<RunMetric> run;
  CasePosition where;
};

// One published value (`measured:` entry).
struct MeasuredValue {
  std::string quantity;  // what was measured, e.g. "busbw at 1 MiB"
  // The number as published; absent only in an inexpressible case whose source gives no number
  // that could be checked.
  std::optional<double> value;
  MeasuredUnit unit;
  std::optional<int64_t> size{};      // bytes, for a collective metric
  std::vector<Override> overrides{};  // this value's `set:`, after the case's
  std::string inexpressible{};        // this value alone cannot be expressed (why)
  CasePosition where{};
};

struct ValidationCase {
  std::string file;
  std::string id;
  CasePosition id_where;  // for a duplicate id across files
  ValidationGroup group = ValidationGroup::Collectives;
  std::string source, hardware, software, conditions;
  // The scenario: a file (resolved against the case file's folder, then its parent) or an inline
  // map (as YAML text, loaded under the name `inline_source`). Neither for an inexpressible case.
  std::optional<std::string> scenario_file;
  std::optional<std::string> scenario_inline;
  std::string inline_source;
  std::vector<Override> overrides;  // `scenario.set`
  std::optional<ValidationMetric> metric;
  double tolerance = 0;  // relative, e.g. 0.15
  std::string tolerance_reason;
  std::string inexpressible;  // what syncsim lacks to express the case; empty when it can
  std::vector<MeasuredValue> measured;
};

// Reads one case; `base_dir` resolves a relative scenario file. Throws ScenarioError.
ValidationCase load_validation_case_text(const std::string& yaml_text,
                                         const std::string& source_name,
                                         const std::string& base_dir);
ValidationCase load_validation_case_file(const std::string& path);
// Every *.yaml file of `dir`, in file-name order; a duplicate id is an error at its `id`.
std::vector<ValidationCase> load_validation_suite(const std::string& dir);

}  // namespace syncsim::app
