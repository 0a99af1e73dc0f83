// The estimate on this machine's speed (run/machine_speed.hpp): the wall divided by the speed and
// nothing else, the probe's figure, and when it is taken.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "run/estimate.hpp"
#include "run/machine_speed.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

app::Scenario load_shipped(const std::string& name) {
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name,
                                 app::LoadOptions{});
}

}  // namespace

TEST_CASE("machine speed: an estimate on a faster machine divides the wall and nothing else") {
  const app::Scenario s = load_shipped("default.yaml");
  const app::Estimate reference = app::estimate_run(s, app::EstimateOptions{});
  CHECK(reference.machine_speed == 1);
  app::EstimateOptions faster;
  faster.machine_speed = 2.5;
  const app::Estimate e = app::estimate_run(s, faster);
  CHECK(e.machine_speed == 2.5);
  CHECK(e.wall_s == doctest::Approx(reference.wall_s / 2.5).epsilon(1e-12));
  CHECK(e.memory_bytes == reference.memory_bytes);
  CHECK(e.transfers == reference.transfers);
  // Scaling an estimate already on one machine to another keeps the reference figure behind it.
  app::Estimate moved = e;
  app::scale_to_machine(moved, 0.5);
  CHECK(moved.wall_s == doctest::Approx(reference.wall_s * 2).epsilon(1e-12));
  app::scale_to_machine(moved, 1);
  CHECK(moved.wall_s == doctest::Approx(reference.wall_s).epsilon(1e-12));
  CHECK(app::to_json(e).at("machine_speed").get<double>() == 2.5);
  CHECK(app::to_text(e).find("this machine 2.5x the reference") != std::string::npos);
  CHECK(app::to_text(reference).find("the reference") == std::string::npos);
}

TEST_CASE("machine speed: the probes measure, the environment overrides") {
  // The probes: the hold model's rate over the reference machine's, a positive finite number. Its
  // size depends on the machine and its load, so no timed bound is asserted (one failed on a
  // sanitized build beside other tests); docs/performance.md has the measurements.
  const double probed = app::probe_machine_speed();
  const double short_probed = app::short_probe_machine_speed();
  CHECK(std::isfinite(probed));
  CHECK(probed > 0);
  CHECK(std::isfinite(short_probed));
  CHECK(short_probed > 0);
  // The environment's figure stands in for both probes (read once per process, at the first call).
  REQUIRE(setenv("SYNCSIM_MACHINE_SPEED", "1.75", 1) == 0);
  CHECK(app::machine_speed() == 1.75);
  CHECK(app::machine_speed_for(app::kMachineSpeedMinWallS / 2) == 1.75);
  CHECK(app::machine_speed_for(app::kMachineSpeedMinWallS) == 1.75);
  CHECK(app::machine_speed_for(1000) == 1.75);
  unsetenv("SYNCSIM_MACHINE_SPEED");
}
