// nccl-tests-compatible output of `syncsim collective`.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "run/collective_cmd.hpp"
#include "run/nccl_tests_format.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;
using namespace syncsim::app;
using models::CollectiveOp;

TEST_CASE("nccl format: a row matches nccl-tests' printf layout character for character") {
  const NcclTestsRow row = make_row(CollectiveOp::AllReduce, 8, 33554432, 1234.5);
  // Written by hand from util.cu's formats: "%12li  %12li  %8s  %6s  %6s" then twice
  // "  %7s  %6s  %6s  %6g" (time, algbw, busbw, #wrong).
  const std::string expected =
      "    33554432       8388608     float     sum      -1  1234.50   27.18   47.57       0"
      "  1234.50   27.18   47.57       0";
  CHECK(format_row(row) == expected);
  CHECK(row.out_of_place.busbw == doctest::Approx(row.out_of_place.algbw * 2.0 * 7.0 / 8.0));
}

TEST_CASE("nccl format: numbers switch precision like getFloatStr") {
  CHECK(nccl_float(5.123, 7) == "   5.12");
  CHECK(nccl_float(12345.6, 7) == "12345.6");
  CHECK(nccl_float(123456.7, 7) == " 123457");
  CHECK(nccl_float(0.0, 6) == "  0.00");
  CHECK(nccl_float(1234.56, 6) == "1234.6");
  CHECK(nccl_float(123456.0, 6) == "123456");
}

TEST_CASE("nccl format: busbw factors and counts per op") {
  const NcclTestsRow ag = make_row(CollectiveOp::AllGather, 4, 4096, 10.0);
  CHECK(ag.count == 256);  // per-rank count, as nccl-tests prints it
  CHECK(ag.redop == "none");
  CHECK(ag.out_of_place.busbw == doctest::Approx(ag.out_of_place.algbw * 0.75));
  const NcclTestsRow bc = make_row(CollectiveOp::Broadcast, 4, 4096, 10.0, 2);
  CHECK(bc.root == 2);
  CHECK(bc.out_of_place.busbw == bc.out_of_place.algbw);
  CHECK(nccl_tests_size(CollectiveOp::AllGather, 3, 100) == 96);
  CHECK(nccl_tests_size(CollectiveOp::AllReduce, 3, 100) == 100);
  CHECK(nccl_tests_size(CollectiveOp::AllReduce, 3, 7) == 4);
}

TEST_CASE("nccl format: whole log has nccl-tests' header and footer lines") {
  NcclTestsHeader h;
  h.ngpus = 2;
  h.min_bytes = 8;
  h.max_bytes = 16;
  h.devices = {device_line(0, "host0", 0, "sim"), device_line(1, "host1", 0, "sim")};
  const std::vector<NcclTestsRow> rows = {make_row(CollectiveOp::AllReduce, 2, 8, 10.0),
                                          make_row(CollectiveOp::AllReduce, 2, 16, 10.0)};
  const std::string log = format_nccl_tests(h, rows);
  CHECK(log.find("# Collective test starting: all_reduce_perf\n") != std::string::npos);
  CHECK(log.find(
            "# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 0 iters: 1 "
            "agg iters: 1 validation: 1 graph: 0 unalign: 0\n") != std::string::npos);
  CHECK(log.find("#  Rank  0 Group  0 Pid      0 on      host0 device  0 [0000:00:00] sim\n") !=
        std::string::npos);
  CHECK(log.find(
            "#       size         count      type   redop    root     time   algbw   busbw  #wrong "
            "    time   algbw   busbw  #wrong \n") != std::string::npos);
  CHECK(log.find(
            "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)         "
            "    (us)  (GB/s)  (GB/s)         \n") != std::string::npos);
  CHECK(log.find("# Out of bounds values : 0 OK\n") != std::string::npos);
  // busbw = algbw = 0.0008 and 0.0016 GB/s (factor 1 for 2 ranks): average 0.0012.
  CHECK(log.find("# Avg bus bandwidth    : 0.0012 \n") != std::string::npos);
  CHECK(log.find("# Collective test concluded: all_reduce_perf\n") != std::string::npos);
  const auto j = nccl_tests_json(h, rows);
  CHECK(j["results"].size() == 2);
  CHECK(j["results"][1]["size"] == 16);
  CHECK(j["results"][1]["out_of_place"]["bus_bw"].get<double>() == doctest::Approx(0.0016));
}

TEST_CASE("nccl format: size flags read K/M/G as powers of 1024 like nccl-tests") {
  CHECK(parse_size_flag("8") == 8);
  CHECK(parse_size_flag("8G") == (int64_t{8} << 30));
  CHECK(parse_size_flag("128M") == (int64_t{128} << 20));
  CHECK(parse_size_flag("1k") == 1024);
  CHECK(parse_size_flag("64MiB") == (int64_t{64} << 20));
  CHECK(parse_size_flag("1GB") == 1'000'000'000);
  CHECK_THROWS(parse_size_flag("8X"));
}

TEST_CASE(
    "nccl format: a sweep on an analytic fabric gives one row per size with the ring's busbw") {
  const std::string yaml =
      "name: t\nfidelity: analytic\nfabric:\n  topology: spine_leaf\n"
      "  spine_leaf: {leaves: 4, hosts_per_leaf: 1, spines: 1}\n"
      "  links:\n    host: {bandwidth: 100Gbps, delay: 1us}\n    fabric: {bandwidth: 100Gbps, "
      "delay: 1us}\n"
      "traffic:\n  - {pattern: permutation, size: 1KiB}\n";
  const Scenario s = load_scenario_text(yaml, "inline");
  CollectiveSweepOptions o;
  o.algo = models::CollectiveAlgo::Ring;
  o.min_bytes = 1024;
  o.max_bytes = 64 << 20;
  o.step_factor = 4;
  o.run.hbm_bytes_per_s = 0;
  const CollectiveSweep sweep = run_collective_sweep(s, o);
  REQUIRE(sweep.rows.size() == 9);  // 1K, 4K, ..., 64M
  CHECK(sweep.rows.front().size == 1024);
  CHECK(sweep.rows.back().size == (64 << 20));
  // At 64 MiB the ring's busbw approaches the 100G link (12.5 GB/s) less the header overhead.
  const double busbw = sweep.rows.back().out_of_place.busbw;
  CHECK(busbw > 11.5);
  CHECK(busbw < 12.5);
  for (const auto& r : sweep.rows) {
    CHECK(r.out_of_place.wrong == 0);
    CHECK(r.out_of_place.busbw == doctest::Approx(r.out_of_place.algbw * 2.0 * 3.0 / 4.0));
  }
  CHECK(sweep.rows.front().algorithm == "ring");
  // Protocol auto: LL for small messages, Simple for large ones (NCCL's model).
  CHECK(sweep.rows.front().protocol == "LL");
  CHECK(sweep.rows.back().protocol == "Simple");

  // auto: NCCL's model picks the tree for small all_reduces and the ring for large ones.
  o.algo.reset();  // the scenario has no collective section: NCCL's default, auto
  const CollectiveSweep autos = run_collective_sweep(s, o);
  CHECK(autos.rows.front().algorithm == "tree");
  CHECK(autos.rows.back().algorithm == "ring");
  CHECK(nccl_tests_json(autos.header, autos.rows)["results"][0]["algorithm"] == "tree");

  o.ranks = 5;
  CHECK_THROWS_AS(run_collective_sweep(s, o), CollectiveUsageError);
}

namespace {
const char* kFourLeaves =
    "name: t\nfidelity: analytic\nfabric:\n  topology: spine_leaf\n"
    "  spine_leaf: {leaves: 4, hosts_per_leaf: 1, spines: 1}\n"
    "  links:\n    host: {bandwidth: 100Gbps, delay: 1us}\n    fabric: {bandwidth: 100Gbps, delay: "
    "1us}\n"
    "traffic:\n  - {pattern: permutation, size: 1KiB}\n";
}  // namespace

TEST_CASE("nccl format: the scenario's collective section sets algorithm, protocol and buffers") {
  const Scenario d = load_scenario_text(kFourLeaves, "inline");
  CHECK_FALSE(d.collective.algorithm.has_value());
  CHECK_FALSE(d.collective.protocol.has_value());
  CHECK(d.collective.buffer_size == (4 << 20));
  CHECK(d.collective.steps == 8);
  CHECK_FALSE(d.collective.channels.has_value());  // auto: NCCL's own count
  const std::string yaml = std::string(kFourLeaves) +
                           "collective: {algorithm: ring, protocol: LL128, channels: 2, "
                           "buffer_size: 1MiB, steps: 4}\n";
  const Scenario s = load_scenario_text(yaml, "inline");
  REQUIRE(s.collective.algorithm.has_value());
  CHECK(*s.collective.algorithm == models::CollectiveAlgo::Ring);
  CHECK(*s.collective.protocol == models::NcclProtocol::LL128);
  CHECK(s.collective.channels == 2);
  CHECK(s.collective.buffer_size == (1 << 20));
  CHECK(s.collective.steps == 4);
  CollectiveSweepOptions o;
  o.min_bytes = o.max_bytes = 1 << 20;
  const CollectiveSweep sweep = run_collective_sweep(s, o);
  CHECK(sweep.rows[0].algorithm == "ring");
  CHECK(sweep.rows[0].protocol == "LL128");
  CHECK_THROWS_AS(
      load_scenario_text(std::string(kFourLeaves) + "collective: {protocol: LL64}\n", "inline"),
      ScenarioError);
  CHECK_THROWS_AS(
      load_scenario_text(std::string(kFourLeaves) + "collective: {steps: 0}\n", "inline"),
      ScenarioError);
  CHECK_THROWS_AS(
      load_scenario_text(std::string(kFourLeaves) + "collective: {chunk: 1}\n", "inline"),
      ScenarioError);
}

TEST_CASE("nccl format: LL moves twice the bytes of Simple, so large messages take ~2x as long") {
  const Scenario s = load_scenario_text(kFourLeaves, "inline");
  CollectiveSweepOptions o;
  o.algo = models::CollectiveAlgo::Ring;
  o.min_bytes = o.max_bytes = 64 << 20;
  o.chunk_bytes = 0;  // one transfer per ring step: per-step latencies are negligible
  o.run.hbm_bytes_per_s = 0;
  o.protocol = models::NcclProtocol::Simple;
  const double simple = run_collective_sweep(s, o).rows[0].out_of_place.time_us;
  o.protocol = models::NcclProtocol::LL;
  const double ll = run_collective_sweep(s, o).rows[0].out_of_place.time_us;
  CHECK(ll / simple == doctest::Approx(2.0).epsilon(0.05));
}

TEST_CASE("nccl format: the nccl model fidelity prints the cost model's time") {
  const Scenario s = load_scenario_text(kFourLeaves, "inline");
  CollectiveSweepOptions o;
  o.nccl_model = true;
  o.min_bytes = 1024;
  o.max_bytes = 1 << 30;
  o.step_factor = 32;
  const CollectiveSweep sweep = run_collective_sweep(s, o);
  REQUIRE(sweep.rows.size() == 5);
  // One GPU and one 100G NIC per node: NCCL's search finds one ring of 12 GB/s (the fastest of its
  // speeds under 12.5), not doubled (< 25 GB/s), run as 2 channels.
  CHECK(sweep.channels.search_channels == 1);
  CHECK(sweep.channels.search_bw_GBps == doctest::Approx(12.0));
  CHECK(sweep.channels.channels == 2);
  models::NcclCostInputs in;
  in.nodes = 4;
  in.gpus_per_node = 1;
  in.channels = 1;
  in.bw_intra = 12.0;
  in.bw_inter = 12.0;
  for (const auto& r : sweep.rows) {
    const models::NcclChoice best = models::nccl_choose(in, r.size);
    CHECK(r.out_of_place.time_us == doctest::Approx(best.time_us));
    CHECK(r.algorithm == std::string(to_string(best.algo)));
    CHECK(r.protocol == std::string(to_string(best.proto)));
  }
  o.op = CollectiveOp::AllToAll;
  CHECK_THROWS_AS(run_collective_sweep(s, o), CollectiveUsageError);
}
