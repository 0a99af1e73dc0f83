// workload.parallelism / fsdp / tensor_parallel / pipeline_parallel / context_parallel: parsing,
// errors with file:line:col, and which engine the run reports.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "models/parallelism.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;

namespace {

// 4 hosts x 8 GPUs = 32 GPUs. The workload block starts on line 9.
std::string scenario_with(const std::string& workload_lines) {
  return R"(name: parallel
fidelity: analytic
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  host: {gpus: 8, nics: 8}
workload:
  model: gpt3-1.3b
  gpu: h100
)" + workload_lines;
}

std::string error_of(const std::string& yaml) {
  return syncsim::testing::scenario_error_of(yaml, {}, "p.yaml");
}

}  // namespace

TEST_CASE("scenario: workload parallelism keys parse") {
  const auto s = app::load_scenario_text(
      scenario_with("  parallelism: fsdp\n  fsdp: {layers_per_unit: 2, streams: shared}\n"),
      "p.yaml");
  REQUIRE(s.workload.has_value());
  CHECK(s.workload->step.parallelism == models::DataParallelism::Fsdp);
  CHECK(s.workload->step.fsdp.layers_per_unit == 2);
  CHECK_FALSE(s.workload->step.fsdp.separate_streams);
  const auto m = app::load_scenario_text(
      scenario_with("  tensor_parallel: 8\n  pipeline_parallel: 2\n  context_parallel: 2\n"
                    "  sequence_parallel: true\n"),
      "p.yaml");
  CHECK(m.workload->step.layout.tensor == 8);
  CHECK(m.workload->step.layout.pipeline == 2);
  CHECK(m.workload->step.layout.context == 2);
  CHECK(m.workload->step.layout.sequence_parallel);
  CHECK(m.workload->step.layout.virtual_pipeline == 1);
  const auto v = app::load_scenario_text(
      scenario_with("  pipeline_parallel: 2\n  virtual_pipeline: 3\n"), "p.yaml");
  CHECK(v.workload->step.layout.virtual_pipeline == 3);
  CHECK_FALSE(v.workload->step.layout.embedding_in_pipeline_split);
  // 30 layers + the embedding + the loss = 32 = PP 2 x VP 4 x 4.
  std::string thirty = scenario_with(
      "  pipeline_parallel: 2\n  virtual_pipeline: 4\n"
      "  account_for_embedding_in_pipeline_split: true\n"
      "  account_for_loss_in_pipeline_split: true\n");
  thirty.replace(thirty.find("model: gpt3-1.3b"), 16, "model: {preset: gpt3-1.3b, layers: 30}");
  const auto f = app::load_scenario_text(thirty, "p.yaml");
  CHECK(f.workload->step.layout.embedding_in_pipeline_split);
  CHECK(f.workload->step.layout.loss_in_pipeline_split);
  CHECK(models::pipeline_rank_layers(f.workload->step.layout, 30) == std::vector<uint32_t>{15, 15});
  // Default: DDP, no model parallelism.
  const auto d = app::load_scenario_text(scenario_with(""), "p.yaml");
  CHECK(d.workload->step.parallelism == models::DataParallelism::Ddp);
  CHECK_FALSE(d.workload->step.layout.model_parallel());
}

TEST_CASE("scenario: invalid parallel layouts are rejected at file:line:col") {
  // TP x PP x CP x DP larger than the fabric.
  CHECK(
      error_of(scenario_with("  tensor_parallel: 8\n  data_parallel: 8\n"))
          .find(
              "p.yaml:11:18: workload.data_parallel: expected tensor_parallel x context_parallel x "
              "pipeline_parallel x data_parallel (8 x 1 x 1 x 8 = 64) to be at most the fabric's "
              "32") == 0);
  // TP x PP x CP not dividing the GPUs when data_parallel is left to fill the fabric.
  CHECK(error_of(scenario_with("  tensor_parallel: 8\n  pipeline_parallel: 3\n"))
            .find("p.yaml:10:20: workload.tensor_parallel: expected tensor_parallel x "
                  "context_parallel x "
                  "pipeline_parallel (8 x 1 x 3 = 24) to divide the fabric's 32 GPUs") == 0);
  CHECK(
      error_of(scenario_with("  pipeline_parallel: 5\n"))
          .find("p.yaml:10:22: workload.pipeline_parallel: expected the 24 layers to split evenly "
                "over pipeline_parallel x virtual_pipeline = 5 x 1 = 5 pipeline stages") == 0);
  // Interleaved stages: 24 layers on PP 2 x VP 4 split (3 each), PP 2 x VP 5 do not; VP needs PP.
  CHECK(error_of(scenario_with("  pipeline_parallel: 2\n  virtual_pipeline: 5\n"))
            .find("p.yaml:11:21: workload.virtual_pipeline: expected the 24 layers to split evenly "
                  "over pipeline_parallel x virtual_pipeline = 2 x 5 = 10 pipeline stages") == 0);
  CHECK(error_of(scenario_with("  virtual_pipeline: 2\n"))
            .find("p.yaml:10:21: workload.virtual_pipeline: virtual pipeline stages need "
                  "pipeline_parallel > 1") == 0);
  // The embedding and the loss counted as layers: 24 + 2 = 26 does not split over 4 stages.
  CHECK(
      error_of(scenario_with("  pipeline_parallel: 4\n  account_for_embedding_in_pipeline_split: "
                             "true\n  account_for_loss_in_pipeline_split: true\n"))
          .find("p.yaml:12:39: workload.account_for_loss_in_pipeline_split: expected the 24 layers "
                "+ 2 (embedding/loss counted as layers) to split evenly") == 0);
  // TP communication overlap needs sequence parallelism, as in Megatron.
  CHECK(error_of(scenario_with("  tensor_parallel: 8\n  tp_comm_overlap: true\n"))
            .find("p.yaml:11:20: workload.tp_comm_overlap: tp_comm_overlap needs "
                  "sequence_parallel: true") == 0);
  CHECK(app::load_scenario_text(scenario_with("  tensor_parallel: 8\n  sequence_parallel: true\n"
                                              "  tp_comm_overlap: true\n"),
                                "p.yaml")
            .workload->step.layout.tp_comm_overlap);
  // The distributed optimizer shards DDP's optimizer; FSDP has its own sharding.
  CHECK(error_of(scenario_with("  parallelism: fsdp\n  distributed_optimizer: true\n"))
            .find("p.yaml:11:26: workload.distributed_optimizer: distributed_optimizer shards the "
                  "optimizer of DDP") == 0);
  CHECK(error_of(scenario_with("  distributed_optimizer: maybe\n"))
            .find("p.yaml:10:26: workload.distributed_optimizer") == 0);
  CHECK(app::load_scenario_text(scenario_with("  distributed_optimizer: true\n"), "p.yaml")
            .workload->step.layout.distributed_optimizer);
  CHECK(error_of(scenario_with("  pipeline_parallel: 2\n  virtual_pipeline: two\n"))
            .find("p.yaml:11:21: workload.virtual_pipeline") == 0);
  CHECK(error_of(scenario_with("  tensor_parallel: 4\n  context_parallel: 3\n"))
            .find("p.yaml:11:21: workload.context_parallel") == 0);
  CHECK(
      error_of(scenario_with("  tensor_parallel: 4\n  pipeline_parallel: 2\n  context_parallel: 2\n"
                             "  data_parallel: 3\n"))
          .find("workload.data_parallel: expected") != std::string::npos);
  CHECK(error_of(scenario_with("  tensor_parallel: 3\n"))
            .find("p.yaml:10:20: workload.tensor_parallel") == 0);
  CHECK(error_of(scenario_with("  tensor_parallel: 0\n"))
            .find("p.yaml:10:20: workload.tensor_parallel") == 0);
  CHECK(error_of(scenario_with("  sequence_parallel: true\n")).find("workload.sequence_parallel") !=
        std::string::npos);
  // FSDP: a block without the mode, an unknown key, FSDP with model parallelism.
  CHECK(error_of(scenario_with("  fsdp: {layers_per_unit: 2}\n"))
            .find("p.yaml:10:9: workload.fsdp: an fsdp block needs workload.parallelism: fsdp") ==
        0);
  CHECK(error_of(scenario_with("  parallelism: fsdp\n  fsdp: {unit: 2}\n"))
            .find("workload.fsdp.unit") != std::string::npos);
  CHECK(
      error_of(scenario_with("  parallelism: zero\n")).find("p.yaml:10:16: workload.parallelism") ==
      0);
  // FSDP composes with model parallelism (the closed-form parallel step).
  CHECK(app::load_scenario_text(scenario_with("  parallelism: fsdp\n  tensor_parallel: 2\n"),
                                "p.yaml")
            .workload->step.layout.tensor == 2);
}

TEST_CASE("run: the JSON says which engine produced the step") {
  auto json_of = [](const std::string& lines) {
    return app::to_json(app::run_scenario(app::load_scenario_text(scenario_with(lines), "p.yaml")));
  };
  const auto ddp = json_of("");
  CHECK(ddp["engine"] == "event_driven");
  CHECK(ddp["parallelism"] == "ddp");
  CHECK(ddp["collectives"].empty());
  const auto fsdp = json_of("  parallelism: fsdp\n");
  CHECK(fsdp["engine"] == "event_driven");
  CHECK(fsdp["parallelism"] == "fsdp");
  CHECK(fsdp["collectives"].size() == 3 * 24 + 2);
  CHECK(fsdp["collectives"][0]["kind"] == "all_gather");
  CHECK(fsdp["buckets"].empty());
  const auto three_d =
      json_of("  tensor_parallel: 8\n  pipeline_parallel: 2\n  grad_accumulation: 4\n");
  CHECK(three_d["engine"] == "closed_form");
  CHECK(three_d["layout"]["data_parallel"] == 2);
  CHECK(three_d["bubble_fraction"].get<double>() > 0.0);
  for (const char* key :
       {"step_time_s", "forward_s", "backward_s", "sync_s", "exposed_comm_s", "tail_s", "mfu",
        "tokens_per_s", "bytes_per_gpu", "pipeline_bubble_s", "tp_comm_s"}) {
    CAPTURE(key);
    CHECK(three_d.contains(key));
  }
  // The distributed optimizer runs in the closed form, also without model parallelism.
  const auto fsdp_tp = json_of("  parallelism: fsdp\n  tensor_parallel: 8\n");
  CHECK(fsdp_tp["engine"] == "closed_form");
  CHECK(fsdp_tp["parallelism"] == "fsdp");
  CHECK(fsdp_tp["buckets"].empty());
  const auto zero1 = json_of("  distributed_optimizer: true\n");
  CHECK(zero1["engine"] == "closed_form");
  CHECK(zero1["layout"]["distributed_optimizer"] == true);
  CHECK(ddp["layout"]["distributed_optimizer"] == false);
  CHECK(zero1["memory_per_gpu_bytes"].get<double>() < ddp["memory_per_gpu_bytes"].get<double>());
}

TEST_CASE("run: global batch and tokens per step from every engine") {
  // 32 GPUs; micro_batch 1 as in scenario_with. Each layout: global batch = micro-batch x
  // micro-batches x DP replicas, tokens = global batch x sequence.
  struct Case {
    const char* lines;
    int64_t global_batch;
    int64_t grad_accumulation;
  };
  for (const Case& c :
       {Case{"", 32, 1}, Case{"  parallelism: fsdp\n  global_batch: 64\n", 64, 2},
        Case{"  tensor_parallel: 8\n  pipeline_parallel: 2\n  global_batch: 16\n", 16, 8}}) {
    CAPTURE(c.lines);
    const auto s = app::load_scenario_text(scenario_with(c.lines), "p.yaml");
    const auto j = app::to_json(app::run_scenario(s));
    CHECK(j["global_batch"] == c.global_batch);
    CHECK(j["layout"]["grad_accumulation"] == c.grad_accumulation);
    CHECK(j["tokens_per_step"].get<double>() ==
          doctest::Approx(static_cast<double>(c.global_batch) * s.workload->step.model.sequence));
    CHECK(j["tokens_per_s"].get<double>() ==
          doctest::Approx(j["tokens_per_step"].get<double>() / j["step_time_s"].get<double>()));
  }
}

TEST_CASE("scenario: fsdp.shard_degree (HSDP) divides the data-parallel ranks, with TP too") {
  // 32 GPUs. Line 11 holds the fsdp block.
  const auto s = app::load_scenario_text(
      scenario_with("  parallelism: fsdp\n  fsdp: {shard_degree: 8}\n"), "p.yaml");
  CHECK(s.workload->step.fsdp.shard_degree == 8);
  CHECK(error_of(scenario_with("  parallelism: fsdp\n  fsdp: {shard_degree: 12}\n"))
            .find("workload.fsdp.shard_degree: expected a divisor of the 32 data-parallel ranks, "
                  "got 12") != std::string::npos);
  CHECK(error_of(scenario_with("  parallelism: fsdp\n  fsdp: {shard_degree: 0}\n"))
            .find("p.yaml:11:24: workload.fsdp.shard_degree") == 0);
  // With TP 2 the shard degree divides the 16 data-parallel ranks of each TP rank.
  const auto tp = app::load_scenario_text(
      scenario_with("  parallelism: fsdp\n  fsdp: {shard_degree: 4}\n  tensor_parallel: 2\n"),
      "p.yaml");
  CHECK(tp.workload->step.fsdp.shard_degree == 4);
  CHECK(error_of(scenario_with(
                     "  parallelism: fsdp\n  fsdp: {shard_degree: 32}\n  tensor_parallel: 2\n"))
            .find("workload.fsdp.shard_degree: expected a divisor of the 16 data-parallel ranks, "
                  "got 32") != std::string::npos);
  // The run reports it: the shard degree, and the replicas' all-reduces among the collectives.
  const auto j = app::to_json(app::run_scenario(s));
  CHECK(j["layout"]["fsdp_shard_degree"] == 8);
  std::size_t all_reduces = 0;
  for (const auto& c : j["collectives"]) {
    if (c["kind"] == "all_reduce") ++all_reduces;
  }
  CHECK(all_reduces == s.workload->step.model.layers + 1);
}
