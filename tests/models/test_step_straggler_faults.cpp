// Timed stragglers (`straggler` faults, models/compute_slowdown.hpp) in the DDP step.
#include <doctest/doctest.h>

#include "models/compute_slowdown.hpp"
#include "models/step_sim.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;
using step_fixtures::step_config;
using step_fixtures::two_leaf_fabric;

TEST_CASE("compute slowdown: work straddling the change runs at each moment's speed") {
  const std::vector<ComputeSlowdown> s{{2, Time::us(10), 1.5, Time::max()}};
  // Another rank, and before the change: unchanged.
  CHECK(compute_finish(s, 1, Time::zero(), Time::us(20)) == Time::us(20));
  CHECK(compute_finish(s, 2, Time::zero(), Time::us(10)) == Time::us(10));
  // 10 us of work at full speed, the other 10 us take 15.
  CHECK(compute_finish(s, 2, Time::zero(), Time::us(20)) == Time::us(25));
  // A slowdown that ends: 4 us at 1.5x (6 us of time), then full speed again.
  const std::vector<ComputeSlowdown> e{{0, Time::zero(), 1.5, Time::us(6)}};
  CHECK(compute_finish(e, 0, Time::zero(), Time::us(10)) == Time::us(12));
}

TEST_CASE("step: a 1.5x straggler from t = 0 raises the DDP step by the compute delta") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(400));
  auto c = step_config("gpt3-1.3b", 8);
  c.compute.micro_batch = 8;  // compute-bound: every bucket but the tail hides under backward
  const auto base = step_fixtures::run_step(spec, Fidelity::Analytic, c);
  c.perturbations.slowdowns.push_back({3, Time::zero(), 1.5, Time::max()});
  const auto slow = step_fixtures::run_step(spec, Fidelity::Analytic, c);
  // The slowest rank's forward and backward take 1.5x, and the step waits for it: it grows by half
  // the compute, less what the exposed tail shrinks (slower compute spaces the buckets out, so
  // fewer queue behind the last one): never more, and here within 1%.
  const Time compute = base.forward + base.backward;
  const double expected = 0.5 * compute.seconds();
  const double delta = slow.step.seconds() - base.step.seconds();
  CHECK(delta <= expected);
  CHECK(delta >= expected - base.tail.seconds());
  CHECK(delta == doctest::Approx(expected).epsilon(0.01));
  CHECK(slow.rank_backward_end[3] > slow.rank_backward_end[2]);
  // The closed form takes the slowest rank's compute: it moves by the same delta.
  CHECK(slow.closed_form_step.seconds() - base.closed_form_step.seconds() ==
        doctest::Approx(expected).epsilon(1e-3));
  // Slowed halfway through the step's compute, the delta is half as large.
  c.perturbations.slowdowns.front().at = Time::ps(compute.picoseconds() / 2);
  const auto half = step_fixtures::run_step(spec, Fidelity::Analytic, c);
  CHECK(half.step.seconds() - base.step.seconds() == doctest::Approx(expected / 2).epsilon(0.01));
}
