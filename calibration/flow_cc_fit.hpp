#pragma once
// Fit of the flow backend's congestion-control correction (sim/backends/flow_backend.hpp,
// FlowCcCorrection) against packet-level reference runs.
//
// A sample is one contended reference case whose bottleneck is a single contended link carrying
// `flows` flows (an N-to-1 incast): the uncorrected flow model's completion time, the part of it
// that is the fluid drain through that link, and the packet model's completion time. The flow
// model's remaining time (flow_time - flow_drain) is path latency, which the correction leaves
// alone, so the packet model's observed efficiency is
//     e_i = flow_drain / (packet_time - (flow_time - flow_drain)),
// and the model efficiency(n) = 1 - a * (1 - 1/n), a = 1 - contended_efficiency, is linear in a:
//     1 - e_i = a * (1 - 1/n_i),
// fitted by least squares (Eigen). Errors are reported on completion times:
//     predicted_i = flow_drain / efficiency(n_i) + (flow_time - flow_drain).
#include <cstdint>
#include <vector>

namespace syncsim::calibration {

struct ContendedSample {
  uint32_t flows = 0;        // flows sharing the contended link (>= 2)
  double flow_time_s = 0;    // uncorrected flow-level completion time
  double flow_drain_s = 0;   // its fluid drain through the contended link
  double packet_time_s = 0;  // packet-level completion time
};

struct FlowCcFit {
  double contended_efficiency = 1.0;  // clamped to (0, 1]
  bool clamped = false;               // the unclamped fit was outside (0, 1]
  // Relative errors of completion time against the packet model over the samples.
  double uncorrected_max_rel_error = 0;
  double corrected_max_rel_error = 0;
  double corrected_rms_rel_error = 0;
};

// Throws FitError (calibration/alpha_beta_fit.hpp) without a sample, or on a sample with < 2 flows
// or non-positive times.
FlowCcFit fit_contended_efficiency(const std::vector<ContendedSample>& samples);

// Completion time the corrected flow model gives for a sample at this efficiency.
double corrected_time_s(const ContendedSample& s, double contended_efficiency);

}  // namespace syncsim::calibration
