#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
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

namespace {

std::string read_data(const std::string& file) {
  std::ifstream in(kData + file, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// An MPI launch's header: one GPU per process, one "#  Rank" line per process (two nodes).
std::string mpi_header(int ranks) {
  std::string h =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: "
      "20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n"
      "[node-a:29250] 15 more processes have sent help message help-btl-vader.txt\n";
  for (int r = 0; r < ranks; ++r) {
    h += "#  Rank " + std::to_string(r) + " Group  0 Pid  " + std::to_string(1000 + r) +
         " on node-" + (r < 8 ? "a" : "b") + " device  " + std::to_string(r % 8) +
         " [0000:19:00] NVIDIA H100 80GB HBM3\n";
  }
  return h + "NCCL version 2.26.2+cuda12.8\n";
}

}  // namespace

TEST_CASE("calibration: a bare pasted table takes --op and --ranks, or infers the rank count") {
  const std::string bare = read_data("all_reduce_16r_h100_bare.log");
  ParseOptions given;
  given.op = "all_reduce";
  given.ranks = 16;
  const auto log = parse_nccl_tests_log(bare, "bare.log", given);
  CHECK(log.op == "all_reduce");
  CHECK(log.ranks == 16);
  REQUIRE(log.measurements.size() == 2 * 32);
  CHECK(log.measurements.front().ranks == 16);
  CHECK(log.measurements.back().bytes == int64_t{16} << 30);
  CHECK(log.warnings.empty());

  ParseOptions op_only;
  op_only.op = "all_reduce";
  const auto inferred = parse_nccl_tests_log(bare, "bare.log", op_only);
  CHECK(inferred.ranks == 16);
  CHECK(inferred.measurements.back().ranks == 16);
  REQUIRE(inferred.warnings.size() == 1);
  CHECK(inferred.warnings[0].text() ==
        "bare.log:4: rank count 16 inferred from busbw/algbw of all_reduce");

  // --ranks that busbw/algbw contradicts is used, with a warning.
  ParseOptions wrong = given;
  wrong.ranks = 8;
  const auto forced = parse_nccl_tests_log(bare, "bare.log", wrong);
  CHECK(forced.ranks == 8);
  REQUIRE(forced.warnings.size() == 1);
  CHECK(forced.warnings[0].message == "--ranks 8 but busbw/algbw gives 16; using 8");
}

TEST_CASE("calibration: a bare table without --op is an error naming the candidates") {
  const std::string bare = read_data("all_reduce_16r_h100_bare.log");
  CHECK_THROWS_WITH_AS(parse_nccl_tests_log(bare, "bare.log"),
                       "bare.log:4: expected the collective before the first row (\"# Collective "
                       "test starting: X\", a command line naming X_perf, or --op), found none; "
                       "the columns (redop sum, root -1) fit all_reduce and reduce_scatter",
                       ParseError);
  // Neither given nor inferable: broadcast's busbw is algbw at any rank count.
  const std::string bcast =
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "  1048576 262144 float none 0 20.00 52.43 52.43 0 20.00 52.43 52.43 0\n";
  CHECK_THROWS_WITH_AS(parse_nccl_tests_log(bcast, "b.log"),
                       "b.log:2: expected the rank count before the first row (\"# nThread N "
                       "nGpus N\", \"#  Rank\" lines, or --ranks), found none; busbw = algbw for "
                       "broadcast whatever the rank count",
                       ParseError);
  ParseOptions ranks;
  ranks.ranks = 4;
  const auto log = parse_nccl_tests_log(bcast, "b.log", ranks);
  CHECK(log.op == "broadcast");  // root 0 and no reduction: only broadcast prints that
  CHECK(log.ranks == 4);
  REQUIRE(log.warnings.size() == 1);
  CHECK(log.warnings[0].message == "op broadcast taken from the columns (redop none, root 0)");
}

TEST_CASE("calibration: an MPI log (nThread 1 nGpus 1) counts its \"#  Rank\" lines") {
  const std::string rows = read_data("all_reduce_16r_h100_bare.log");
  const auto log = parse_nccl_tests_log(
      "# Collective test starting: all_reduce_perf\n" + mpi_header(16) + rows, "mpi.log");
  CHECK(log.nthreads == 1);
  CHECK(log.ngpus == 1);
  CHECK(log.ranks == 16);
  CHECK(log.devices.size() == 16);
  CHECK(log.measurements.size() == 2 * 32);  // the "15 more processes" chatter is no row
  CHECK(log.warnings.empty());

  // Rank lines that busbw/algbw contradicts (a paste that lost half of them): kept, with a warning.
  const auto half = parse_nccl_tests_log(
      "# Collective test starting: all_reduce_perf\n" + mpi_header(8) + rows, "half.log");
  CHECK(half.ranks == 8);
  REQUIRE(half.warnings.size() == 1);
  CHECK(half.warnings[0].message ==
        "the log has 8 \"#  Rank\" lines but busbw/algbw gives 16; using 8");

  // No rank lines at all: nThread 1 nGpus 1 is per process, so busbw/algbw decides.
  const auto bare_header = parse_nccl_tests_log(
      "# Collective test starting: all_reduce_perf\n# nThread 1 nGpus 1 minBytes 8\n" + rows,
      "nodev.log");
  CHECK(bare_header.ranks == 16);
  REQUIRE(bare_header.warnings.size() == 1);
  CHECK(bare_header.warnings[0].message.starts_with("rank count 16 inferred from busbw/algbw"));
}

TEST_CASE("calibration: several tests in one file keep their own op and rank count") {
  syncsim::test::LogGen g;
  g.min_bytes = 1 << 20;
  g.max_bytes = 1 << 22;
  const std::string rows = read_data("all_reduce_16r_h100_bare.log");
  const auto log = parse_nccl_tests_log(
      g.text() + "# Collective test starting: all_reduce_perf\n" + mpi_header(16) + rows,
      "two.log");
  REQUIRE(log.measurements.size() == 2 * 3 + 2 * 32);
  CHECK(log.measurements.front().ranks == 8);
  CHECK(log.measurements.back().ranks == 16);
  CHECK(log.warnings.empty());
}
