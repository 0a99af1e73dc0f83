// `workload.global_batch`: the recipe's batch turned into micro-batches per step, from the
// fabric's GPUs and the model-parallel layout; a batch that does not divide is refused.
#include <doctest/doctest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::app::load_scenario_text;
using syncsim::app::Scenario;
using syncsim::testing::scenario_error_of;
using syncsim::testing::text_with;

namespace {

// 16 GPUs (2 leaves x 2 hosts x 4 GPUs). Line 8 is `micro_batch`, line 9 `global_batch`.
const std::string kBatch = R"(name: batch
fidelity: analytic
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  host: {gpus: 4, nics: 4}
workload:
  micro_batch: 2
  global_batch: 64
  model: gpt3-1.3b
)";

bool warned_about(const Scenario& s, const std::string& text) {
  for (const std::string& w : s.load_warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("global_batch: micro-batches per step = global batch / (micro_batch x replicas)") {
  // DDP on all 16 GPUs: 64 / (2 x 16) = 2.
  const Scenario ddp = load_scenario_text(kBatch, "t.yaml");
  REQUIRE(ddp.workload);
  CHECK(ddp.workload->step.grad_accumulation == 2);
  CHECK(ddp.load_warnings.empty());
  // TP 2 x PP 2 leaves 4 replicas: 64 / (2 x 4) = 8.
  const Scenario mp = load_scenario_text(text_with(kBatch, "  model: gpt3-1.3b",
                                                   "  model: gpt3-1.3b\n  tensor_parallel: 2\n"
                                                   "  pipeline_parallel: 2"),
                                         "t.yaml");
  CHECK(mp.workload->step.grad_accumulation == 8);
  // Context-parallel ranks share their sequences: CP 2 halves the replicas as TP does.
  const Scenario cp = load_scenario_text(
      text_with(kBatch, "  model: gpt3-1.3b", "  model: gpt3-1.3b\n  context_parallel: 2"),
      "t.yaml");
  CHECK(cp.workload->step.grad_accumulation == 4);
  // An explicit data_parallel counts the replicas.
  const Scenario dp = load_scenario_text(
      text_with(kBatch, "  model: gpt3-1.3b", "  model: gpt3-1.3b\n  data_parallel: 8"), "t.yaml");
  CHECK(dp.workload->step.grad_accumulation == 4);
}

TEST_CASE("global_batch: one that micro_batch x replicas does not divide is refused") {
  const std::string e =
      scenario_error_of(text_with(kBatch, "global_batch: 64", "global_batch: 48"));
  CHECK(e.find("t.yaml:9:17: workload.global_batch: expected a multiple of micro_batch x "
               "data-parallel replicas (2 x 16 = 32), got 48") != std::string::npos);
  // Smaller than one pass of the replicas.
  CHECK(
      scenario_error_of(text_with(kBatch, "global_batch: 64", "global_batch: 16")).find("got 16") !=
      std::string::npos);
  CHECK(scenario_error_of(text_with(kBatch, "global_batch: 64", "global_batch: 0"))
            .find("workload.global_batch") != std::string::npos);
}

TEST_CASE("global_batch: a grad_accumulation it replaces is named in a warning") {
  const Scenario same = load_scenario_text(
      text_with(kBatch, "  global_batch: 64", "  global_batch: 64\n  grad_accumulation: 2"),
      "t.yaml");
  CHECK(same.workload->step.grad_accumulation == 2);
  CHECK_FALSE(warned_about(same, "grad_accumulation"));
  const Scenario other = load_scenario_text(
      text_with(kBatch, "  global_batch: 64", "  global_batch: 64\n  grad_accumulation: 5"),
      "t.yaml");
  CHECK(other.workload->step.grad_accumulation == 2);
  CHECK(warned_about(other, "workload.grad_accumulation: 5 is replaced by global_batch"));
}
