// HSDP (FSDP HYBRID_SHARD): shard groups gather and reduce-scatter within themselves, the replicas
// all-reduce each gradient shard right after its reduce-scatter. Checked against FULL_SHARD (a
// shard group of every rank is FULL_SHARD exactly), the bytes a ring moves, the closed form, and
// the memory of a shard group.
#include <doctest/doctest.h>

#include <stdexcept>

#include "models/fsdp.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;
using step_fixtures::two_leaf_fabric;

namespace {

StepConfig hsdp_config(uint32_t ranks, uint32_t shard) {
  StepConfig c = step_fixtures::step_config("gpt3-1.3b", ranks);
  c.parallelism = DataParallelism::Fsdp;
  c.fsdp.shard_degree = shard;
  return c;
}

StepResult run(const net::NetworkSpec& spec, Fidelity fidelity, const StepConfig& c) {
  return step_fixtures::run_step(spec, fidelity, c);
}

}  // namespace

TEST_CASE("hsdp: a shard group of every rank is FULL_SHARD, bit for bit") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  const StepResult full = run(spec, Fidelity::Flow, hsdp_config(8, 0));
  const StepResult same = run(spec, Fidelity::Flow, hsdp_config(8, 8));
  CHECK(same.step == full.step);
  CHECK(same.bytes_per_gpu == full.bytes_per_gpu);
  CHECK(same.collectives.size() == full.collectives.size());
  CHECK(full.fsdp_shard_degree == 8);
  CHECK(same.memory_per_gpu_bytes == full.memory_per_gpu_bytes);
}

TEST_CASE("hsdp: bytes per GPU are the shard group's ring plus the replicas' all-reduce") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  auto c = hsdp_config(8, 2);  // 4 replicas of 2
  c.zero_compute = true;
  const StepResult r = run(spec, Fidelity::Analytic, c);
  const double shard = 2;
  const double replicas = 4;
  double all_reduce = 0;
  for (const FsdpUnit& u : fsdp_units(c.model, c.fsdp)) {
    all_reduce += static_cast<double>(u.params) * static_cast<double>(c.fsdp.gradient_bytes) /
                  shard * 2 * (replicas - 1) / replicas;
  }
  const double expected = fsdp_ring_bytes_per_gpu(c.model, c.fsdp, 2) + all_reduce;
  CHECK(static_cast<double>(r.bytes_per_gpu) == doctest::Approx(expected).epsilon(1e-3));
  // Per block unit 2 all-gathers, a reduce-scatter and an all-reduce; the root 1 + 1 + 1.
  CHECK(r.collectives.size() == 4 * c.model.layers + 3);
  std::size_t all_reduces = 0;
  for (std::size_t i = 0; i < r.collectives.size(); ++i) {
    if (r.collectives[i].kind != "all_reduce") continue;
    ++all_reduces;
    // Right behind its own reduce-scatter on the same stream.
    REQUIRE(i > 0);
    const CollectiveTiming& rs = r.collectives[i - 1];
    CHECK(rs.kind == "reduce_scatter");
    CHECK(rs.unit == r.collectives[i].unit);
    CHECK(r.collectives[i].start == rs.end);
    CHECK(r.collectives[i].bytes == (rs.bytes + 1) / 2);
  }
  CHECK(all_reduces == c.model.layers + 1);
}

TEST_CASE("hsdp: event-driven and closed form agree within 2% on an uncongested analytic fabric") {
  for (auto bw : {Bandwidth::gbps(25), Bandwidth::gbps(400)}) {
    CAPTURE(bw.gbit_per_second());
    auto c = hsdp_config(8, 4);
    c.grad_accumulation = 2;
    c.reuse_bucket_timings = false;  // every collective live, each group's runner on the fabric
    c.fsdp.separate_streams = false;
    const StepResult r = run(two_leaf_fabric(8, bw), Fidelity::Analytic, c);
    CHECK(r.step.seconds() == doctest::Approx(r.closed_form_step.seconds()).epsilon(0.02));
    CHECK(r.step >= r.forward + r.backward + r.optimizer);
  }
}

TEST_CASE("hsdp: memory is FULL_SHARD's over the shard group; the shard must divide the ranks") {
  const auto spec = two_leaf_fabric(8, Bandwidth::gbps(100));
  auto c = hsdp_config(8, 2);
  c.zero_compute = true;
  const StepResult hsdp = run(spec, Fidelity::Analytic, c);
  CHECK(hsdp.memory_per_gpu_bytes == fsdp_memory_per_gpu(c, 2));
  CHECK(hsdp.memory_per_gpu_bytes > fsdp_memory_per_gpu(c, 8));
  CHECK(fsdp_shard_ranks(c.fsdp, 8) == 2);
  c.fsdp.shard_degree = 3;
  CHECK_THROWS_AS(fsdp_shard_ranks(c.fsdp, 8), std::invalid_argument);
  c.fsdp.shard_degree = 16;  // more than the ranks: every rank shards (FULL_SHARD)
  CHECK(fsdp_shard_ranks(c.fsdp, 8) == 8);
}
