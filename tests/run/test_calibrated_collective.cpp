// A fitted profile drives `syncsim collective` and the step model's bucket all-reduces, and
// reproduces the nccl-tests sweep it was fitted on.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/nccl_tests_log.hpp"
#include "calibration/profile.hpp"
#include "run/calibrated_collective.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/calibration/nccl_log_gen.hpp"

using namespace syncsim;

namespace {

// 4 hosts x 2 GPUs on an analytic fabric: quick to simulate.
std::string scenario_text(const std::string& collective_extra, const std::string& workload = "") {
  return R"(name: calibrated-collective
fidelity: analytic
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  host: {gpus: 2, nics: 2}
collective:
  algorithm: ring
)" + collective_extra +
         (workload.empty() ? "traffic:\n  - pattern: permutation\n    size: 1MiB\n" : workload);
}

calibration::CollectiveProfile line(const std::string& op, int ranks,
                                    std::vector<calibration::Regime> regimes) {
  calibration::CollectiveProfile c;
  c.op = op;
  c.ranks = ranks;
  c.regimes = std::move(regimes);
  return c;
}

// The profile that `syncsim calibrate fit LOG --out` would write for `log`, read back from its
// YAML.
app::CollectiveCalibration fitted_profile(const std::string& log) {
  const auto parsed = calibration::parse_nccl_tests_log(log, "gen.log");
  calibration::CalibrationProfile p;
  for (const auto& f : calibration::fit_collectives(parsed.measurements))
    p.collectives.push_back(calibration::to_profile(f));
  const auto back = calibration::parse_profile_yaml(calibration::write_profile_yaml(p), "p.yaml");
  return {"p.yaml", back.collectives};
}

struct Reproduction {
  double max_error_ge_1mib = 0;   // vs the log's measured times (noise included)
  double max_error_vs_model = 0;  // vs the noiseless generating model
  int rows = 0;
};

// Runs `syncsim collective` with the fitted profile over the log's sizes and compares row by row.
Reproduction reproduce(const test::LogGen& gen) {
  const std::string log = gen.text();
  const app::CollectiveCalibration cal = fitted_profile(log);
  const app::Scenario s = app::load_scenario_text(scenario_text(""), "s.yaml");
  app::CollectiveSweepOptions o;
  o.op = models::CollectiveOp::AllReduce;
  o.ranks = static_cast<uint32_t>(gen.ranks);
  o.min_bytes = gen.min_bytes;
  o.max_bytes = gen.max_bytes;
  const app::CalibratedSweep sim = app::run_calibrated_sweep(s, o, cal);
  REQUIRE(sim.calibrated);
  CHECK(sim.warnings.empty());
  const auto measured = calibration::parse_nccl_tests_log(log, "gen.log").measurements;
  Reproduction r;
  for (const auto& row : sim.sweep.rows) {
    if (row.size < (int64_t{1} << 20)) continue;
    for (const auto& m : measured) {
      if (m.bytes != row.size) continue;
      r.max_error_ge_1mib =
          std::max(r.max_error_ge_1mib, std::abs(row.out_of_place.time_us - m.time_us) / m.time_us);
    }
    const double model = gen.model_us(row.size);
    r.max_error_vs_model =
        std::max(r.max_error_vs_model, std::abs(row.out_of_place.time_us - model) / model);
    ++r.rows;
  }
  return r;
}

// The generators of the committed logs tests/data/nccl/all_reduce_8r.log (one line, 1% noise)
// and all_reduce_8r_two_regimes.log (LL-like below 256 KiB, Simple-like above, 1% noise).
test::LogGen one_regime_log() {
  test::LogGen g;
  g.latency_us = 25.0;
  g.algbw_GBps = 160.0;
  g.noise_rel = 0.01;
  g.seed = 7;
  return g;
}

test::LogGen two_regime_log() {
  test::LogGen g;
  g.latency_us = 12.0;
  g.algbw_GBps = 20.0;
  g.switch_bytes = int64_t{1} << 18;
  g.latency2_us = 40.0;
  g.algbw2_GBps = 180.0;
  g.noise_rel = 0.01;
  g.seed = 11;
  return g;
}

}  // namespace

TEST_CASE("calibrated collective: regimes by size, exact (op, ranks) only") {
  app::CollectiveCalibration cal;
  cal.file = "p.yaml";
  cal.collectives.push_back(
      line("all_reduce", 8, {{0, 65535, 10.0, 20.0}, {65536, 1 << 30, 40.0, 200.0}}));
  cal.collectives.push_back(line("all_gather", 8, {{0, 1 << 30, 5.0, 100.0}}));
  const auto* ar = app::find_collective_fit(cal, models::CollectiveOp::AllReduce, 8);
  REQUIRE(ar != nullptr);
  CHECK(app::find_collective_fit(cal, models::CollectiveOp::AllReduce, 16) == nullptr);
  CHECK(app::find_collective_fit(cal, models::CollectiveOp::ReduceScatter, 8) == nullptr);
  // time_us = latency_us + bytes / (1000 * algbw_GBps), regime by size; beyond the last: the last.
  CHECK(app::calibrated_time_us(*ar, 1000) == doctest::Approx(10.0 + 1000 / 20e3));
  CHECK(app::calibrated_time_us(*ar, 65535) == doctest::Approx(10.0 + 65535 / 20e3));
  CHECK(app::calibrated_time_us(*ar, 65536) == doctest::Approx(40.0 + 65536 / 200e3));
  CHECK(app::calibrated_time_us(*ar, int64_t{4} << 30) ==
        doctest::Approx(40.0 + 4294967296.0 / 200e3));
  const std::string miss = app::calibration_miss(cal, models::CollectiveOp::AllReduce, 16);
  CHECK(miss.find("no all_reduce line for 16 ranks") != std::string::npos);
  CHECK(miss.find("all_gather at 8") != std::string::npos);
}

TEST_CASE(
    "calibrated collective: a sweep follows the line; a missing rank count is simulated, with a "
    "warning") {
  app::CollectiveCalibration cal;
  cal.file = "p.yaml";
  cal.collectives.push_back(line("all_reduce", 8, {{0, 1 << 20, 30.0, 150.0}}));
  const app::Scenario s = app::load_scenario_text(scenario_text(""), "s.yaml");
  app::CollectiveSweepOptions o;
  o.ranks = 8;
  o.min_bytes = 1 << 16;
  o.max_bytes = 1 << 22;
  o.step_factor = 4;
  const app::CalibratedSweep c = app::run_calibrated_sweep(s, o, cal);
  CHECK(c.calibrated);
  REQUIRE(c.sweep.rows.size() == 4);
  for (const auto& row : c.sweep.rows) {
    CHECK(row.out_of_place.time_us ==
          doctest::Approx(30.0 + static_cast<double>(row.size) / 150e3));
    CHECK(row.out_of_place.busbw == doctest::Approx(row.out_of_place.algbw * 2 * 7 / 8.0));
    CHECK(row.algorithm == "calibrated");
  }
  // 4 MiB is past the fitted range (1 MiB): extrapolated, and said so.
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("extrapolated") != std::string::npos);

  // 4 ranks: no line; the rows are exactly the simulator's, and a warning says so.
  o.ranks = 4;
  const app::CalibratedSweep f = app::run_calibrated_sweep(s, o, cal);
  CHECK_FALSE(f.calibrated);
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0].find("simulated") != std::string::npos);
  const app::CollectiveSweep plain = app::run_collective_sweep(s, o);
  REQUIRE(plain.rows.size() == f.sweep.rows.size());
  for (std::size_t i = 0; i < plain.rows.size(); ++i) {
    CHECK(f.sweep.rows[i].out_of_place.time_us == plain.rows[i].out_of_place.time_us);
    CHECK(f.sweep.rows[i].out_of_place.time_us !=
          doctest::Approx(30.0 + static_cast<double>(f.sweep.rows[i].size) / 150e3));
  }
}

TEST_CASE(
    "calibrated collective: fit -> profile -> syncsim collective reproduces the log within 5% from "
    "1 MiB") {
  SUBCASE("one line, 1% noise") {
    const Reproduction r = reproduce(one_regime_log());
    MESSAGE("one regime: max error vs log ", r.max_error_ge_1mib, ", vs model ",
            r.max_error_vs_model, " over ", r.rows, " sizes");
    CHECK(r.rows == 11);  // 1 MiB .. 1 GiB
    CHECK(r.max_error_ge_1mib < 0.05);
    CHECK(r.max_error_vs_model < 0.02);
  }
  SUBCASE("two regimes (LL-like below 256 KiB, Simple-like above), 1% noise") {
    const Reproduction r = reproduce(two_regime_log());
    MESSAGE("two regimes: max error vs log ", r.max_error_ge_1mib, ", vs model ",
            r.max_error_vs_model, " over ", r.rows, " sizes");
    CHECK(r.rows == 11);
    CHECK(r.max_error_ge_1mib < 0.05);
    CHECK(r.max_error_vs_model < 0.02);
  }
  SUBCASE("an uncalibrated prediction is not within 5% (the test can fail)") {
    // The same check against a line 30% off in bandwidth fails: reproduction is not automatic.
    test::LogGen g;
    g.noise_rel = 0.01;
    const std::string log = g.text();
    app::CollectiveCalibration wrong = fitted_profile(log);
    for (auto& r : wrong.collectives[0].regimes) r.algbw_GBps *= 1.3;
    const auto measured = calibration::parse_nccl_tests_log(log, "gen.log").measurements;
    double worst = 0;
    for (const auto& m : measured) {
      if (m.bytes < (1 << 20)) continue;
      const double t = app::calibrated_time_us(wrong.collectives[0], m.bytes);
      worst = std::max(worst, std::abs(t - m.time_us) / m.time_us);
    }
    CHECK(worst > 0.05);
  }
}

TEST_CASE(
    "scenario: collective.calibration drives syncsim collective and the DDP bucket all-reduces") {
  const auto dir = std::filesystem::temp_directory_path() / "syncsim-collective-calibration-test";
  std::filesystem::create_directories(dir);
  calibration::CalibrationProfile p;
  p.collectives.push_back(
      line("all_reduce", 8, {{0, 65535, 10.0, 20.0}, {65536, int64_t{1} << 32, 40.0, 100.0}}));
  const std::string path = (dir / "ar8.yaml").string();
  calibration::write_profile_file(p, path);

  const app::Scenario s =
      app::load_scenario_text(scenario_text("  calibration: " + path + "\n"), "s.yaml");
  REQUIRE(s.collective_calibration.has_value());
  CHECK(s.collective_calibration->file == path);
  REQUIRE(s.collective_calibration->collectives.size() == 1);

  // The workload's buckets: 8 data-parallel ranks take the fitted all_reduce time for their size.
  const std::string workload = "workload:\n  model: gpt3-1.3b\n  gpu: h100\n  data_parallel: 8\n";
  const app::Scenario w =
      app::load_scenario_text(scenario_text("  calibration: " + path + "\n", workload), "w.yaml");
  const app::RunResult r = app::run_scenario(w);
  REQUIRE(r.step.has_value());
  CHECK(r.bucket_allreduce_model == "calibrated: " + path + ", all_reduce at 8 ranks");
  REQUIRE(!r.step->buckets.empty());
  for (const auto& b : r.step->buckets) {
    const double expected_us = (b.bytes <= 65535 ? 10.0 + static_cast<double>(b.bytes) / 20e3
                                                 : 40.0 + static_cast<double>(b.bytes) / 100e3);
    CHECK((b.end - b.start).seconds() * 1e6 == doctest::Approx(expected_us).epsilon(1e-6));
  }
  // Ring all-reduce bytes are still counted: 2 (n-1)/n of the gradient bytes per GPU.
  double grad = 0;
  for (const auto& b : r.step->buckets) grad += static_cast<double>(b.bytes);
  CHECK(static_cast<double>(r.step->bytes_per_gpu) ==
        doctest::Approx(2.0 * 7 / 8 * grad).epsilon(1e-3));

  // 4 ranks: the profile has no line; the buckets are simulated and a warning says so.
  const std::string workload4 = "workload:\n  model: gpt3-1.3b\n  gpu: h100\n  data_parallel: 4\n";
  const app::RunResult r4 = app::run_scenario(
      app::load_scenario_text(scenario_text("  calibration: " + path + "\n", workload4), "w.yaml"));
  CHECK(r4.bucket_allreduce_model == "simulated");
  const bool warned = std::any_of(r4.warnings.begin(), r4.warnings.end(), [](const std::string& x) {
    return x.find("no all_reduce line for 4 ranks") != std::string::npos &&
           x.find("simulated") != std::string::npos;
  });
  CHECK(warned);

  // Errors at file:line:col: a missing file, and a profile without collective lines.
  try {
    app::load_scenario_text(scenario_text("  calibration: /nonexistent/p.yaml\n"), "s.yaml");
    FAIL("expected a ScenarioError");
  } catch (const app::ScenarioError& e) {
    CHECK(std::string(e.what()).starts_with(
        "s.yaml:9:16: collective.calibration: expected a readable calibration profile"));
  }
  calibration::CalibrationProfile empty;
  empty.gemm.push_back({"bf16", 989, 0.7, 100, 0.01});
  const std::string empty_path = (dir / "gemm_only.yaml").string();
  calibration::write_profile_file(empty, empty_path);
  try {
    app::load_scenario_text(scenario_text("  calibration: " + empty_path + "\n"), "s.yaml");
    FAIL("expected a ScenarioError");
  } catch (const app::ScenarioError& e) {
    CHECK(std::string(e.what()).find(
              "s.yaml:9:16: collective.calibration: expected a profile with fitted collectives") !=
          std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

// (std::normal_distribution is implementation-defined: the files were made with libstdc++.)
TEST_CASE("calibration data: the committed synthetic logs are the generator's output") {
  const auto read = [](const std::string& name) {
    std::ifstream in(std::string(SYNCSIM_TEST_DATA_DIR) + "/nccl/" + name, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  CHECK(read("all_reduce_8r.log") == one_regime_log().text());
  CHECK(read("all_reduce_8r_two_regimes.log") == two_regime_log().text());
}
