// Measurement and fit tables as text, JSON and files (calibration/measurement_io.hpp).
#include "calibration/measurement_io.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

using namespace syncsim;

namespace {
const std::string kData = SYNCSIM_TEST_DATA_DIR "/nccl/";
}

TEST_CASE("measurement io: the JSON table reads back as the same measurements") {
  const auto ms = calibration::import_measurements({kData + "old_layout_all_reduce.log"});
  const auto j = calibration::measurements_json(ms);
  REQUIRE(j.size() == 50);
  const auto back = calibration::measurements_from_json(j, "t.json");
  CHECK(back.size() == 50);
  CHECK(back[49].time_us == doctest::Approx(j[49]["time_us"].get<double>()));
}

TEST_CASE("measurement io: a malformed GEMM CSV line names file, line and field") {
  CHECK_THROWS_WITH_AS(
      calibration::read_gemm_csv(kData + "bad_gemm.csv"),
      doctest::Contains("bad_gemm.csv:3: field k: expected a positive integer, found \"x\""),
      calibration::ParseError);
}
