#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "calibration/bus_bandwidth_ranks.hpp"
#include "calibration/nccl_tests_log.hpp"

using namespace syncsim::calibration;

namespace {

Measurement row(double algbw, double busbw) {
  Measurement m;
  m.algbw_GBps = algbw;
  m.busbw_GBps = busbw;
  return m;
}

}  // namespace

TEST_CASE("calibration: nccl-tests bus factors per op") {
  CHECK(nccl_tests_bus_factor("all_reduce", 16) == doctest::Approx(1.875));
  CHECK(nccl_tests_bus_factor("all_gather", 8) == doctest::Approx(0.875));
  CHECK(nccl_tests_bus_factor("reduce_scatter", 4) == doctest::Approx(0.75));
  CHECK(nccl_tests_bus_factor("all_to_all", 2) == doctest::Approx(0.5));
  CHECK(nccl_tests_bus_factor("send_recv", 16) == doctest::Approx(1.0));
  CHECK(nccl_tests_bus_factor("broadcast", 16) == doctest::Approx(1.0));
  CHECK_FALSE(nccl_tests_bus_factor("frobnicate", 16).has_value());
  CHECK_FALSE(nccl_tests_bus_factor("all_reduce", 0).has_value());
}

TEST_CASE("calibration: busbw/algbw rounded to two decimals fixes the rank count") {
  // Rows of a real 2 x 8 H100 all_reduce table (tests/data/nccl/README.md): small algbw rows are
  // loose bounds, the large ones pin 1.875.
  const std::vector<Measurement> rows = {row(0.00, 0.00), row(0.02, 0.03), row(14.58, 27.33),
                                         row(249.84, 468.46), row(250.24, 469.21)};
  const auto r = ranks_from_bus_bandwidth("all_reduce", rows);
  REQUIRE(r.ranks.has_value());
  CHECK(*r.ranks == 16);

  // The same bandwidths read as reduce_scatter fit no rank count ((n-1)/n < 1).
  const auto rs = ranks_from_bus_bandwidth("reduce_scatter", rows);
  CHECK_FALSE(rs.ranks.has_value());
  CHECK(rs.why_not == "busbw/algbw of the rows is at or above reduce_scatter's limit of 1");

  // (n-1)/n ops: 7/8 at 8 ranks.
  const auto ag = ranks_from_bus_bandwidth("all_gather", {row(100.00, 87.50), row(40.00, 35.00)});
  REQUIRE(ag.ranks.has_value());
  CHECK(*ag.ranks == 8);
}

TEST_CASE("calibration: busbw/algbw that cannot tell the rank count says why") {
  const auto bcast = ranks_from_bus_bandwidth("broadcast", {row(100.0, 100.0)});
  CHECK_FALSE(bcast.ranks.has_value());
  CHECK(bcast.why_not.find("whatever the rank count") != std::string::npos);

  const auto zero = ranks_from_bus_bandwidth("all_reduce", {row(0.0, 0.0), row(0.0, 0.01)});
  CHECK_FALSE(zero.ranks.has_value());
  CHECK(zero.why_not == "no row has algbw above 0.00");

  // Two decimals of a small algbw cannot separate 15, 16 and 17 ranks.
  const auto loose = ranks_from_bus_bandwidth("all_reduce", {row(1.00, 1.87)});
  CHECK_FALSE(loose.ranks.has_value());
  CHECK(loose.why_not.find("ranks") != std::string::npos);

  // Rows that contradict one another.
  const auto mixed = ranks_from_bus_bandwidth("all_reduce", {row(100.0, 175.0), row(100.0, 187.5)});
  CHECK_FALSE(mixed.ranks.has_value());
  CHECK(mixed.why_not == "the rows' busbw/algbw agree with no single rank count");
}
