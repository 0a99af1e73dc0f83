// `syncsim calibrate report`: measured vs calibrated vs simulated, side by side.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "calibration/nccl_tests_log.hpp"
#include "calibration/profile.hpp"
#include "cli/calibrate_cmd.hpp"
#include "cli/calibrate_report.hpp"
#include "run/collective_cmd.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/calibration/nccl_log_gen.hpp"

using namespace syncsim;

namespace {

const char* kNode = R"(name: node
fidelity: analytic
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 1, hosts_per_leaf: 1, spines: 1}
  host: {gpus: 8, nics: 8}
traffic:
  - {pattern: ring_shift, size: 1MiB}
)";

std::vector<calibration::Measurement> generated(int64_t min_bytes = 1024) {
  test::LogGen g;
  g.min_bytes = min_bytes;
  g.max_bytes = int64_t{1} << 28;
  g.latency_us = 30.0;
  g.algbw_GBps = 120.0;
  g.noise_rel = 0.01;
  return calibration::parse_nccl_tests_log(g.text(), "g.log").measurements;
}

}  // namespace

TEST_CASE(
    "calibrate report: the fitted column tracks the log, the simulated one is the scenario's") {
  const app::Scenario s = app::load_scenario_text(kNode, "node.yaml");
  const auto ms = generated();
  const app::CalibrationReport r = app::make_calibration_report(ms, "", &s);
  CHECK(r.profile == "fitted from the logs");
  CHECK(r.scenario == "node");
  CHECK(r.warnings.empty());
  REQUIRE(r.lines.size() == 1);
  const app::ReportLine& l = r.lines[0];
  CHECK(l.op == "all_reduce");
  CHECK(l.ranks == 8);
  CHECK(l.bus_factor == doctest::Approx(1.75));
  REQUIRE(l.rows.size() == 19);  // 1 KiB .. 256 MiB
  for (const auto& row : l.rows) {
    REQUIRE(row.calibrated_us.has_value());
    REQUIRE(row.simulated_us.has_value());
    // measured = mean of the out-of-place and in-place blocks of that size.
    double sum = 0;
    int n = 0;
    for (const auto& m : ms) {
      if (m.bytes == row.bytes) {
        sum += m.time_us;
        ++n;
      }
    }
    CHECK(row.measured_us == doctest::Approx(sum / n));
    CHECK(*row.calibrated_rel_error() ==
          doctest::Approx((*row.calibrated_us - row.measured_us) / row.measured_us));
  }
  REQUIRE(l.calibrated_max_error_ge_1mib.has_value());
  CHECK(*l.calibrated_max_error_ge_1mib < 0.05);
  // The uncalibrated simulator's column is the same as `syncsim collective` on the scenario.
  app::CollectiveSweepOptions o;
  o.ranks = 8;
  o.min_bytes = o.max_bytes = int64_t{1} << 24;
  const auto sim = app::run_collective_sweep(s, o);
  bool found = false;
  for (const auto& row : l.rows) {
    if (row.bytes == o.min_bytes) {
      CHECK(*row.simulated_us == sim.rows[0].out_of_place.time_us);
      found = true;
    }
  }
  CHECK(found);
  // And it is a different model: its error is not the fit's.
  CHECK(*l.simulated_max_error > *l.calibrated_max_error);

  const auto j = app::report_json(r);
  CHECK(j["lines"][0]["rows"][0].contains("calibrated_rel_error"));
  CHECK(j["lines"][0]["rows"][0].contains("simulated_rel_error"));
  CHECK(j["scenario"]["fidelity"] == "analytic");
  const std::string csv = app::report_plot_csv(r);
  CHECK(csv.find(",measured,") != std::string::npos);
  CHECK(csv.find(",calibrated,") != std::string::npos);
  CHECK(csv.find(",simulated,") != std::string::npos);
  CHECK(app::report_text(r).find("max |rel_err|: calibrated") != std::string::npos);
}

TEST_CASE("calibrate report: a profile without the line, and a scenario too small, say so") {
  const auto dir = std::filesystem::temp_directory_path() / "syncsim-report-test";
  std::filesystem::create_directories(dir);
  calibration::CalibrationProfile p;
  calibration::CollectiveProfile c;
  c.op = "all_gather";
  c.ranks = 8;
  c.regimes.push_back({0, 1 << 30, 10.0, 100.0});
  p.collectives.push_back(c);
  const std::string path = (dir / "ag.yaml").string();
  calibration::write_profile_file(p, path);
  const std::string small = std::string(kNode).replace(std::string(kNode).find("gpus: 8, nics: 8"),
                                                       16, "gpus: 4, nics: 4");
  const app::Scenario s = app::load_scenario_text(small, "small.yaml");
  const app::CalibrationReport r = app::make_calibration_report(generated(1 << 20), path, &s);
  CHECK(r.profile == path);
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0].find("no all_reduce line for 8 ranks") != std::string::npos);
  CHECK(r.warnings[1].find("no simulated column") != std::string::npos);
  for (const auto& row : r.lines[0].rows) {
    CHECK_FALSE(row.calibrated_us.has_value());
    CHECK_FALSE(row.simulated_us.has_value());
  }
  CHECK_FALSE(r.lines[0].calibrated_max_error.has_value());

  // Through the command: JSON, and usage errors.
  std::ostringstream out;
  const std::string log_path = SYNCSIM_TEST_DATA_DIR "/nccl/all_reduce_8r.log";
  CHECK(app::calibrate_main({"report", log_path, "--profile", path, "--json"}, out) == 0);
  const auto j = nlohmann::json::parse(out.str());
  CHECK(j["profile"] == path);
  CHECK(j["warnings"].size() == 1);
  CHECK_THROWS_AS(app::calibrate_main({"report"}, out), app::CalibrateUsageError);
  CHECK_THROWS_AS(app::calibrate_main({"report", "x.log", "--set", "fidelity=flow"}, out),
                  app::CalibrateUsageError);
  CHECK_THROWS_AS(app::calibrate_main({"report", "x.log", "--plot", "a.pdf"}, out),
                  app::CalibrateUsageError);
  std::filesystem::remove_all(dir);
}
