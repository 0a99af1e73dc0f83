// The event-driven model-parallel step with context-parallel groups across hosts: each block's
// K/V ring runs live beside its attention core, and agrees with the closed form's
// max(0, ring - attention) per block on an idle fabric.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "model_parallel_fixtures.hpp"
#include "models/model_parallel_step.hpp"
#include "models/parallelism.hpp"
#include "models/traffic_injector.hpp"
#include "sim/backends/make_backend.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;
using namespace syncsim::model_parallel_fixtures;

namespace {

StepConfig cp_config(uint32_t tensor, uint32_t context, uint32_t pipeline, uint32_t m) {
  return layout_config(
      "llama2-13b", 32,
      ParallelLayout{
          .tensor = tensor, .context = context, .pipeline = pipeline, .sequence_parallel = true},
      m);
}

bool warned_about_context(const StepResult& r) {
  for (const std::string& w : r.warnings) {
    if (w.find("context-parallel groups span hosts") != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("model-parallel engine: CP groups across hosts run their K/V ring live") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  struct Case {
    const char* name;
    uint32_t tensor, context, pipeline, m;
  };
  // TP 2 x CP 8 (each CP group over two hosts) without and with pipelining.
  const Case cases[] = {{"TP 2 x CP 8 x DP 2", 2, 8, 1, 2}, {"TP 2 x CP 8 x PP 2", 2, 8, 2, 4}};
  for (const Case& k : cases) {
    CAPTURE(k.name);
    const StepConfig c = cp_config(k.tensor, k.context, k.pipeline, k.m);
    const StepResult event = event_step(spec, Fidelity::Analytic, c);
    const StepResult closed = simulate_parallel_step(spec, Fidelity::Analytic, c);
    MESSAGE(std::string(k.name) << ": event-driven " << event.step.seconds() * 1e3
                                << " ms, closed form " << closed.step.seconds() * 1e3 << " ms ("
                                << relative(event.step, closed.step) * 100
                                << " %), closed-form CP exposed "
                                << closed.context_parallel_exposed.seconds() * 1e3 << " ms");
    CHECK_FALSE(warned_about_context(event));
    // The ring is not hidden here, so the comparison tests the overlap, not only the compute.
    CHECK(closed.context_parallel_exposed > Time::zero());
    // Without pipelining, everything before the last micro-batch's backward is the closed
    // form's: each block's compute with max(0, ring - attention) exposed per block.
    if (k.pipeline == 1) {
      CHECK(std::abs(relative(event.forward, closed.forward)) < 1e-6);
      for (const PipelineOperation& op : event.pipeline_schedule) {
        if (!op.forward && op.micro_batch + 1 < k.m) {
          CHECK(std::abs(relative(op.end - op.start, closed.backward)) < 1e-6);
        }
      }
    }
    // The last backward's gradient buckets reduce over DP x CP, the CP groups' own GPUs: they
    // share the ring's links, which the closed form (each collective timed alone) does not see.
    CHECK(event.step >= closed.step);
    CHECK(relative(event.step, closed.step) < 0.2);
    int gathers = 0;
    int scatters = 0;
    for (const CommunicationSlice& sl : event.communication) {
      gathers += sl.kind == "cp_all_gather" ? 1 : 0;
      scatters += sl.kind == "cp_reduce_scatter" ? 1 : 0;
    }
    // 40 blocks, m micro-batches: a ring per block forward and backward, a reduce-scatter in
    // backward; one stream per pipeline rank records it.
    CHECK(gathers == 40 * 2 * static_cast<int>(k.m));
    CHECK(scatters == 40 * static_cast<int>(k.m));
  }
}

TEST_CASE("model-parallel engine: a live K/V ring feels traffic on its links") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  const StepConfig c = cp_config(2, 8, 1, 2);
  const StepResult quiet = event_step(spec, Fidelity::Flow, c);
  // 4 GiB flows both ways between every NIC of hosts 0 and 1, which the rings cross (NCCL's
  // channels spread a ring's host crossings over the NICs).
  std::vector<MessageSpec> background;
  for (uint32_t g = 0; g < 8; ++g) {
    background.push_back(MessageSpec{g, 8 + g, Bytes{int64_t{4} << 30}, Time::zero()});
    background.push_back(MessageSpec{8 + g, g, Bytes{int64_t{4} << 30}, Time::zero()});
  }
  const StepResult loaded = event_step(spec, Fidelity::Flow, c, background);
  MESSAGE("TP 2 x CP 8 at flow fidelity: quiet " << quiet.step.seconds() * 1e3 << " ms, with "
                                                 << "background " << loaded.step.seconds() * 1e3
                                                 << " ms");
  CHECK(loaded.step.seconds() > 1.03 * quiet.step.seconds());  // measured 1.047x
}

TEST_CASE("model-parallel engine: FSDP with CP groups across hosts runs the K/V ring live") {
  // FSDP 2 x TP 2 x CP 8 at 400G without gradient reduce-scatters (gradient_bytes 0, as the FSDP
  // agreement tests): the ring runs live inside each FSDP unit's compute. With idle-fabric timing,
  // where collectives over different groups do not meet, the engine is the closed form's
  // arithmetic; live, the next unit's gather (over DP x CP) and the block's K/V ring (over CP)
  // share the NICs, which neither the closed form nor the idle-fabric rule sees.
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = cp_config(2, 8, 1, 2);
  c.parallelism = DataParallelism::Fsdp;
  c.fsdp.gradient_bytes = 0;
  const StepResult live = event_step(spec, Fidelity::Analytic, c);
  const StepResult closed = simulate_parallel_step(spec, Fidelity::Analytic, c);
  c.model_parallel_idle_fabric_timing = true;
  const StepResult idle = event_step(spec, Fidelity::Analytic, c);
  MESSAGE("FSDP 2 x TP 2 x CP 8: live "
          << live.step.seconds() * 1e3 << " ms, idle-fabric timing " << idle.step.seconds() * 1e3
          << " ms, closed form " << closed.step.seconds() * 1e3 << " ms, closed-form CP "
          << "exposed " << closed.context_parallel_exposed.seconds() * 1e3 << " ms");
  CHECK_FALSE(warned_about_context(live));
  CHECK(closed.context_parallel_exposed > Time::zero());
  CHECK(std::abs(relative(idle.step, closed.step)) <= 0.025);
  CHECK(live.step > idle.step);
  int gathers = 0;
  for (const CommunicationSlice& sl : live.communication) {
    gathers += sl.kind == "cp_all_gather" ? 1 : 0;
  }
  CHECK(gathers == 40 * 2 * 2);
}

TEST_CASE("model-parallel engine: CP across hosts beside live TP stays idle-timed and says so") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  const StepConfig c = cp_config(16, 2, 1, 2);  // TP 16 spans two hosts and runs live
  const StepResult event = event_step(spec, Fidelity::Analytic, c);
  CHECK(warned_about_context(event));
  for (const CommunicationSlice& sl : event.communication) CHECK(sl.kind.rfind("cp_", 0) != 0);
}
