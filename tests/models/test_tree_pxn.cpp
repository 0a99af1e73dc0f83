// PXN and the double binary tree. The runner's PXN rule (a transfer between hosts leaves through
// the sending host's NIC on the receiver's rail) suits plans that put every inter-host hop on one
// rail by construction (rail-aligned rings). The tree plan is a binary tree over ranks whose
// inter-host edges join GPUs on different rails; under PXN up to three of a host's tree edges leave
// through the same NIC (on 4 hosts x 8 GPUs the busiest NIC sends 6 half-buffers instead of 4),
// which NCCL's per-channel NIC choice never does. It slowed every tree all-reduce on multi-GPU
// hosts by up to 1.5x (capacity-70b-4k.yaml at 800G: MFU 56.5% -> 49.4%). Tree plans therefore use
// each GPU's own NIC.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/make_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::identity;

namespace {

// 2 leaves x 2 hosts of 8 GPUs and 8 NICs, non-blocking (8 spines), 400G links.
topo::FabricParams four_hosts() {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = 2;
  p.spine_leaf.hosts_per_leaf = 2;
  p.spine_leaf.spines = 16;
  p.host.gpus = 8;
  p.host.nics = 8;
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->bandwidth = Bandwidth::gbps(400);
    l->delay = Time::ns(500);
  }
  p.switch_params.buffer = Bytes{64 << 20};
  return p;
}

PlanOptions tree_allreduce(uint32_t ranks) {
  PlanOptions o;
  o.op = CollectiveOp::AllReduce;
  o.algo = CollectiveAlgo::Tree;
  o.ranks = ranks;
  o.bytes = int64_t{64} << 20;
  o.chunk_bytes = int64_t{1} << 20;
  o.gpus_per_host = 8;
  return o;
}

}  // namespace

TEST_CASE(
    "tree all-reduce: inter-host transfers leave through the sending GPU's own NIC under PXN") {
  const auto spec = topo::build_fabric(four_hosts());
  const CollectivePlan plan = build_plan(tree_allreduce(32));
  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  CollectiveRunOptions pxn_on;  // the default
  REQUIRE(pxn_on.pxn);
  run_collective(backend, plan, identity(plan.ranks), pxn_on);

  std::vector<std::pair<uint32_t, uint32_t>> planned, sent;
  for (const PlanStep& s : plan.steps) {
    if (s.kind == PlanStep::Kind::Transfer && spec.gpus[s.src].host != spec.gpus[s.dst].host) {
      planned.emplace_back(s.src, s.dst);
    }
  }
  for (const TransferRecord& t : backend.transfers()) {
    if (spec.gpus[t.request.src_gpu].host != spec.gpus[t.request.dst_gpu].host) {
      sent.emplace_back(t.request.src_gpu, t.request.dst_gpu);
    }
  }
  REQUIRE(!planned.empty());
  std::sort(planned.begin(), planned.end());
  std::sort(sent.begin(), sent.end());
  CHECK(sent == planned);
}

TEST_CASE("tree all-reduce on the flow backend: PXN on and off give the same time") {
  // Before tree plans opted out of PXN, the busiest NIC carried 1.5x the bytes with PXN on and the
  // all-reduce took ~1.45x longer.
  const auto spec = topo::build_fabric(four_hosts());
  const CollectivePlan plan = build_plan(tree_allreduce(32));
  auto run = [&](bool pxn) {
    Simulation sim(1);
    auto backend = make_backend(Fidelity::Flow, sim, spec);
    CollectiveRunOptions ro;
    ro.pxn = pxn;
    return run_collective(*backend, plan, identity(plan.ranks), ro).duration();
  };
  const Time on = run(true), off = run(false);
  MESSAGE("tree all-reduce, 32 ranks, 64 MiB: PXN on ", on.seconds() * 1e3, " ms, off ",
          off.seconds() * 1e3, " ms");
  CHECK(on == off);
}
