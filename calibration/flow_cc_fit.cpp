#include "calibration/flow_cc_fit.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <string>

#include "calibration/alpha_beta_fit.hpp"

namespace syncsim::calibration {

namespace {

double efficiency(uint32_t flows, double contended_efficiency) {
  return 1.0 - (1.0 - contended_efficiency) * (1.0 - 1.0 / static_cast<double>(flows));
}

}  // namespace

double corrected_time_s(const ContendedSample& s, double contended_efficiency) {
  return s.flow_drain_s / efficiency(s.flows, contended_efficiency) +
         (s.flow_time_s - s.flow_drain_s);
}

FlowCcFit fit_contended_efficiency(const std::vector<ContendedSample>& samples) {
  if (samples.empty()) throw FitError("flow CC correction: expected contended samples, found none");
  const auto n = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd x(n, 1);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const ContendedSample& s = samples[static_cast<std::size_t>(i)];
    const double latency = s.flow_time_s - s.flow_drain_s;
    if (s.flows < 2 || !(s.flow_drain_s > 0) || !(latency >= 0) || !(s.packet_time_s > latency)) {
      throw FitError(
          "flow CC correction: sample " + std::to_string(i) +
          ": expected >= 2 flows, a positive drain within the flow time and a packet time "
          "beyond the path latency");
    }
    x(i, 0) = 1.0 - 1.0 / static_cast<double>(s.flows);
    y(i) = 1.0 - s.flow_drain_s / (s.packet_time_s - latency);
  }
  const double loss = x.colPivHouseholderQr().solve(y)(0);
  FlowCcFit fit;
  fit.contended_efficiency = 1.0 - loss;
  // Packet faster than max-min (loss < 0) cannot be expressed as an efficiency: no correction.
  if (fit.contended_efficiency > 1.0) {
    fit.contended_efficiency = 1.0;
    fit.clamped = true;
  } else if (fit.contended_efficiency < 0.01) {
    fit.contended_efficiency = 0.01;
    fit.clamped = true;
  }
  double sum_sq = 0;
  for (const ContendedSample& s : samples) {
    const double raw = std::abs(s.flow_time_s - s.packet_time_s) / s.packet_time_s;
    const double corrected =
        std::abs(corrected_time_s(s, fit.contended_efficiency) - s.packet_time_s) / s.packet_time_s;
    fit.uncorrected_max_rel_error = std::max(fit.uncorrected_max_rel_error, raw);
    fit.corrected_max_rel_error = std::max(fit.corrected_max_rel_error, corrected);
    sum_sq += corrected * corrected;
  }
  fit.corrected_rms_rel_error = std::sqrt(sum_sq / static_cast<double>(samples.size()));
  return fit;
}

}  // namespace syncsim::calibration
