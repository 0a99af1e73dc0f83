#pragma once
// `syncsim collective` past its flags (cli/collective_command.cpp parses them; the Python module's
// collective() fills the same request): which model times the rows (simulation, NCCL's cost model
// or a calibration profile's fitted line), the run, and the --json document. Both callers print or
// return this one document, so the CLI and Python share one schema.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "run/calibrated_collective.hpp"
#include "run/collective_cmd.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

// What times the rows: --model sim | nccl | calibrated, and --calibration FILE.
struct CollectiveModelRequest {
  // "sim", "nccl" or "calibrated"; nullopt: not given, so "calibrated" when a profile's fitted
  // lines are the model (--calibration or the scenario's collective.calibration), else "sim".
  std::optional<std::string> model{};
  std::optional<std::string> calibration_file{};  // replaces collective.calibration
};

struct CollectiveOutcome {
  CalibratedSweep result;
  std::string model;                                 // "sim", "nccl" or "calibrated" (as asked)
  std::optional<CollectiveCalibration> calibration;  // the profile in use, if any
  std::vector<std::string> warnings;                 // the scenario's, then the run's
};

// Throws CollectiveUsageError for an unknown model name (and, for a model that needs a profile,
// when there is none); the sweep's own errors as run_collective_sweep. Sets options.nccl_model
// from the model.
CollectiveOutcome run_collective_request(const Scenario& scenario, CollectiveSweepOptions options,
                                         const CollectiveModelRequest& request);

// `syncsim collective --json`: nccl-tests' header and rows (nccl_tests_json), then model,
// calibration (with a profile), nccl (channels and NVLS; simulated or cost-model rows) and
// warnings.
nlohmann::json collective_json(const Scenario& scenario, const CollectiveOutcome& outcome);

}  // namespace syncsim::app
