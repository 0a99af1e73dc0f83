// Mixture-of-experts keys in `workload:`: the model's MoE fields, expert_parallel and
// capacity_factor, and their errors at file:line:col with the dotted path.
#include <doctest/doctest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::app::load_scenario_text;
using syncsim::app::Scenario;
using syncsim::testing::scenario_error_of;
using syncsim::testing::text_with;

namespace {

// 32 GPUs: 4 hosts of 8. Line 8 is the first line added below `model`.
const std::string kBase = R"(name: moe
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
  host: {gpus: 8, nics: 8}
workload:
  model: mixtral-8x7b
)";

}  // namespace

TEST_CASE("scenario: MoE presets and expert_parallel are read") {
  const Scenario s =
      load_scenario_text(kBase + "  expert_parallel: 8\n  capacity_factor: 1.25\n", "t.yaml");
  REQUIRE(s.workload);
  CHECK(s.workload->step.model.experts == 8);
  CHECK(s.workload->step.model.experts_per_token == 2);
  CHECK(s.workload->step.layout.expert == 8);
  CHECK(s.workload->step.layout.model_parallel());
  REQUIRE(s.workload->step.capacity_factor);
  CHECK(*s.workload->step.capacity_factor == 1.25);
  // A dense preset made MoE by its map.
  const Scenario custom = load_scenario_text(std::string(R"(name: moe
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
  host: {gpus: 8, nics: 8}
workload:
  model: {preset: llama3-8b, experts: 16, experts_per_token: 4, moe_ffn_hidden: 1024, dense_layers: 1}
  expert_parallel: 16
)"),
                                             "t.yaml");
  CHECK(custom.workload->step.model.experts == 16);
  CHECK(custom.workload->step.model.moe_ffn == 1024);
  CHECK(custom.workload->step.model.dense_layers == 1);
}

TEST_CASE("scenario: expert parallelism with tensor parallelism is read") {
  const Scenario s = load_scenario_text(
      kBase + "  tensor_parallel: 2\n  sequence_parallel: true\n  expert_parallel: 8\n", "t.yaml");
  REQUIRE(s.workload);
  CHECK(s.workload->step.layout.tensor == 2);
  CHECK(s.workload->step.layout.expert == 8);
  CHECK(s.workload->step.layout.sequence_parallel);
}

TEST_CASE("scenario: expert-parallel layout errors name workload.expert_parallel") {
  // Experts not divisible by EP.
  CHECK(scenario_error_of(kBase + "  expert_parallel: 3\n") ==
        "t.yaml:8:20: workload.expert_parallel: expected an expert-parallel degree dividing the 8 "
        "routed experts, got 3");
  // EP not dividing DP x CP (4 data-parallel ranks).
  CHECK(scenario_error_of(kBase + "  data_parallel: 4\n  expert_parallel: 8\n") ==
        "t.yaml:9:20: workload.expert_parallel: expected an expert-parallel degree dividing "
        "data_parallel x context_parallel (4 x 1 = 4), got 8");
  // EP with TP needs sequence parallelism (Megatron-Core's MoELayer refuses MoE under TP
  // without it).
  CHECK(scenario_error_of(kBase + "  tensor_parallel: 2\n  expert_parallel: 8\n") ==
        "t.yaml:9:20: workload.expert_parallel: expected sequence_parallel: true with "
        "tensor_parallel 2 and expert_parallel 8 (Megatron-Core trains MoE layers under tensor "
        "parallelism only with sequence parallelism), got sequence_parallel: false");
  // EP on a dense model.
  CHECK(scenario_error_of(text_with(kBase, "mixtral-8x7b", "llama3-8b") + "  expert_parallel: 2\n")
            .starts_with("t.yaml:8:20: workload.expert_parallel: expected a mixture-of-experts "
                         "model"));
  // MoE keys on a dense model, capacity factors, FSDP.
  CHECK(
      scenario_error_of(text_with(kBase, "mixtral-8x7b", "{preset: llama3-8b, moe_ffn_hidden: 8}"))
          .starts_with("t.yaml:7:46: workload.model.moe_ffn_hidden: expected model.experts > 0"));
  CHECK(scenario_error_of(text_with(kBase, "mixtral-8x7b", "{preset: llama3-8b, experts: 8}"))
            .starts_with("t.yaml:7:10: workload.model.experts_per_token: missing key"));
  CHECK(scenario_error_of(kBase + "  capacity_factor: 0\n")
            .starts_with("t.yaml:8:20: workload.capacity_factor: expected a capacity factor > 0"));
  CHECK(scenario_error_of(kBase + "  parallelism: fsdp\n")
            .starts_with("t.yaml:8:16: workload.parallelism: expected parallelism: ddp for a "
                         "mixture-of-experts model"));
  CHECK(scenario_error_of(kBase + "  expert_paralel: 8\n")
            .starts_with("t.yaml:8:3: workload.expert_paralel: unknown key"));
}
