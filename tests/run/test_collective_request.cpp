// `syncsim collective` below its flags (run/collective_request.hpp), shared by the CLI and the
// Python module: the sizes a sweep runs, the model choice and its errors, and the --json document.
#include <doctest/doctest.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "run/collective_cmd.hpp"
#include "run/collective_request.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;
using namespace syncsim::app;

namespace {

// Two leaves of two 8-GPU hosts: 32 GPUs, a fabric alone (the collective is the traffic).
constexpr const char* kFabric =
    "name: request\nseed: 1\nfidelity: flow\n"
    "fabric:\n"
    "  topology: spine_leaf\n"
    "  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}\n"
    "  host: {gpus: 8, nics: 8}\n"
    "  links:\n    host: {bandwidth: 400Gbps, delay: 1us}\n    fabric: {bandwidth: 400Gbps, "
    "delay: 1us}\n    nvlink: {delay: 100ns}\n";

Scenario fabric() {
  LoadOptions load;
  load.fabric_only_ok = true;
  return load_scenario_text(kFabric, "inline", load);
}

}  // namespace

TEST_CASE("collective sweep sizes: nccl-tests' geometric steps, or the explicit list") {
  CollectiveSweepOptions o;
  o.min_bytes = 1024;
  o.max_bytes = 8192;
  o.step_factor = 2;
  CHECK(collective_sweep_sizes(o) == std::vector<int64_t>{1024, 2048, 4096, 8192});
  o.max_bytes = 5000;  // not a power of the factor away: stops below it, as nccl-tests does
  CHECK(collective_sweep_sizes(o) == std::vector<int64_t>{1024, 2048, 4096});
  o.min_bytes = 0;  // 0 never grows: one row
  CHECK(collective_sweep_sizes(o) == std::vector<int64_t>{0});
  o.sizes = {3 << 20, 1 << 20};
  CHECK(collective_sweep_sizes(o) == std::vector<int64_t>{3 << 20, 1 << 20});
}

TEST_CASE("collective request: unknown model and calibrated without a profile are usage errors") {
  const Scenario s = fabric();
  CollectiveModelRequest request;
  request.model = "magic";
  CHECK_THROWS_WITH_AS(run_collective_request(s, {}, request),
                       "--model must be sim, nccl or calibrated", CollectiveUsageError);
  request.model = "calibrated";
  CHECK_THROWS_AS(run_collective_request(s, {}, request), CollectiveUsageError);
}

TEST_CASE("collective request: explicit sizes through the NCCL model, as the --json document") {
  const Scenario s = fabric();
  CollectiveSweepOptions o;
  o.ranks = 16;
  o.sizes = {4 << 20, 1 << 20};
  o.min_bytes = 1 << 20;
  o.max_bytes = 4 << 20;
  CollectiveModelRequest request;
  request.model = "nccl";
  const CollectiveOutcome out = run_collective_request(s, o, request);
  CHECK(out.model == "nccl");
  const nlohmann::json j = collective_json(s, out);
  CHECK(j.at("model") == "nccl");
  REQUIRE(j.at("results").size() == 2);
  CHECK(j.at("results")[0].at("size") == 4 << 20);
  CHECK(j.at("results")[1].at("size") == 1 << 20);
  // The larger size takes longer; the header spans the list.
  CHECK(j.at("results")[0].at("out_of_place").at("time").get<double>() >
        j.at("results")[1].at("out_of_place").at("time").get<double>());
  CHECK(j.at("config").at("minimum_bytes") == 1 << 20);
  CHECK(j.at("config").at("maximum_bytes") == 4 << 20);
  CHECK(j.at("nccl").at("channels").get<int>() >= 1);
  CHECK(j.at("warnings").is_array());
}
