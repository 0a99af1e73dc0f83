// The event-driven model-parallel step in a scenario: `workload.step_engine` picks the engine
// (auto: event-driven when the fabric is shared), and the trace draws each communication kind on
// its own track per stage, beside the pipeline schedule.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "run/trace.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;

namespace {

// 4 hosts of one H100 on two leaves; PP 2 x DP 2 of a 4-layer GPT-3 1.3B, 4 micro-batches.
std::string scenario_text(const std::string& extra_workload, const std::string& extra = "") {
  return R"(name: mp-trace
seed: 1
fidelity: flow
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  host: {gpus: 1, nics: 1}
  links:
    host:   {bandwidth: 100Gbps, delay: 500ns}
    fabric: {bandwidth: 100Gbps, delay: 1us}
workload: {model: {preset: gpt3-1.3b, layers: 4}, gpu: h100, micro_batch: 1, grad_accumulation: 4,
           pipeline_parallel: 2)" +
         extra_workload + "}\n" + extra;
}

app::RunResult run_text(const std::string& yaml) {
  return app::run_scenario(app::load_scenario_text(yaml, "mp.yaml"));
}

}  // namespace

TEST_CASE("model-parallel scenario: auto runs the closed form alone, event-driven beside traffic") {
  const app::RunResult alone = run_text(scenario_text(""));
  REQUIRE(alone.step.has_value());
  CHECK(alone.step->engine == "closed_form");
  CHECK(alone.step->communication.empty());
  const std::string traffic =
      "traffic:\n  - {pattern: messages, messages: [{src: 0, dst: 2, size: 64MiB}]}\n";
  const app::RunResult shared = run_text(scenario_text("", traffic));
  REQUIRE(shared.step.has_value());
  CHECK(shared.step->engine == "event_driven");
  const app::RunResult forced = run_text(scenario_text(", step_engine: event_driven"));
  REQUIRE(forced.step.has_value());
  CHECK(forced.step->engine == "event_driven");
  // On the idle fabric the two engines agree (models tests hold the tolerance).
  CHECK(forced.step->step.seconds() == doctest::Approx(alone.step->step.seconds()).epsilon(0.02));
  // The background message crosses the leaves with the pipeline sends: the step feels it.
  CHECK(shared.step->step > forced.step->step);
}

TEST_CASE("model-parallel trace: a track per communication kind and stage, slices as they ran") {
  const app::RunResult r = run_text(scenario_text(", step_engine: event_driven"));
  REQUIRE(r.step.has_value());
  const nlohmann::json trace = app::step_trace(*r.step, 8);
  const nlohmann::json& events = trace["traceEvents"];
  std::map<std::string, int> track_slices;
  std::map<std::pair<std::size_t, int>, std::string> thread_names;
  for (const nlohmann::json& e : events) {
    if (e["ph"] == "M" && e["name"] == "thread_name") {
      thread_names[{e["pid"].get<std::size_t>(), e["tid"].get<int>()}] =
          e["args"]["name"].get<std::string>();
    }
  }
  int schedule_slices = 0;
  for (const nlohmann::json& e : events) {
    if (e["ph"] != "X") continue;
    const std::string& track = thread_names[{e["pid"].get<std::size_t>(), e["tid"].get<int>()}];
    if (track.find(" stage ") != std::string::npos && track.rfind("stage ", 0) != 0) {
      ++track_slices[track];
      CHECK(e["dur"].get<double>() > 0);
    }
    if (track.rfind("stage ", 0) == 0) ++schedule_slices;
  }
  // Stage 0 sends 4 activations, stage 1 sends 4 gradients back; each stage all-reduces its
  // gradient buckets over its 2 replicas.
  CHECK(track_slices["pp_send stage 0"] == 4);
  CHECK(track_slices["pp_send stage 1"] == 4);
  CHECK(track_slices["dp_all_reduce stage 0"] >= 1);
  CHECK(track_slices["dp_all_reduce stage 1"] >= 1);
  CHECK(schedule_slices == 2 * 2 * 4);
}

TEST_CASE("model-parallel scenario: a bad step_engine or lockstep_replicas points at its key") {
  const std::string bad_engine =
      syncsim::testing::scenario_error_of(scenario_text(", step_engine: fast"), {}, "mp.yaml");
  CHECK(bad_engine.find("mp.yaml:") == 0);
  CHECK(bad_engine.find("workload.step_engine: expected auto, event_driven or closed_form") !=
        std::string::npos);
  const std::string bad_lockstep =
      syncsim::testing::scenario_error_of(scenario_text(", lockstep_replicas: 3"), {}, "mp.yaml");
  CHECK(bad_lockstep.find("mp.yaml:") == 0);
  CHECK(bad_lockstep.find("workload.lockstep_replicas") != std::string::npos);
}

TEST_CASE("model-parallel scenario: collective_timing idle_fabric, and a bad value") {
  const std::string bad = syncsim::testing::scenario_error_of(
      scenario_text(", collective_timing: estimated"), {}, "mp.yaml");
  CHECK(bad.find("mp.yaml:") == 0);
  CHECK(bad.find("workload.collective_timing: expected live or idle_fabric") != std::string::npos);
  // On the idle fabric at flow fidelity the idle-fabric durations are the live ones up to ECMP
  // collisions between groups (the models tests hold the rule's error at analytic fidelity).
  const app::RunResult live = run_text(scenario_text(", step_engine: event_driven"));
  const app::RunResult idle =
      run_text(scenario_text(", step_engine: event_driven, collective_timing: idle_fabric"));
  REQUIRE(live.step.has_value());
  REQUIRE(idle.step.has_value());
  CHECK(idle.step->engine == "event_driven");
  MESSAGE("flow: idle-fabric timing " << idle.step->step.seconds() * 1e3 << " ms, live "
                                      << live.step->step.seconds() * 1e3 << " ms");
  CHECK(idle.step->step.seconds() == doctest::Approx(live.step->step.seconds()).epsilon(0.02));
  // With background traffic the step warns that its collectives do not see it.
  const std::string traffic =
      "traffic:\n  - {pattern: messages, messages: [{src: 0, dst: 2, size: 64MiB}]}\n";
  const app::RunResult shared = run_text(
      scenario_text(", step_engine: event_driven, collective_timing: idle_fabric", traffic));
  bool warned = false;
  for (const std::string& w : shared.warnings) {
    warned |= w.find("collective_timing: idle_fabric") != std::string::npos;
  }
  CHECK(warned);
  CHECK(shared.step->step == idle.step->step);
}

TEST_CASE("per-layer breakdown: in --json and on rank 0's op-class track of the trace") {
  const app::RunResult r = run_text(scenario_text(""));
  REQUIRE(r.step.has_value());
  REQUIRE(r.step->layer_compute.has_value());
  const nlohmann::json j = app::to_json(r);
  REQUIRE(j.contains("layer_breakdown"));
  const nlohmann::json& b = j["layer_breakdown"];
  CHECK(b["layers"] == r.step->layer_count);
  CHECK(b["forward"]["total"].get<double>() ==
        doctest::Approx(r.step->layer_compute->layer_forward));
  CHECK(b["backward"]["total"].get<double>() ==
        doctest::Approx(r.step->layer_compute->layer_backward));
  // The trace draws the same classes back to back on rank 0's "one block by op class" track.
  const nlohmann::json trace = app::step_trace(*r.step, 8);
  int tid = -1;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0 &&
        e["args"]["name"] == "one block by op class") {
      tid = e["tid"].get<int>();
    }
  }
  REQUIRE(tid >= 0);
  double forward_us = 0;
  int slices = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["pid"] != 0 || e["tid"] != tid) continue;
    ++slices;
    if (e["name"].get<std::string>().rfind("forward ", 0) == 0)
      forward_us += e["dur"].get<double>();
  }
  CHECK(slices >= 10);  // six forward classes, at least six backward ones
  CHECK(forward_us * 1e-6 == doctest::Approx(b["forward"]["total"].get<double>()).epsilon(1e-6));
}

TEST_CASE(
    "workload.kernels and workload.attention_kernel: slower kernels, longer steps; bad values") {
  const app::RunResult fused = run_text(scenario_text(", kernels: fused, attention_kernel: cudnn"));
  const app::RunResult eager =
      run_text(scenario_text(", kernels: eager, attention_kernel: flash2"));
  REQUIRE(fused.step.has_value());
  REQUIRE(eager.step.has_value());
  CHECK(eager.step->step > fused.step->step);
  CHECK(eager.step->layer_compute->elementwise_forward >
        2 * fused.step->layer_compute->elementwise_forward);
  const std::string bad_fusion =
      syncsim::testing::scenario_error_of(scenario_text(", kernels: jit"), {}, "mp.yaml");
  CHECK(bad_fusion.find("mp.yaml:") == 0);
  CHECK(bad_fusion.find("workload.kernels: expected one of: fused, compiled, eager") !=
        std::string::npos);
  // FlashAttention-3 runs on Hopper only.
  std::string a100 = scenario_text(", attention_kernel: flash3");
  a100.replace(a100.find("gpu: h100"), 9, "gpu: a100");
  const std::string bad_kernel = syncsim::testing::scenario_error_of(a100, {}, "mp.yaml");
  CHECK(bad_kernel.find("mp.yaml:") == 0);
  CHECK(bad_kernel.find("workload.attention_kernel: expected a kernel this GPU runs") !=
        std::string::npos);
}
