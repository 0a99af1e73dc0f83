// Rail-aligned rings: on hosts with several GPUs, every channel's inter-host hops stay on one rail
// (NCCL's NET/c GPU/c ... NET/c rings with PXN), so a rail-optimized fabric never uses its spines.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
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

// `hosts` hosts of `gpus` GPUs and `nics` NICs on one rail-optimized group with `spines` spines,
// 400G NICs and fabric links.
topo::FabricParams rail_fabric(uint32_t hosts, uint32_t gpus, uint32_t nics, uint32_t spines) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::RailOptimized;
  p.rail.groups = 1;
  p.rail.hosts_per_group = hosts;
  p.rail.spines = spines;
  p.host.gpus = gpus;
  p.host.nics = nics;
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->bandwidth = Bandwidth::gbps(400);
    l->delay = Time::ns(500);
  }
  p.switch_params.buffer = Bytes{64 << 20};
  return p;
}

}  // namespace

TEST_CASE("rail-aligned ring plans: channel c crosses hosts only between GPUs on rail c") {
  for (uint32_t g : {2u, 4u, 8u}) {
    for (uint32_t nodes : {2u, 3u, 5u}) {
      for (uint32_t nics : {0u, g / 2}) {
        if (nics == 1 && g == 2) continue;  // one NIC: a single rail, nothing to align
        const uint32_t rails = nics == 0 ? g : nics;
        for (CollectiveOp op :
             {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
              CollectiveOp::Broadcast, CollectiveOp::Reduce}) {
          PlanOptions o;
          o.op = op;
          o.ranks = g * nodes;
          o.gpus_per_host = g;
          o.nics_per_host = nics;
          o.channels = 2 * g;
          o.bytes = int64_t{o.ranks} * o.channels * 3 + 5;
          o.root = o.ranks - 2;
          CAPTURE(g);
          CAPTURE(nodes);
          CAPTURE(nics);
          CAPTURE(std::string(to_string(op)));
          const CollectivePlan plan = build_plan(o);
          const PlanCheck check = verify_plan(plan);
          CHECK_MESSAGE(check.ok, check.error);
          std::map<uint32_t, int64_t> inter_bytes_per_rail;
          for (const PlanStep& s : plan.steps) {
            if (s.kind != PlanStep::Kind::Transfer || s.src / g == s.dst / g) continue;
            // The receiver's NIC is on the channel's rail, as the fabric builder wires GPU l to
            // NIC floor(l * nics / g).
            const uint32_t rail = (s.dst % g) * rails / g;
            CHECK(rail == s.channel % rails);
            // The sender is the host's last GPU before the entry GPU in local order (NVLink
            // carries the rest), so with PXN it sends through the same rail.
            CHECK((s.src % g + 1) % g == s.dst % g);
            inter_bytes_per_rail[rail] += s.bytes;
          }
          // 2g channels spread the inter-host bytes evenly over the rails (up to the remainder
          // bytes of the split). Broadcast/reduce chains skip one ring edge, which may cross hosts.
          REQUIRE(inter_bytes_per_rail.size() == rails);
          if (op == CollectiveOp::Broadcast || op == CollectiveOp::Reduce) continue;
          const int64_t first = inter_bytes_per_rail.begin()->second;
          for (const auto& [rail, bytes] : inter_bytes_per_rail) {
            CHECK(bytes >= first - int64_t{o.ranks} * o.ranks);
            CHECK(bytes <= first + int64_t{o.ranks} * o.ranks);
          }
        }
      }
    }
  }
}

TEST_CASE("rail-aligned ring all_reduce uses no spine on a rail-optimized fabric") {
  const uint32_t hosts = 4, g = 4;
  const auto spec = topo::build_fabric(rail_fabric(hosts, g, g, 2));
  PlanOptions o;
  o.ranks = hosts * g;
  o.gpus_per_host = g;
  o.channels = g;
  o.bytes = int64_t{16} << 20;
  o.chunk_bytes = int64_t{256} << 10;
  const CollectivePlan plan = build_plan(o);
  auto leaf_of_gpu = [&](uint32_t gpu) { return spec.attachment_of_nic[spec.gpus[gpu].nic]; };

  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  const CollectiveResult r = run_collective(backend, plan, identity(o.ranks));
  CHECK(r.transfers == plan.transfer_count());
  std::map<net::NodeId, int64_t> bytes_per_leaf;
  std::size_t inter = 0;
  for (const TransferRecord& t : backend.transfers()) {
    const auto& a = spec.gpus[t.request.src_gpu];
    const auto& b = spec.gpus[t.request.dst_gpu];
    if (a.host == b.host) continue;
    ++inter;
    // PXN: sent from the source host's GPU on the receiver's rail, so both NICs hang off one
    // rail leaf and the route is NIC -> leaf -> NIC.
    CHECK(a.local_index == b.local_index);
    CHECK(leaf_of_gpu(t.request.src_gpu) == leaf_of_gpu(t.request.dst_gpu));
    bytes_per_leaf[leaf_of_gpu(t.request.dst_gpu)] += t.request.size.count();
  }
  CHECK(inter > 0);
  // Every rail leaf carries one channel: equal bytes.
  REQUIRE(bytes_per_leaf.size() == g);
  for (const auto& [leaf, bytes] : bytes_per_leaf) CHECK(bytes == bytes_per_leaf.begin()->second);

  // Without PXN each host's last GPU sends through its own NIC, one rail off: through a spine.
  Simulation sim2(1);
  AnalyticBackend own_nic(sim2, spec);
  CollectiveRunOptions no_pxn;
  no_pxn.pxn = false;
  run_collective(own_nic, plan, identity(o.ranks), no_pxn);
  std::size_t crossing = 0;
  for (const TransferRecord& t : own_nic.transfers()) {
    if (spec.gpus[t.request.src_gpu].host == spec.gpus[t.request.dst_gpu].host) continue;
    if (leaf_of_gpu(t.request.src_gpu) != leaf_of_gpu(t.request.dst_gpu)) ++crossing;
  }
  CHECK(crossing == inter);
}

TEST_CASE("rail-aligned rings reach the contention-free time on the flow backend") {
  // One spine with one uplink per rail leaf: every ring hop that crosses rails shares that
  // uplink. Rail-aligned rings with PXN never touch it, so the flow backend (max-min fair
  // sharing) matches the contention-free analytic time; each host's own NIC (no PXN) puts every
  // channel's inter-host hops through the spine, g flows per uplink.
  const uint32_t hosts = 4, g = 4;
  const auto spec = topo::build_fabric(rail_fabric(hosts, g, g, 1));
  PlanOptions o;
  o.ranks = hosts * g;
  o.gpus_per_host = g;
  o.channels = g;
  o.bytes = int64_t{32} << 20;
  const CollectivePlan plan = build_plan(o);
  auto run = [&](Fidelity f, bool pxn) {
    Simulation sim(1);
    auto backend = make_backend(f, sim, spec);
    CollectiveRunOptions ro;
    ro.pxn = pxn;
    return run_collective(*backend, plan, identity(o.ranks), ro).duration().seconds();
  };
  const double ideal = run(Fidelity::Analytic, true);
  const double aligned = run(Fidelity::Flow, true);
  const double crossing = run(Fidelity::Flow, false);
  CHECK(std::abs(aligned - ideal) <= 0.02 * ideal);
  CHECK(crossing > 1.5 * aligned);
}
