// The FSDP (ZeRO-3) step: bytes, limits, closed form vs event-driven, memory.
#include <doctest/doctest.h>

#include "models/fsdp.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;
using step_fixtures::two_leaf_fabric;

namespace {

StepConfig fsdp_config(const char* model, uint32_t ranks) {
  StepConfig c = step_fixtures::step_config(model, ranks);
  c.parallelism = DataParallelism::Fsdp;
  return c;
}

StepResult run(const net::NetworkSpec& spec, Fidelity fidelity, const StepConfig& c) {
  return step_fixtures::run_step(spec, fidelity, c);
}

Time compute_of(const StepConfig& c) {
  Time t = Time::zero();
  for (const FsdpTask& task : fsdp_schedule(c).tasks) t += task.duration;
  return t;
}

}  // namespace

TEST_CASE("fsdp: units cover every parameter; the root holds the embeddings") {
  const auto s = *transformer_preset("llama3-8b");
  for (uint32_t per : {1u, 4u, 5u}) {
    FsdpParams p;
    p.layers_per_unit = per;
    const auto units = fsdp_units(s, p);
    int64_t total = 0;
    for (const auto& u : units) total += u.params;
    CHECK(total == total_parameters(s));
    CHECK(units.front().root);
    CHECK(units.size() == 1 + (s.layers + per - 1) / per);
  }
}

TEST_CASE("fsdp: bytes per GPU follow 3 (n-1)/n of the parameters, the root gathered once") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  auto c = fsdp_config("gpt3-1.3b", 8);
  c.zero_compute = true;  // bytes do not depend on compute; keeps the run short
  const auto r = run(spec, Fidelity::Analytic, c);
  const double n = 8;
  const double params = static_cast<double>(total_parameters(c.model));
  const double root = static_cast<double>(embedding_parameters(c.model));
  // All-gather in forward and backward, reduce-scatter once, bf16: 3 (n-1)/n P 2 bytes, less one
  // all-gather of the root unit (FSDP keeps the root gathered from forward through backward).
  const double expected = (3 * params - root) * 2 * (n - 1) / n;
  CHECK(static_cast<double>(r.bytes_per_gpu) == doctest::Approx(expected).epsilon(1e-4));
  CHECK(fsdp_ring_bytes_per_gpu(c.model, c.fsdp, 8) == doctest::Approx(expected).epsilon(1e-9));
  // 2 all-gathers and 1 reduce-scatter per block unit, 1 + 1 for the root.
  CHECK(r.collectives.size() == 3 * c.model.layers + 2);
  CHECK(r.buckets.empty());
}

TEST_CASE("fsdp: with compute set to zero the step is the communication time") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  auto c = fsdp_config("gpt3-1.3b", 8);
  c.zero_compute = true;
  c.optimizer = Time::zero();
  SUBCASE("one stream: every collective back to back") {
    c.fsdp.separate_streams = false;
    const auto r = run(spec, Fidelity::Analytic, c);
    CHECK(r.step == r.sync);
    CHECK(r.exposed_comm == r.step);
  }
  SUBCASE(
      "two streams: the all-gathers back to back, reduce-scatters hidden behind them but the "
      "last") {
    const auto r = run(spec, Fidelity::Analytic, c);
    Time gathers = Time::zero();
    for (const auto& k : r.collectives) {
      if (k.kind == "all_gather") gathers += k.end - k.start;
    }
    const Time last_reduce = r.collectives.back().end - r.collectives.back().start;
    CHECK(r.collectives.back().kind == "reduce_scatter");
    CHECK(r.step < r.sync);
    // Each unit's reduce-scatter (same size as the next all-gather) is done by the time the next
    // one is issued, except the last unit's and the root's.
    CHECK(r.step >= gathers + last_reduce);
    CHECK(r.step.seconds() <= (gathers + last_reduce).seconds() * 1.1);
  }
}

TEST_CASE("fsdp: with an infinitely fast network the step is the compute") {
  auto c = fsdp_config("gpt3-1.3b", 1);
  c.optimizer = Time::zero();
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  const auto alone = run(spec, Fidelity::Analytic, c);  // one rank: no communication at all
  CHECK(alone.step == compute_of(c));
  CHECK(alone.exposed_comm == Time::zero());
  // 8 ranks on a 1 Pb/s fabric: the prefetched all-gathers hide behind compute except the first
  // two and the last reduce-scatters, which take microseconds.
  auto c8 = fsdp_config("gpt3-1.3b", 8);
  c8.optimizer = Time::zero();
  const auto fast = run(two_leaf_fabric(8, Bandwidth::gbps(1'000'000)), Fidelity::Analytic, c8);
  CHECK(fast.step.seconds() == doctest::Approx(compute_of(c8).seconds()).epsilon(0.01));
}

TEST_CASE("fsdp: event-driven and closed form agree within 2% on an uncongested analytic fabric") {
  // One stream: collectives never overlap, so the fabric is uncongested and the two engines must
  // agree. Two streams: an all-gather and a reduce-scatter overlap on the same GPU pairs. The
  // analytic backend queues transfers between the same endpoints one after another (FIFO per pair,
  // like one queue pair), so the live step pays contention the closed form (idle-fabric times) does
  // not see: the closed form is then a lower bound, and the step is never worse than running
  // everything on one stream.
  for (auto bw : {Bandwidth::gbps(25), Bandwidth::gbps(100), Bandwidth::gbps(400)}) {
    CAPTURE(bw.gbit_per_second());
    auto c = fsdp_config("gpt3-1.3b", 8);
    c.grad_accumulation = 2;
    c.reuse_bucket_timings = false;  // every collective through the runner, live
    c.fsdp.separate_streams = false;
    const auto shared = run(two_leaf_fabric(8, bw), Fidelity::Analytic, c);
    CHECK(shared.step.seconds() ==
          doctest::Approx(shared.closed_form_step.seconds()).epsilon(0.02));
    c.fsdp.separate_streams = true;
    const auto separate = run(two_leaf_fabric(8, bw), Fidelity::Analytic, c);
    CHECK(separate.step.seconds() >= separate.closed_form_step.seconds() * 0.98);
    CHECK(separate.step.seconds() <= shared.step.seconds() * 1.02);
    for (const auto* r : {&shared, &separate}) {
      CHECK(r->mfu > 0.0);
      CHECK(r->mfu <= 1.0);
      CHECK(r->step >= r->forward + r->backward + r->optimizer);
    }
  }
}

TEST_CASE("fsdp: the closed form matches the per-unit formula for equal units") {
  // Synthetic durations: forward F, backward B per unit, all-gather A, reduce-scatter R.
  const auto c = fsdp_config("gpt3-1.3b", 8);
  FsdpSchedule s = fsdp_schedule(c);
  const Time F = Time::ms(3), B = Time::ms(6), H = Time::ms(2), A = Time::ms(4), R = Time::ms(5);
  const Time Aroot = Time::ms(7);
  std::vector<Time> d(s.comms.size());
  for (std::size_t i = 0; i < s.comms.size(); ++i) {
    const bool root = s.comms[i].unit == 0;
    d[i] = s.comms[i].op == CollectiveOp::AllGather ? (root ? Aroot : A) : R;
  }
  for (auto& t : s.tasks) {
    if (t.name.rfind("forward unit", 0) == 0) t.duration = F;
    if (t.name.rfind("backward unit", 0) == 0) t.duration = B;
    if (t.name.rfind("head", 0) == 0) t.duration = H;
  }
  const int64_t U = c.model.layers;
  const auto sep = fsdp_closed_form(s, d, true);
  // T_fwd = A_root + A_1 + sum_{i<U} max(F, A) + F + F_head; backward: max(H, A) + (U-1) max(B, A)
  // + B.
  const Time compute =
      Aroot + A + std::max(F, A) * (U - 1) + F + H + std::max(H, A) + std::max(B, A) * (U - 1) + B;
  CHECK(sep.compute_end == compute);
  // R < B: each reduce-scatter is done before the next unit's backward ends; the tail is the last
  // unit's and the root's.
  CHECK(sep.comm_end == compute + R + R);
  const auto shared = fsdp_closed_form(s, d, false);
  // One stream: during unit i's backward the stream carries the reduce-scatter of unit i+1 and the
  // all-gather of unit i-1: max(B, R + A) per unit after the first.
  const Time shared_compute = Aroot + A + std::max(F, A) * (U - 1) + F + H + std::max(H, A) +
                              std::max(B, A) + std::max(B, R + A) * (U - 2) + B;
  CHECK(shared.compute_end == shared_compute);
}

TEST_CASE("fsdp: sharding makes memory per GPU smaller than DDP's") {
  const auto spec = two_leaf_fabric(16, Bandwidth::gbps(400));
  auto c = fsdp_config("llama2-7b", 16);
  c.zero_compute = true;
  const auto f = run(spec, Fidelity::Analytic, c);
  c.parallelism = DataParallelism::Ddp;
  const auto d = run(spec, Fidelity::Analytic, c);
  CHECK(f.memory_per_gpu_bytes < d.memory_per_gpu_bytes);
  // 16 bytes per parameter replicated vs sharded 16 ways: most of DDP's 108 GB of state is gone.
  CHECK(d.memory_per_gpu_bytes - f.memory_per_gpu_bytes >
        0.8 * 16.0 * static_cast<double>(total_parameters(c.model)) * 15 / 16);
}

TEST_CASE("fsdp: a straggler slows the step; results are deterministic by seed") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(400));
  auto c = fsdp_config("gpt3-1.3b", 8);
  const auto base = run(spec, Fidelity::Analytic, c);
  CHECK(base.step == run(spec, Fidelity::Analytic, c).step);
  c.perturbations.straggler = 3;
  c.perturbations.straggler_slowdown = 0.2;
  const auto slow = run(spec, Fidelity::Analytic, c);
  CHECK(slow.step > base.step);
  CHECK(slow.mfu < base.mfu);
  // The closed form ignores perturbations.
  CHECK(slow.closed_form_step == base.closed_form_step);
}

TEST_CASE(
    "fsdp: live collectives on the flow backend agree with reused idle timings on one stream") {
  // One stream: collectives never overlap, so idle-fabric timings are exact (as for DDP buckets).
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  auto c = fsdp_config("gpt3-1.3b", 8);
  c.fsdp.separate_streams = false;
  c.fsdp.layers_per_unit = 6;  // fewer, larger collectives keep the live run quick
  c.reuse_bucket_timings = true;
  const auto cached = run(spec, Fidelity::Flow, c);
  c.reuse_bucket_timings = false;
  const auto live = run(spec, Fidelity::Flow, c);
  CHECK(live.step.seconds() == doctest::Approx(cached.step.seconds()).epsilon(1e-6));
}
