// What a step's time goes to (step_bound.hpp): shares that sum to one, the largest names the bound.
#include <doctest/doctest.h>

#include "models/step_bound.hpp"

using namespace syncsim;
using namespace syncsim::models;

TEST_CASE("step bound: shares of the step, compute the rest, the largest names the bound") {
  StepResult r;
  r.step = Time::ms(100);
  r.exposed_comm = Time::ms(30);
  r.pipeline_bubble = Time::ms(10);
  r.optimizer = Time::ms(5);
  StepShares s = step_shares(r);
  CHECK(s.exposed_communication == doctest::Approx(0.30));
  CHECK(s.pipeline_bubble == doctest::Approx(0.10));
  CHECK(s.optimizer == doctest::Approx(0.05));
  CHECK(s.compute == doctest::Approx(0.55));
  CHECK(bound_by(s) == "compute");

  r.exposed_comm = Time::ms(60);  // more exposed communication than compute
  s = step_shares(r);
  CHECK(s.compute == doctest::Approx(0.25));
  CHECK(s.compute + s.exposed_communication + s.pipeline_bubble + s.optimizer ==
        doctest::Approx(1.0));
  CHECK(bound_by(s) == "communication");

  r.exposed_comm = Time::ms(10);
  r.pipeline_bubble = Time::ms(50);
  CHECK(bound_by(step_shares(r)) == "pipeline_bubble");

  // Terms that add up past the step (rounding of the engines' sums) are scaled to fit.
  r.exposed_comm = Time::ms(80);
  r.pipeline_bubble = Time::ms(30);
  r.optimizer = Time::ms(10);
  s = step_shares(r);
  CHECK(s.compute == doctest::Approx(0.0));
  CHECK(s.exposed_communication + s.pipeline_bubble + s.optimizer == doctest::Approx(1.0));
  CHECK(bound_by(s) == "communication");

  // No step: no shares, and a tie (all zero) is compute.
  CHECK(bound_by(step_shares(StepResult{})) == "compute");
}

TEST_CASE("step bound: memory fits when the estimate is at most the GPU's, or either is unknown") {
  StepResult r;
  CHECK(fits_gpu_memory(r));
  r.memory_per_gpu_bytes = 81e9;
  CHECK(fits_gpu_memory(r));  // GPU memory unknown
  r.gpu_memory_bytes = 80e9;
  CHECK_FALSE(fits_gpu_memory(r));
  r.memory_per_gpu_bytes = 80e9;
  CHECK(fits_gpu_memory(r));
}
