#pragma once
// `syncsim calibrate flow SCENARIO`: the flow backend's congestion-control correction fitted
// against the packet model (calibration/flow_calibration.hpp) with the scenario's network, printed
// as text or JSON, or written as the scenario snippet that applies it.
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "calibration/flow_calibration.hpp"

namespace syncsim::app {

std::string flow_calibration_text(const calibration::FlowCalibration& c);
nlohmann::json flow_calibration_json(const calibration::FlowCalibration& c);
// The scenario snippet that applies the fit (`fabric.flow.cc_correction`).
std::string flow_calibration_yaml(const calibration::FlowCalibration& c, const std::string& source);

// `calibrate flow ...`; args exclude "calibrate flow". Returns the exit code.
int calibrate_flow_main(const std::vector<std::string>& args, std::ostream& out);

}  // namespace syncsim::app
