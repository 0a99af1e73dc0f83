#include <doctest/doctest.h>

#include <string>

#include "calibration/nccl_tests_log.hpp"
#include "tests/calibration/nccl_log_gen.hpp"

using namespace syncsim::calibration;

namespace {
const std::string kData = SYNCSIM_TEST_DATA_DIR "/nccl/";

std::string error_of(const std::string& file) {
  try {
    (void)read_nccl_tests_log(kData + file);
  } catch (const ParseError& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("calibration: generated current-layout log parses into out- and in-place measurements") {
  syncsim::test::LogGen g;
  g.min_bytes = 8;
  g.max_bytes = int64_t{1} << 30;  // times above 1e4 us print without decimals
  g.algbw_GBps = 50.0;
  const auto log = parse_nccl_tests_log(g.text(), "gen.log");
  CHECK(log.op == "all_reduce");
  CHECK(log.ranks == 8);
  CHECK(log.nthreads == 1);
  CHECK(log.ngpus == 8);
  CHECK(log.version.starts_with("2.13.10"));
  REQUIRE(log.devices.size() == 8);
  CHECK(log.devices[3].name == "NVIDIA H100 80GB HBM3");
  CHECK(log.devices[3].host == "node001");
  CHECK(log.devices[3].device == 3);
  REQUIRE(log.measurements.size() == 2 * 28);
  const auto& first = log.measurements[0];
  CHECK(first.bytes == 8);
  CHECK(first.count == 2);
  CHECK(first.type == "float");
  CHECK(first.redop == "sum");
  CHECK(first.root == -1);
  CHECK(first.placement == Placement::OutOfPlace);
  CHECK(first.wrong == 0.0);
  CHECK(first.line == 18);
  CHECK(log.measurements[1].placement == Placement::InPlace);
  const auto& last = log.measurements.back();
  CHECK(last.bytes == int64_t{1} << 30);
  CHECK(last.time_us > 1e4);
  CHECK(last.time_us == doctest::Approx(g.model_us(last.bytes)).epsilon(0.03));
  CHECK(last.algbw_GBps == doctest::Approx(50.0).epsilon(0.03));
  CHECK(last.busbw_GBps == doctest::Approx(last.algbw_GBps * 1.75).epsilon(0.01));
}

TEST_CASE("calibration: old layout (no root, error column) with the op from the command line") {
  const auto log = read_nccl_tests_log(kData + "old_layout_all_reduce.log");
  CHECK(log.op == "all_reduce");
  CHECK(log.ranks == 2);
  REQUIRE(log.devices.size() == 2);
  CHECK(log.devices[1].name == "Tesla V100-PCIE-32GB");
  REQUIRE(log.measurements.size() == 2 * 25);
  CHECK_FALSE(log.measurements[0].root.has_value());
  CHECK(log.measurements[0].wrong == 0.0);
  const auto& last = log.measurements[log.measurements.size() - 2];
  CHECK(last.bytes == 134217728);
  CHECK(last.time_us == doctest::Approx(47809.0).epsilon(0.01));  // printed as an integer
}

TEST_CASE("calibration: generated old-layout log with [0] prefixes") {
  syncsim::test::LogGen g;
  g.old_layout = true;
  g.prefix = "[0] ";
  g.program = "reduce_scatter_perf";
  g.ranks = 4;
  const auto log = parse_nccl_tests_log(g.text(), "old.log");
  CHECK(log.op == "reduce_scatter");
  CHECK(log.ranks == 4);
  REQUIRE_FALSE(log.measurements.empty());
  CHECK_FALSE(log.measurements[0].root.has_value());
  CHECK(*log.measurements[0].wrong == doctest::Approx(2e-7));
}

TEST_CASE("calibration: mpirun --tag-output prefixes, NCCL INFO chatter and #wrong N/A") {
  const auto log = read_nccl_tests_log(kData + "tagged_sendrecv.log");
  CHECK(log.op == "send_recv");
  CHECK(log.ranks == 4);  // four Rank lines, although nGpus is 2 per process
  REQUIRE(log.measurements.size() == 2 * 6);
  CHECK(log.measurements[0].wrong == 0.0);
  CHECK_FALSE(log.measurements[1].wrong.has_value());
  CHECK(log.measurements[1].placement == Placement::InPlace);
  CHECK(log.devices[2].host == "node2");
}

TEST_CASE("calibration: srun --label prefixes") {
  syncsim::test::LogGen g;
  g.prefix = "0: ";
  g.program = "alltoall_perf";
  g.max_bytes = 1 << 20;
  const auto log = parse_nccl_tests_log(g.text(), "srun.log");
  CHECK(log.op == "all_to_all");
  CHECK(log.ranks == 8);
  CHECK(log.measurements.size() == 2 * 18);
}

TEST_CASE("calibration: [0]-prefixed all_gather log") {
  const auto log = read_nccl_tests_log(kData + "prefixed_all_gather.log");
  CHECK(log.op == "all_gather");
  CHECK(log.ranks == 8);
  CHECK(log.measurements.size() == 2 * 8);
  CHECK(log.measurements[0].redop == "none");
}

TEST_CASE("calibration: canonical op names") {
  CHECK(canonical_op("all_reduce_perf") == "all_reduce");
  CHECK(canonical_op("./build/alltoall_perf") == "all_to_all");
  CHECK(canonical_op("sendrecv_perf") == "send_recv");
  CHECK(canonical_op("broadcast_perf") == "broadcast");
  CHECK(canonical_op("reduce_perf") == "reduce");
  CHECK(canonical_op("ReduceScatter") == "reduce_scatter");
  CHECK(canonical_op("bogus_perf").empty());
}

TEST_CASE("calibration: malformed logs give file:line errors") {
  CHECK(error_of("bad_truncated.log") ==
        kData +
            "bad_truncated.log:19: expected 13 columns (size count type redop root + 2 x (time "
            "algbw busbw #wrong)), found 5");
  CHECK(error_of("bad_columns.log") ==
        kData +
            "bad_columns.log:18: expected 13 columns (size count type redop root + 2 x (time "
            "algbw busbw #wrong)), found 14");
  CHECK(error_of("bad_non_numeric.log") == kData +
                                               "bad_non_numeric.log:17: column time (in-place): "
                                               "expected a non-negative number, found \"1fast\"");
  CHECK(error_of("missing.log") ==
        kData + "missing.log: expected a readable nccl-tests log, found none");

  SUBCASE("a non-integer #wrong") {
    const std::string text =
        "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 2\n"
        "           8             2     float     sum      -1    10.00    0.00    0.00    zz    "
        "10.00    0.00    0.00      0\n";
    CHECK_THROWS_WITH_AS(
        parse_nccl_tests_log(text, "w.log"),
        "w.log:3: column #wrong (out-of-place): expected an integer or N/A, found \"zz\"",
        ParseError);
  }
  SUBCASE("rows before the op") {
    CHECK_THROWS_WITH_AS(
        parse_nccl_tests_log("# nThread 1 nGpus 2\n 8 2 float sum -1 1 0 0 0 1 0 0 0\n", "o.log"),
        doctest::Contains("o.log:2: expected the collective before the first row"), ParseError);
  }
  SUBCASE("rows before the rank count") {
    CHECK_THROWS_WITH_AS(
        parse_nccl_tests_log(
            "# Collective test starting: all_reduce_perf\n 8 2 float sum -1 1 0 0 0 1 0 0 0\n",
            "r.log"),
        doctest::Contains("r.log:2: expected the rank count"), ParseError);
  }
}
