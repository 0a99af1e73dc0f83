#pragma once
// `syncsim calibrate flow SCENARIO`: fits the flow backend's congestion-control correction
// (fabric.flow.cc_correction, sim/backends/flow_backend.hpp) against the packet model.
//
// The scenario supplies link classes (host, fabric), switch buffers, PFC, ECN, NIC (DCQCN) and
// transport settings; its topology, traffic and workload are replaced by small reference cases on a
// 2-leaf x 8-host spine-leaf fabric, so a calibration takes seconds at any scenario scale:
//   incast-N    N -> 1 incast (N = 2, 4, 8, 15) on the non-blocking fabric: the receiver's link is
//               the only bottleneck, so each case measures one contended link's efficiency
//               (fitted);
//   permutation one message per host to a seeded random other host, 2:1 oversubscribed (held out);
//   all_to_all  every host to every other, size/16 each, non-blocking (held out).
// Each case runs at packet level and at flow level without the correction; the efficiency is fitted
// on the incasts (calibration/flow_cc_fit.hpp), then every case runs again at flow level with it.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibration/flow_cc_fit.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

struct FlowCalibrationCase {
  std::string name{};
  uint32_t contended_flows = 0;  // flows on the one contended link (incasts), 0 when mixed
  bool fitted = false;           // used in the fit (else held out)
  double packet_s = 0;           // last completion, packet level
  double flow_s = 0;             // last completion, flow level, no correction
  double corrected_s = 0;        // last completion, flow level, fitted correction
};

struct FlowCalibration {
  int64_t message_bytes = 0;
  std::vector<FlowCalibrationCase> cases;
  calibration::FlowCcFit fit;
};

// Runs the reference cases with `scenario`'s link and congestion-control settings.
FlowCalibration calibrate_flow(const Scenario& scenario, int64_t message_bytes);

std::string flow_calibration_text(const FlowCalibration& c);
nlohmann::json flow_calibration_json(const FlowCalibration& c);
// The scenario snippet that applies the fit (`fabric.flow.cc_correction`).
std::string flow_calibration_yaml(const FlowCalibration& c, const std::string& source);

// `calibrate flow ...`; args exclude "calibrate flow". Returns the exit code.
int calibrate_flow_main(const std::vector<std::string>& args, std::ostream& out);

}  // namespace syncsim::app
