// The event-driven DDP step against the closed form and its limits.
#include <doctest/doctest.h>

#include "models/step_sim.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;
using step_fixtures::step_config;
using step_fixtures::two_leaf_fabric;

namespace {

StepResult run(const net::NetworkSpec& spec, Fidelity fidelity, const StepConfig& c) {
  return step_fixtures::run_step(spec, fidelity, c);
}

}  // namespace

TEST_CASE("step: event-driven and closed form agree within 2% on an uncongested analytic fabric") {
  for (auto bw : {Bandwidth::gbps(25), Bandwidth::gbps(100), Bandwidth::gbps(400)}) {
    CAPTURE(bw.gbit_per_second());
    const auto spec = two_leaf_fabric(16, bw);
    const auto r = run(spec, Fidelity::Analytic, step_config("gpt3-1.3b", 16));
    CHECK(r.step.seconds() == doctest::Approx(r.closed_form_step.seconds()).epsilon(0.02));
    CHECK(r.mfu > 0.0);
    CHECK(r.mfu <= 1.0);
    CHECK(r.hfu >= r.mfu);
    CHECK(r.buckets.size() > 10);
  }
}

TEST_CASE("step: when sync fits under backward, the exposed communication is the tail") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(800));
  auto c = step_config("gpt3-1.3b", 8);
  c.compute.micro_batch = 8;  // enough backward to hide 2(n-1)/n x 2.6 GB at 800G
  const auto r = run(spec, Fidelity::Analytic, c);
  REQUIRE(r.sync < r.backward);
  CHECK(r.exposed_comm == r.tail);
  // Communication kept up during backward, so the tail is exactly the buckets whose gradients are
  // only ready when backward ends (the first block's last tensors and the tied embedding), run back
  // to back.
  const Time compute_end = r.forward + r.backward;
  Time end_ready = Time::zero();
  for (const auto& bucket : r.buckets) {
    if (bucket.ready >= compute_end) end_ready += bucket.end - bucket.start;
  }
  CHECK(end_ready > Time::zero());
  CHECK(r.tail == end_ready);
  CHECK(r.step == r.forward + r.backward + r.tail + r.optimizer);
}

TEST_CASE("step: with compute set to zero the step is the communication time") {
  auto c = step_config("gpt3-1.3b", 8);
  c.zero_compute = true;
  c.optimizer = Time::zero();
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  const auto r = run(spec, Fidelity::Analytic, c);
  CHECK(r.step == r.sync);
  CHECK(r.step == r.buckets.back().end);
  // Ring all-reduce moves 2(n-1)/n of the gradients per GPU.
  const double grads = static_cast<double>(total_parameters(c.model)) * 2;
  CHECK(static_cast<double>(r.bytes_per_gpu) == doctest::Approx(grads * 2 * 7 / 8).epsilon(0.001));
}

TEST_CASE(
    "step: running every bucket live equals reusing idle-fabric timings when nothing else runs") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  auto c = step_config("gpt3-1.3b", 8);
  c.ddp.bucket_cap = Bytes{200 << 20};  // fewer buckets keep the live flow run quick
  for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow}) {
    CAPTURE(fidelity_name(f));
    c.reuse_bucket_timings = true;
    const auto cached = run(spec, f, c);
    c.reuse_bucket_timings = false;
    const auto live = run(spec, f, c);
    CHECK(live.step.seconds() == doctest::Approx(cached.step.seconds()).epsilon(1e-6));
  }
}

TEST_CASE("step: a straggler slows the synchronous step; noise is deterministic by seed") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(400));
  auto c = step_config("gpt3-1.3b", 8);
  const auto base = run(spec, Fidelity::Analytic, c);
  c.perturbations.straggler = 5;
  c.perturbations.straggler_slowdown = 0.2;
  const auto slow = run(spec, Fidelity::Analytic, c);
  const double compute = (base.forward + base.backward).seconds();
  CHECK(slow.step.seconds() - base.step.seconds() == doctest::Approx(0.2 * compute).epsilon(0.05));
  CHECK(slow.mfu < base.mfu);

  auto noisy = step_config("gpt3-1.3b", 8);
  noisy.perturbations.compute_noise_cv = 0.05;
  const auto a = run(spec, Fidelity::Analytic, noisy);
  const auto a2 = run(spec, Fidelity::Analytic, noisy);
  noisy.seed = 2;
  const auto b = run(spec, Fidelity::Analytic, noisy);
  CHECK(a.step == a2.step);
  CHECK(a.step != b.step);
  CHECK(a.step > base.step);  // the step waits for the slowest of 8 noisy ranks
}
