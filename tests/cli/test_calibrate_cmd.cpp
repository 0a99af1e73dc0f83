#include <doctest/doctest.h>

#include <cstdio>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "calibration/profile.hpp"
#include "cli/calibrate_cmd.hpp"

using namespace syncsim;

namespace {
const std::string kData = SYNCSIM_TEST_DATA_DIR "/nccl/";
}

TEST_CASE("calibration: calibrate import prints the table as text and JSON") {
  std::ostringstream text;
  CHECK(app::calibrate_main({"import", kData + "tagged_sendrecv.log"}, text) == 0);
  CHECK(text.str().find("send_recv") != std::string::npos);
  CHECK(text.str().find("N/A") != std::string::npos);

  std::ostringstream js;
  CHECK(app::calibrate_main({"import", kData + "old_layout_all_reduce.log", "--json"}, js) == 0);
  const auto j = nlohmann::json::parse(js.str());
  REQUIRE(j.size() == 50);
  CHECK(j[0]["op"] == "all_reduce");
  CHECK(j[0]["ranks"] == 2);
  CHECK(j[0]["root"].is_null());
  CHECK(j[1]["placement"] == "in");
}

TEST_CASE("calibration: calibrate fit prints per-line fits and writes a profile") {
  const std::string out_path = "syncsim_test_fit_profile.yaml";
  std::ostringstream js;
  CHECK(app::calibrate_main(
            {"fit", kData + "old_layout_all_reduce.log", "--json", "--out", out_path}, js) == 0);
  const auto j = nlohmann::json::parse(js.str());
  REQUIRE(j.size() == 1);
  CHECK(j[0]["op"] == "all_reduce");
  CHECK(j[0]["ranks"] == 2);
  CHECK(j[0]["latency_us"].get<double>() == doctest::Approx(15.0).epsilon(0.02));
  CHECK(j[0]["algbw_GBps"].get<double>() == doctest::Approx(2.8).epsilon(0.02));
  CHECK(j[0]["max_rel_error"].get<double>() < 0.02);
  CHECK(j[0].contains("heldout_rel_error"));
  CHECK(j[0]["points"].size() == 50);
  const auto profile = calibration::read_profile_file(out_path);
  CHECK(profile.gpu_name == "Tesla V100-PCIE-32GB");
  REQUIRE(profile.collectives.size() == 1);
  CHECK(profile.collectives[0].regimes[0].algbw_GBps == doctest::Approx(2.8).epsilon(0.02));
  std::remove(out_path.c_str());

  std::ostringstream text;
  CHECK(app::calibrate_main({"fit", kData + "tagged_sendrecv.log", "--residuals"}, text) == 0);
  CHECK(text.str().find("send_recv") != std::string::npos);
  CHECK(text.str().find("predicted") != std::string::npos);
}

TEST_CASE("calibration: calibrate usage and input errors") {
  std::ostringstream out;
  CHECK_THROWS_AS(app::calibrate_main({}, out), app::CalibrateUsageError);
  CHECK_THROWS_AS(app::calibrate_main({"frobnicate"}, out), app::CalibrateUsageError);
  CHECK_THROWS_AS(app::calibrate_main({"fit"}, out), app::CalibrateUsageError);
  CHECK_THROWS_AS(app::calibrate_main({"import", "--bogus", "x.log"}, out),
                  app::CalibrateUsageError);
  CHECK_THROWS_WITH_AS(app::calibrate_main({"import", kData + "bad_columns.log"}, out),
                       doctest::Contains("bad_columns.log:18: expected 13 columns"),
                       calibration::ParseError);
  // A file without result rows (here: a profile) is an error, not an empty table.
  CHECK_THROWS_WITH_AS(
      app::calibrate_main({"fit", std::string(SYNCSIM_SOURCE_DIR) + "/calibration/CMakeLists.txt"},
                          out),
      doctest::Contains("CMakeLists.txt: expected nccl-tests result rows, found none"),
      calibration::ParseError);
}

TEST_CASE("calibration: calibrate fit --gemm fits the efficiency curve from a CSV") {
  std::ostringstream js;
  CHECK(app::calibrate_main(
            {"fit", "--gemm", kData + "gemm_bf16.csv", "--peak", "bf16=989", "--json"}, js) == 0);
  const auto j = nlohmann::json::parse(js.str());
  CHECK(j["collectives"].empty());
  REQUIRE(j["gemm"].size() == 1);
  CHECK(j["gemm"][0]["e_max"].get<double>() == doctest::Approx(0.8).epsilon(1e-4));
  CHECK(j["gemm"][0]["intensity_half"].get<double>() == doctest::Approx(150.0).epsilon(1e-4));
  std::ostringstream out;
  CHECK_THROWS_AS(
      app::calibrate_main({"fit", "--gemm", kData + "gemm_bf16.csv", "--peak", "bf16"}, out),
      app::CalibrateUsageError);
}
