// FSDP composed with tensor, context and pipeline parallelism (the closed-form parallel step):
// checked against the FSDP engine where both apply (no model parallelism) and by its limits.
#include <doctest/doctest.h>

#include "models/fsdp.hpp"
#include "models/parallelism.hpp"
#include "sim/backends/make_backend.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

StepConfig fsdp_config(const char* model, uint32_t ranks, ParallelLayout layout) {
  StepConfig c = step_fixtures::step_config(model, ranks);
  c.parallelism = DataParallelism::Fsdp;
  c.gpus_per_host = 8;
  c.layout = layout;
  return c;
}

}  // namespace

TEST_CASE("fsdp x model parallel: without model parallelism it is the FSDP closed form") {
  // The parallel closed form treats FSDP's units as equal and prefetched one ahead; the FSDP
  // engine's closed form runs the exact max-plus recurrence over the same collectives.
  for (const auto bw : {Bandwidth::gbps(400), Bandwidth::gbps(25)}) {
    CAPTURE(bw.bits_per_second());
    const auto spec = step_fixtures::eight_gpu_hosts(4, bw);
    StepConfig c = fsdp_config("llama2-7b", 32, ParallelLayout{});
    c.grad_accumulation = 2;
    Simulation sim(c.seed);
    auto backend = make_backend(Fidelity::Analytic, sim, spec);
    const StepResult engine = simulate_fsdp_step(*backend, spec, Fidelity::Analytic, c);
    const StepResult closed = simulate_parallel_step(spec, Fidelity::Analytic, c);
    CHECK(closed.parallelism == DataParallelism::Fsdp);
    CHECK(closed.step.seconds() ==
          doctest::Approx(engine.closed_form_step.seconds()).epsilon(0.03));
    CHECK(closed.memory_per_gpu_bytes == doctest::Approx(fsdp_memory_per_gpu(c, 32)).epsilon(0.05));
  }
}

TEST_CASE("fsdp x TP: sharded over DP, TP shards gathered, exposure grows on a slow fabric") {
  const ParallelLayout tp8{.tensor = 8, .sequence_parallel = true};
  StepConfig c = fsdp_config("llama2-13b", 32, tp8);
  c.grad_accumulation = 2;
  const StepResult fast =
      simulate_parallel_step(step_fixtures::eight_gpu_hosts(4), Fidelity::Analytic, c);
  const StepResult slow = simulate_parallel_step(
      step_fixtures::eight_gpu_hosts(4, Bandwidth::gbps(10)), Fidelity::Analytic, c);
  CHECK(fast.engine == "closed_form");
  CHECK(slow.step > fast.step);
  CHECK(slow.exposed_comm - slow.tensor_parallel_comm >
        fast.exposed_comm - fast.tensor_parallel_comm);
  // Rows: one all-gather and one reduce-scatter size, the TP shard of one block.
  const auto* ag = step_fixtures::collective_row(fast, "fsdp_all_gather");
  REQUIRE(ag != nullptr);
  CHECK(ag->bytes == layer_parameters(c.model) / 8 * c.fsdp.param_bytes);
  CHECK(ag->count == 2 * 40 * 2);  // forward and backward, 40 blocks, 2 micro-batches
  // Memory: the same layout with DDP keeps 16 bytes per parameter of the TP shard; FSDP 16 / DP.
  StepConfig ddp = c;
  ddp.parallelism = DataParallelism::Ddp;
  const StepResult replicated =
      simulate_parallel_step(step_fixtures::eight_gpu_hosts(4), Fidelity::Analytic, ddp);
  const double shard_params = static_cast<double>(total_parameters(c.model)) / 8;
  CHECK(replicated.memory_per_gpu_bytes - fast.memory_per_gpu_bytes ==
        doctest::Approx(16.0 * shard_params * (1 - 1.0 / 4)).epsilon(0.05));
  // The same compute either way.
  CHECK(fast.tensor_parallel_comm == replicated.tensor_parallel_comm);
}
