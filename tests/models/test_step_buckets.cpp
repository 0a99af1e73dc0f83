// DDP bucket order: PyTorch's first iteration (reverse model.parameters()) vs after
// rebuild_buckets().
#include <doctest/doctest.h>

#include <numeric>

#include "models/step_sim.hpp"
#include "sim/backends/make_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;

TEST_CASE(
    "ddp buckets: the first iteration's parameter order holds buckets until their norms are "
    "ready") {
  const auto s = *transformer_preset("llama2-7b");
  DdpParams rebuilt;
  DdpParams first = rebuilt;
  first.parameter_order = true;
  const auto a = ddp_buckets(s, rebuilt);
  const auto b = ddp_buckets(s, first);
  int64_t total_a = 0;
  int64_t total_b = 0;
  for (const auto& x : a) total_a += x.size.count();
  for (const auto& x : b) total_b += x.size.count();
  CHECK(total_a == total_b);
  // Rebuilt: ready times never go back. Parameter order: a bucket holding a block's norms waits for
  // the end of that block, so a later bucket can be ready before it.
  bool decreases = false;
  for (std::size_t i = 1; i < b.size(); ++i) decreases |= b[i].ready_at < b[i - 1].ready_at;
  CHECK(decreases);
  for (std::size_t i = 1; i < a.size(); ++i) CHECK(a[i].ready_at >= a[i - 1].ready_at);

  // When backward hides the all-reduces (micro-batch 8, 800G), the first iteration exposes more:
  // each bucket with a block's norms waits for that block's end, and the buckets behind it on the
  // stream wait too, so the tail grows. (When communication is exposed anyway, the order matters
  // little.)
  topo::FabricParams p;
  p.spine_leaf.leaves = 2;
  p.spine_leaf.hosts_per_leaf = 4;
  p.spine_leaf.spines = 4;
  p.links.host.bandwidth = Bandwidth::gbps(800);
  p.links.fabric.bandwidth = Bandwidth::gbps(800);
  const auto spec = topo::build_fabric(p);
  StepConfig c;
  c.model = s;
  c.gpu = *gpu_preset("h100");
  c.compute.micro_batch = 8;
  c.rank_to_gpu.resize(8);
  std::iota(c.rank_to_gpu.begin(), c.rank_to_gpu.end(), 0u);
  auto step = [&](const DdpParams& ddp) {
    c.ddp = ddp;
    Simulation sim(c.seed);
    auto backend = make_backend(Fidelity::Analytic, sim, spec);
    return simulate_ddp_step(*backend, spec, Fidelity::Analytic, c);
  };
  const StepResult r_rebuilt = step(rebuilt);
  const StepResult r_first = step(first);
  REQUIRE(r_rebuilt.sync < r_rebuilt.backward);
  CHECK(r_first.exposed_comm > r_rebuilt.exposed_comm);
  CHECK(r_first.step > r_rebuilt.step);
}
