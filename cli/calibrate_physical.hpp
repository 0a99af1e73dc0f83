#pragma once
// The physical fit's part of `syncsim calibrate fit` (run/physical_fit.hpp does the work):
//   --scenario S [--set PATH=V]... [--parameters NAME,...] [--fit-fidelity F]
// fits the simulator's own parameters on S's fabric to the logs, prints them with their
// uncertainty and writes them to the profile's `physical:` block with --out.
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "calibration/nccl_tests_log.hpp"
#include "cli/command_line.hpp"
#include "run/physical_fit.hpp"

namespace syncsim::app {

// `calibrate fit`: --scenario, --set/--unset and the tuning flags below.
void add_physical_fit_options(po::options_description& options);
// --parameters, --fit-fidelity, --fit-max-size (also `calibrate report`'s).
void add_fit_tuning_options(po::options_description& options);
PhysicalFitOptions physical_fit_options(const CommandLine& cl);

// The fit when --scenario was given, else nullopt. Usage errors throw CalibrateUsageError.
std::optional<PhysicalFitResult> physical_fit_from_command_line(
    const CommandLine& cl, const std::vector<calibration::Measurement>& measured);

// The parameter table (and with `residuals` every point).
std::string physical_fit_text(const PhysicalFitResult& fit, bool residuals);
nlohmann::json physical_fit_json(const PhysicalFitResult& fit);
nlohmann::json physical_parameters_json(const calibration::PhysicalFit& fit);

// "fidelity" flag value -> Fidelity (analytic, flow, packet); throws CalibrateUsageError.
Fidelity parse_fit_fidelity(const std::string& text);

}  // namespace syncsim::app
