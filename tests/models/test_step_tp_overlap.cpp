// Megatron's TP communication overlap (tp_comm_overlap): sequence-parallel all-gathers and
// reduce-scatters pipelined with their GEMMs in TP chunks, in the closed-form parallel step.
#include <doctest/doctest.h>

#include "models/parallelism.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;

TEST_CASE("tp overlap: a collective pipelined with its GEMM in chunks (two-stage pipeline)") {
  // GEMM-bound: only the first chunk's communication shows, c / n.
  CHECK(overlapped_exposure(Time::ms(4), Time::ms(8), 4) == Time::ms(1));
  // Communication-bound: c/n + (n - 1) (c - g)/n = 3 + 3 x 2 = 9 ms of 12.
  CHECK(overlapped_exposure(Time::ms(12), Time::ms(4), 4) == Time::ms(9));
  // Balanced: one chunk.
  CHECK(overlapped_exposure(Time::ms(8), Time::ms(8), 8) == Time::ms(1));
  // One chunk cannot overlap anything.
  CHECK(overlapped_exposure(Time::ms(5), Time::ms(50), 1) == Time::ms(5));
  // Never more than the collective, never less than one chunk of it.
  for (int64_t c : {1, 3, 10, 40}) {
    for (int64_t g : {0, 2, 10, 100}) {
      const Time left = overlapped_exposure(Time::ms(c), Time::ms(g), 8);
      CHECK(left <= Time::ms(c));
      CHECK(left >= Time::ms(c) / 8);
    }
  }
}

TEST_CASE("tp overlap: the step hides TP traffic behind the GEMMs, and only that") {
  const auto spec = step_fixtures::eight_gpu_hosts(2);
  StepConfig c = step_fixtures::step_config("llama2-13b", 16);
  c.gpus_per_host = 8;
  c.grad_accumulation = 4;
  c.layout = ParallelLayout{.tensor = 8, .sequence_parallel = true};
  const StepResult plain = simulate_parallel_step(spec, Fidelity::Analytic, c);
  c.layout.tp_comm_overlap = true;
  const StepResult overlapped = simulate_parallel_step(spec, Fidelity::Analytic, c);
  CHECK(overlapped.layout.tp_comm_overlap);
  // The collectives themselves are the same; what is exposed of them shrinks.
  const auto* ag = step_fixtures::collective_row(plain, "tp_all_gather");
  const auto* rs = step_fixtures::collective_row(plain, "tp_reduce_scatter");
  REQUIRE(ag != nullptr);
  REQUIRE(rs != nullptr);
  CHECK(step_fixtures::collective_row(overlapped, "tp_all_gather")->end == ag->end);
  CHECK(overlapped.tensor_parallel_comm < plain.tensor_parallel_comm);
  // At least one chunk (1/TP) of each of the 8 collectives per block and micro-batch stays.
  const int64_t per_step = 40 * 4;  // layers x micro-batches
  const Time floor = ((ag->end + rs->end) * 4 / 8) * per_step;
  CHECK(overlapped.tensor_parallel_comm >= floor - Time::ns(per_step * 8));
  // The step is shorter by what was hidden (the same compute and DP sync otherwise).
  const Time hidden = plain.tensor_parallel_comm - overlapped.tensor_parallel_comm;
  CHECK((plain.step - overlapped.step).seconds() ==
        doctest::Approx(hidden.seconds()).epsilon(0.02));
  CHECK(overlapped.mfu > plain.mfu);
}
