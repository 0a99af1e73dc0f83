// Export and import together: a DDP step written with `syncsim run --chakra-out` and replayed as
// `workload.chakra` takes the same time; the scenario keys and their errors.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>

#include "chakra_fixtures.hpp"
#include "cli/commands.hpp"
#include "run/chakra_export.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;
using namespace syncsim::chakra_fixtures;

namespace {

// 8 GPUs on two hosts of 4; a 1.3B model in 4 buckets of up to 1 GiB keeps the replay cheap.
const char* kFabric = R"(
fidelity: analytic
fabric:
  topology: rail_optimized
  rail_optimized: {groups: 1, hosts_per_group: 2, spines: 2}
  host: {gpus: 4, nics: 4}
  links:
    host:   {bandwidth: 400Gbps, delay: 500ns}
    fabric: {bandwidth: 400Gbps, delay: 1us}
collective: {algorithm: ring}
)";

std::string ddp_yaml() {
  return std::string("name: ddp\n") + kFabric +
         "workload: {model: gpt3-1.3b, parallelism: ddp, algorithm: ring, "
         "ddp: {bucket_cap_mb: 1024}, perturbations: {straggler: {rank: 3, slowdown: 0.2}}}\n";
}

std::string chakra_yaml(const std::string& path, uint32_t ranks, const std::string& extra = "") {
  return std::string("name: replay\n") + kFabric + "workload:\n  chakra: {path: " + path +
         ", ranks: " + std::to_string(ranks) + extra + "}\n";
}

}  // namespace

TEST_CASE("chakra round trip: the exported DDP step replays to the same step time") {
  const std::string dir = temp_dir("roundtrip");
  const app::RunResult original = app::run_scenario(app::load_scenario_text(ddp_yaml(), "ddp"));
  REQUIRE(original.step);
  REQUIRE(original.step->buckets.size() >= 2);
  const auto files = app::write_step_chakra(*original.step, dir);
  CHECK(files.size() == 8);
  const app::RunResult replayed =
      app::run_scenario(app::load_scenario_text(chakra_yaml(dir, 8), "replay"));
  REQUIRE(replayed.chakra);
  CHECK(replayed.step->engine == "chakra_replay");
  CHECK(replayed.chakra->replay.collectives == original.step->buckets.size());
  // The same bucket all-reduces on the same fabric and NCCL setup: the same busy time, exactly.
  CHECK(replayed.step->sync == original.step->sync);
  // Chakra stores whole microseconds: every cut of the compute is rounded to the nearest one, so
  // the last bucket starts within 0.5 us of the original and the optimizer's duration is within
  // 0.5 us: the step agrees within 1 us.
  const double diff = std::abs(replayed.step->step.seconds() - original.step->step.seconds());
  CHECK(diff <= 1e-6);
  // The straggler (rank 3) computes longest; every rank waits for it at the last bucket.
  const auto& compute = replayed.chakra->replay.rank_compute;
  CHECK(compute[3] > compute[0]);
  CHECK(replayed.chakra->replay.rank_exposed_comm[3] <
        replayed.chakra->replay.rank_exposed_comm[0]);
}

TEST_CASE("chakra scenario: workload.chakra errors are scenario errors with their key") {
  const std::string dir = temp_dir("scenario");
  const std::string prefix = write_all(dir, 2, {comp(0, 10)});
  SUBCASE("an unknown key under workload.chakra") {
    CHECK_THROWS_WITH_AS(app::load_scenario_text(chakra_yaml(prefix, 2, ", bogus: 1"), "s.yaml"),
                         doctest::Contains("workload.chakra.bogus: unknown key \"bogus\""),
                         app::ScenarioError);
  }
  SUBCASE("a model key beside chakra") {
    CHECK_THROWS_WITH_AS(
        app::load_scenario_text(std::string("name: x\n") + kFabric +
                                    "workload: {model: gpt3-1.3b, chakra: {path: " + prefix +
                                    ", ranks: 2}}\n",
                                "s.yaml"),
        doctest::Contains("workload.model: unknown key"), app::ScenarioError);
  }
  SUBCASE("a missing rank file") {
    CHECK_THROWS_WITH_AS(
        app::load_scenario_text(chakra_yaml(prefix, 3), "s.yaml"),
        doctest::Contains(("rank 2's trace " + prefix + ".2.et does not exist").c_str()),
        app::ScenarioError);
  }
  SUBCASE("more ranks than the fabric's GPUs") {
    write_all(dir, 9, {comp(0, 10)});
    CHECK_THROWS_WITH_AS(app::load_scenario_text(chakra_yaml(prefix, 9), "s.yaml"),
                         doctest::Contains("expected at most the fabric's 8 GPUs, got 9"),
                         app::ScenarioError);
  }
}

TEST_CASE(
    "chakra cli: syncsim run --chakra-out writes one file per rank, the closed form is refused") {
  const std::string dir = temp_dir("cli");
  const std::string yaml = dir + "/ddp.yaml";
  std::ofstream(yaml) << ddp_yaml();
  std::ostringstream out;
  std::ostringstream err;
  CHECK(app::run_command({yaml, "--chakra-out", dir + "/et", "-q"}, out, err) == 0);
  for (int r = 0; r < 8; ++r) {
    CHECK(std::filesystem::exists(dir + "/et/syncsim." + std::to_string(r) + ".et"));
  }
  std::ofstream(dir + "/replay.yaml") << chakra_yaml("et", 8);  // relative to the scenario file
  std::ostringstream replay;
  CHECK(app::run_command({dir + "/replay.yaml", "-q"}, replay, err) == 0);
  CHECK(replay.str().find("engine chakra_replay") != std::string::npos);
  std::ofstream(dir + "/tp.yaml") << std::string("name: t\n") + kFabric +
                                         "workload: {model: gpt3-1.3b, tensor_parallel: 2}\n";
  CHECK_THROWS_WITH(
      app::run_command({dir + "/tp.yaml", "--chakra-out", dir + "/t", "-q"}, out, err),
      doctest::Contains("has no event graph to export"));
}

TEST_CASE("chakra round trip: the exported FSDP step replays close to its step time") {
  for (const char* extra : {"", ", fsdp: {shard_degree: 4}"}) {
    CAPTURE(extra);
    const std::string dir = temp_dir(std::string("fsdp") + (*extra ? "-hsdp" : ""));
    const std::string yaml = std::string("name: fsdp\n") + kFabric +
                             "workload: {model: gpt3-1.3b, parallelism: fsdp, algorithm: ring" +
                             extra + ", perturbations: {straggler: {rank: 3, slowdown: 0.2}}}\n";
    const app::RunResult original = app::run_scenario(app::load_scenario_text(yaml, "fsdp"));
    REQUIRE(original.step);
    app::write_step_chakra(*original.step, dir);
    const app::RunResult replayed =
        app::run_scenario(app::load_scenario_text(chakra_yaml(dir, 8), "replay"));
    REQUIRE(replayed.chakra);
    // Each group runs its own copy: shard groups (8 / shard_degree) run the all-gathers and
    // reduce-scatters, replicate groups (shard_degree) HSDP's all-reduces.
    const std::size_t shard = original.step->fsdp_shard_degree;
    std::size_t expected = 0;
    for (const auto& c : original.step->collectives) {
      expected += c.kind == "all_reduce" ? shard : 8 / shard;
    }
    CHECK(replayed.chakra->replay.collectives == expected);
    const double a = original.step->step.seconds();
    const double b = replayed.step->step.seconds();
    MESSAGE("FSDP step " << a * 1e3 << " ms, replayed " << b * 1e3 << " ms");
    // Measured: 0.4 us (FULL_SHARD) and 0.2 us (HSDP) apart, from Chakra's whole microseconds.
    // At analytic fidelity an all-gather and a reduce-scatter that overlap share no endpoint pair
    // queue beyond what the original's idle timings saw, so 5 us is a bound with margin.
    CHECK(std::abs(b - a) <= 5e-6);
    const auto& compute = replayed.chakra->replay.rank_compute;
    CHECK(compute[3] > compute[0]);
  }
}
