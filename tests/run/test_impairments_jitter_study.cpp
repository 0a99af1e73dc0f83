// The claim "a 5% packet jitter variance can degrade compute efficiency by over 30%", as
// scenarios/jitter-efficiency.yaml sets it up: what syncsim finds is a small loss of efficiency, in
// the expected direction, far below the claimed 30%.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

TEST_CASE("jitter-efficiency: 5% per-hop jitter costs well under 1% of MFU, not 30%") {
  const auto run = [](const std::string& stddev_fraction) {
    app::LoadOptions o;
    o.overrides = {
        app::parse_override("fabric.impairments.jitter.stddev_fraction=" + stddev_fraction)};
    return app::run_scenario(app::load_scenario_file(
        std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/jitter-efficiency.yaml", o));
  };
  const app::RunResult base = run("0");
  const app::RunResult jittered = run("0.05");
  REQUIRE(base.step);
  REQUIRE(jittered.step);
  const double degradation = 1.0 - jittered.step->mfu / base.step->mfu;
  MESSAGE("MFU " << base.step->mfu << " -> " << jittered.step->mfu << ": " << degradation * 100
                 << "% lower; step " << base.step->step.seconds() * 1e3 << " -> "
                 << jittered.step->step.seconds() * 1e3 << " ms");
  // Communication is significant in this workload (else the test would say nothing).
  CHECK(base.step->exposed_comm.seconds() > 0.2 * base.step->step.seconds());
  // Jitter delays packets, but with NCCL's two channels sharing the NIC it also reshuffles which
  // flow's packets go first, so the step can come out a hair shorter as well as longer: either
  // way by far less than 1% (seed 1: -0.007%), nowhere near the claimed 30%.
  CHECK(jittered.step->step != base.step->step);  // the jitter did act
  CHECK(std::abs(degradation) < 0.01);
}
