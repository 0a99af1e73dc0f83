// The flow CC correction fitter (calibration/flow_cc_fit.hpp) on synthetic packet-level times.
#include <doctest/doctest.h>

#include <vector>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/flow_cc_fit.hpp"

using namespace syncsim::calibration;

namespace {

// Samples whose packet times follow the model at `efficiency`, times (1 + noise[i]).
std::vector<ContendedSample> synthetic(double efficiency, const std::vector<double>& noise) {
  std::vector<ContendedSample> out;
  const uint32_t flows[] = {2, 4, 8, 15};
  for (std::size_t i = 0; i < 4; ++i) {
    ContendedSample s{
        .flows = flows[i], .flow_time_s = 0, .flow_drain_s = 84e-6 * flows[i], .packet_time_s = 0};
    s.flow_time_s = s.flow_drain_s + 3e-6;  // 3 us of path latency
    s.packet_time_s = corrected_time_s(s, efficiency) * (1.0 + noise[i]);
    out.push_back(s);
  }
  return out;
}

}  // namespace

TEST_CASE("flow cc fit: recovers a known efficiency exactly from model data") {
  for (double e : {0.95, 0.8, 0.6}) {
    CAPTURE(e);
    const FlowCcFit fit = fit_contended_efficiency(synthetic(e, {0, 0, 0, 0}));
    CHECK(fit.contended_efficiency == doctest::Approx(e).epsilon(1e-9));
    CHECK_FALSE(fit.clamped);
    CHECK(fit.corrected_max_rel_error < 1e-9);
    CHECK(fit.uncorrected_max_rel_error > (1 - e) / 2);  // the uncorrected model is off
  }
}

TEST_CASE("flow cc fit: noisy data lands near the truth and the errors are reported") {
  const FlowCcFit fit = fit_contended_efficiency(synthetic(0.85, {0.01, -0.01, 0.005, -0.005}));
  CHECK(fit.contended_efficiency == doctest::Approx(0.85).epsilon(0.02));
  CHECK(fit.corrected_max_rel_error > 0.001);
  CHECK(fit.corrected_max_rel_error < 0.02);
  CHECK(fit.corrected_rms_rel_error <= fit.corrected_max_rel_error);
}

TEST_CASE("flow cc fit: packet faster than max-min clamps to no correction") {
  const FlowCcFit fit = fit_contended_efficiency(synthetic(1.0, {-0.05, -0.05, -0.05, -0.05}));
  CHECK(fit.contended_efficiency == 1.0);
  CHECK(fit.clamped);
}

TEST_CASE("flow cc fit: bad samples are FitErrors") {
  CHECK_THROWS_AS(fit_contended_efficiency({}), FitError);
  auto one_flow = synthetic(0.9, {0, 0, 0, 0});
  one_flow[1].flows = 1;
  CHECK_THROWS_AS(fit_contended_efficiency(one_flow), FitError);
  auto early = synthetic(0.9, {0, 0, 0, 0});
  early[0].packet_time_s = 1e-6;  // before the path latency
  CHECK_THROWS_AS(fit_contended_efficiency(early), FitError);
}
