#pragma once
// The flow backend's congestion-control correction (fabric.flow.cc_correction,
// sim/backends/flow_backend.hpp) fitted against the packet model.
//
// `network` supplies the link classes (host, fabric), switch buffers, ECMP hashing, PFC, ECN, ETS,
// NIC (DCQCN) and transport settings; its topology is replaced by small reference cases on a
// 2-leaf x 8-host spine-leaf fabric, so a calibration takes seconds at any network scale:
//   incast-N    N -> 1 incast (N = 2, 4, 8, 15) on the non-blocking fabric: the receiver's link is
//               the only bottleneck, so each case measures one contended link's efficiency
//               (fitted);
//   permutation one message per host to a seeded random other host, 2:1 oversubscribed (held out);
//   all_to_all  every host to every other, size/16 each, non-blocking (held out).
// Each case runs at packet level and at flow level without the correction; the efficiency is fitted
// on the incasts (calibration/flow_cc_fit.hpp), then every case runs again at flow level with it.
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/flow_cc_fit.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::calibration {

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
  FlowCcFit fit;
};

// The reference cases with `network`'s link classes and behaviour; `seed` seeds each run (the
// permutation and every random stream). Throws std::invalid_argument when `message_bytes` < 16 or
// `network` has no host/fabric link classes, FitError when a case leaves messages unfinished.
FlowCalibration calibrate_flow(const net::NetworkSpec& network, int64_t message_bytes,
                               uint64_t seed);

}  // namespace syncsim::calibration
