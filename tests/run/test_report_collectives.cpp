// `report:`: `syncsim run` times an all_reduce of two sizes on an idle copy of the fabric
// through run_collective_sweep, so its numbers must equal `syncsim collective`'s bit for bit.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run/collective_cmd.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "scenario/units.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::app::CollectiveSweepOptions;
using syncsim::app::load_scenario_text;
using syncsim::app::ScenarioError;

namespace {

// 8 GPUs (2 leaves x 2 hosts x 2 GPUs) with a little traffic, so the run itself is not idle.
const std::string kScenario = R"(name: report
seed: 3
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
  host: {gpus: 2, nics: 2}
  links:
    host: {bandwidth: 400Gbps, delay: 1us}
    fabric: {bandwidth: 400Gbps, delay: 1us}
traffic:
  - pattern: ring_shift
    size: 256KiB
report:
  allreduce_small: 8B
  allreduce_large: 1MiB
)";

// What `syncsim collective SCENARIO --op all_reduce -b SIZE -e SIZE` runs (main.cpp cmd_collective
// with every other flag at its default).
syncsim::app::NcclTestsRow cli_row(const syncsim::app::Scenario& s, const std::string& size) {
  CollectiveSweepOptions o;
  o.op = syncsim::models::CollectiveOp::AllReduce;
  o.ranks = 0;
  o.min_bytes = syncsim::app::parse_size_flag(size);
  o.max_bytes = o.min_bytes;
  o.step_factor = 2;
  o.run.step_latency = syncsim::app::parse_time("0");
  o.run.hbm_bytes_per_s = syncsim::app::parse_bandwidth("3.35TBps").bytes_per_second();
  const auto sweep = syncsim::app::run_collective_sweep(s, o);
  REQUIRE(sweep.rows.size() == 1);
  return sweep.rows.front();
}

std::string error_of(const std::string& yaml) { return syncsim::testing::scenario_error_of(yaml); }

std::string with_report_line(const std::string& from, const std::string& to) {
  return syncsim::testing::text_with(kScenario, from, to);
}

}  // namespace

TEST_CASE("report: run's all_reduce numbers are syncsim collective's, exactly") {
  const auto s = load_scenario_text(kScenario, "t.yaml");
  REQUIRE(s.report.has_value());
  CHECK(s.report->allreduce_small_bytes == 8);
  CHECK(s.report->allreduce_large_bytes == 1 << 20);
  const auto r = syncsim::app::run_scenario(s);
  REQUIRE(r.report.has_value());
  const auto small = cli_row(s, "8");
  const auto large = cli_row(s, "1MiB");
  CHECK(r.report->ranks == 8u);
  CHECK(r.report->small_bytes == small.size);
  CHECK(r.report->small_latency_s == small.out_of_place.time_us * 1e-6);
  CHECK(r.report->large_bytes == large.size);
  CHECK(r.report->large_busbw_GBps == large.out_of_place.busbw);
  // Sanity against the fabric: a 1 MiB ring all-reduce cannot beat the 400G host links, and an 8 B
  // one costs at least the protocol's per-step latencies (microseconds), far more than 1 MiB /
  // 400G.
  CHECK(r.report->large_busbw_GBps > 0);
  CHECK(r.report->large_busbw_GBps < 50.0);
  CHECK(r.report->small_latency_s > 1e-6);
  CHECK(r.report->small_latency_s < r.report->large_time_s);
  // The traffic ran too, and the report did not change it (idle copy of the fabric).
  const auto j = syncsim::app::to_json(r);
  CHECK(j.at("allreduce_small_latency_s").get<double>() == r.report->small_latency_s);
  CHECK(j.at("allreduce_large_busbw_GBps").get<double>() == r.report->large_busbw_GBps);
  CHECK(j.at("allreduce_small_bytes").get<int64_t>() == 8);
  CHECK(j.at("allreduce_large_bytes").get<int64_t>() == 1 << 20);
  auto without = s;
  without.report.reset();
  const auto plain = syncsim::app::run_scenario(without);
  CHECK(plain.sim_time_s == r.sim_time_s);
  CHECK(plain.events == r.events);
  CHECK_FALSE(syncsim::app::to_json(plain).contains("allreduce_small_latency_s"));
}

TEST_CASE("report: sizes need units and a sane range, keys are checked") {
  CHECK(error_of(with_report_line("allreduce_small: 8B", "allreduce_small: 8 bananas"))
            .find("t.yaml:14:20") != std::string::npos);
  CHECK(error_of(with_report_line("allreduce_small: 8B", "allreduce_small: 8 bananas"))
            .find("report.allreduce_small") != std::string::npos);
  CHECK(error_of(with_report_line("allreduce_large: 1MiB", "allreduce_large: 2B"))
            .find("expected a size from 4B to 64GiB") != std::string::npos);
  CHECK(error_of(with_report_line("allreduce_large: 1MiB", "allreduce_big: 1MiB"))
            .find("unknown key \"allreduce_big\"") != std::string::npos);
  CHECK(
      error_of(with_report_line("  allreduce_large: 1MiB\n", "")).find("report.allreduce_large") !=
      std::string::npos);
}
