// `syncsim collective` reports how evenly a collective's bytes spread over the busiest
// switch-to-switch tier (results[].link_load): checked against the ring's byte count.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run/collective_cmd.hpp"
#include "run/nccl_tests_format.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

// 4 leaves x 2 hosts, one GPU and one 100G NIC each, 2 spines (non-blocking).
std::string fabric(uint32_t leaves, uint32_t hosts_per_leaf) {
  return "name: t\nfidelity: flow\nfabric:\n  topology: spine_leaf\n  spine_leaf: {leaves: " +
         std::to_string(leaves) + ", hosts_per_leaf: " + std::to_string(hosts_per_leaf) +
         ", spines: 2}\n  host: {gpus: 1, nics: 1}\n  links:\n    host: {bandwidth: 100Gbps}\n"
         "    fabric: {bandwidth: 100Gbps}\n";
}

app::CollectiveSweep ring_all_reduce(const std::string& yaml, int64_t bytes) {
  app::LoadOptions fabric_only;
  fabric_only.fabric_only_ok = true;  // as `syncsim collective` loads it
  const app::Scenario s = app::load_scenario_text(yaml, "t.yaml", fabric_only);
  app::CollectiveSweepOptions o;
  o.op = models::CollectiveOp::AllReduce;
  o.algo = models::CollectiveAlgo::Ring;
  o.protocol = models::NcclProtocol::Simple;
  o.min_bytes = bytes;
  o.max_bytes = bytes;
  return app::run_collective_sweep(s, o);
}

}  // namespace

TEST_CASE("collective link load: a ring's leaf-crossing edges carry exactly their share") {
  const int64_t size = int64_t{8} << 20;
  const app::CollectiveSweep sweep = ring_all_reduce(fabric(4, 2), size);
  REQUIRE(sweep.rows.size() == 1);
  REQUIRE(sweep.rows[0].link_load.has_value());
  const TierLoad& load = *sweep.rows[0].link_load;
  CHECK(load.tier == "fabric");
  CHECK(load.ports == 16u);  // 4 leaves x 2 spines x 2 directions
  // Ranks 0..7 in host order: 4 of the 8 ring edges cross leaves (1->2, 3->4, 5->6, 7->0), each
  // carries 2 (n - 1) / n of the buffer and crosses the tier twice (up, down): 4 x 2 x 14/8 S.
  CHECK(load.mean_bytes * load.ports == doctest::Approx(14.0 * static_cast<double>(size)));
  CHECK(load.max_over_mean >= 1.0);
  CHECK(load.max_over_mean ==
        doctest::Approx(static_cast<double>(load.max_bytes) / load.mean_bytes));
  const nlohmann::json j = app::nccl_tests_json(sweep.header, sweep.rows);
  CHECK(j["results"][0]["link_load"]["tier"] == "fabric");
  CHECK(j["results"][0]["link_load"]["ports"] == 16);
}

TEST_CASE("collective link load: absent when nothing crosses a switch-to-switch link") {
  const app::CollectiveSweep sweep = ring_all_reduce(fabric(1, 8), int64_t{1} << 20);
  REQUIRE(sweep.rows.size() == 1);
  CHECK_FALSE(sweep.rows[0].link_load.has_value());
  CHECK_FALSE(app::nccl_tests_json(sweep.header, sweep.rows)["results"][0].contains("link_load"));
}
