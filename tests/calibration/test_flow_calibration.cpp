// The flow-CC experiment on a network built by hand (no scenario): under PFC alone the packet
// model drains an incast at line rate, as max-min does, so there is nothing to correct; bad inputs
// are refused before anything runs.
#include <doctest/doctest.h>

#include <stdexcept>

#include "calibration/flow_calibration.hpp"

using namespace syncsim;

namespace {

net::NetworkSpec pfc_only_100g() {
  net::NetworkSpec n;
  n.link_classes.push_back(net::LinkParams{.name = "host"});
  n.link_classes.push_back(net::LinkParams{.name = "fabric"});
  n.pfc.enabled = true;
  return n;
}

}  // namespace

TEST_CASE("flow calibration: under PFC alone max-min is right and the fit asks for no correction") {
  const calibration::FlowCalibration c =
      calibration::calibrate_flow(pfc_only_100g(), int64_t{1} << 20, 1);
  REQUIRE(c.cases.size() == 6);
  CHECK(c.fit.contended_efficiency == 1.0);
  CHECK(c.fit.uncorrected_max_rel_error < 0.01);
  for (const auto& k : c.cases) {
    CAPTURE(k.name);
    CHECK(k.packet_s > 0);
    CHECK(k.corrected_s == k.flow_s);
  }
  // An N -> 1 incast drains N messages through one 100G host link: at least N * size / payload
  // rate, and at most that plus the path's latency (4 links of 1 us, store-and-forward of a few
  // 4 KiB packets): PFC loses no throughput on a single bottleneck.
  const double payload_Bps = 100e9 / 8 * 4096.0 / 4160.0;
  for (const auto& k : c.cases) {
    if (!k.fitted) continue;
    CAPTURE(k.name);
    const double drain_s = k.contended_flows * 1024.0 * 1024 / payload_Bps;
    CHECK(k.packet_s >= drain_s);
    CHECK(k.packet_s < drain_s + 10e-6);
  }
}

TEST_CASE("flow calibration: messages under 16 B or a network without link classes are refused") {
  CHECK_THROWS_AS(calibration::calibrate_flow(pfc_only_100g(), 8, 1), std::invalid_argument);
  CHECK_THROWS_AS(calibration::calibrate_flow(net::NetworkSpec{}, 1 << 20, 1),
                  std::invalid_argument);
}
