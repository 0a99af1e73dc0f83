// The collective runner on the analytic and packet backends against the alpha-beta closed forms
// (references §8).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/flow_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::identity;

namespace {

// n leaves with one single-GPU host each and one spine: every pair of ranks is 4 hops apart over
// identical links, and a ring (or a tree) never puts two flows on one link (non-blocking).
topo::FabricParams one_host_per_leaf(uint32_t leaves, int64_t gbps = 100) {
  return collective_fixtures::one_host_per_leaf(leaves, Bandwidth::gbps(gbps), Time::us(1));
}

// One transfer of `size` bytes between two GPUs on an idle analytic backend.
Time single_transfer(const net::NetworkSpec& spec, uint32_t a, uint32_t b, int64_t size) {
  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  backend.start(TransferRequest{a, b, Bytes{size}, 0});
  sim.queue().run();
  return backend.transfers()[0].finish;
}

// alpha (s) and 1/B (s/byte) of the path a->b, from two transfers whose sizes are whole MTUs, so
// T(x) = alpha + x * beta holds exactly for any x that is a whole number of MTUs.
struct AlphaBeta {
  double alpha = 0;
  double beta = 0;
  double time(double bytes) const { return alpha + bytes * beta; }
};
AlphaBeta alpha_beta(const net::NetworkSpec& spec, uint32_t a, uint32_t b) {
  const int64_t x1 = 4096 * 16, x2 = 4096 * 1024;
  const double t1 = single_transfer(spec, a, b, x1).seconds();
  const double t2 = single_transfer(spec, a, b, x2).seconds();
  AlphaBeta ab;
  ab.beta = (t2 - t1) / static_cast<double>(x2 - x1);
  ab.alpha = t1 - static_cast<double>(x1) * ab.beta;
  return ab;
}

Time run_on(TransferBackend& backend, const PlanOptions& o, const CollectiveRunOptions& ro = {}) {
  const CollectivePlan plan = build_plan(o);
  return run_collective(backend, plan, identity(o.ranks), ro).duration();
}

// A ring all_reduce plan of `ranks` ranks, `bytes` and `channels` (the queue-pair tests').
CollectivePlan ring_allreduce(uint32_t ranks, int64_t bytes, uint32_t channels) {
  PlanOptions o;
  o.op = CollectiveOp::AllReduce;
  o.algo = CollectiveAlgo::Ring;
  o.ranks = ranks;
  o.bytes = bytes;
  o.channels = channels;
  return build_plan(o);
}

}  // namespace

TEST_CASE("collective ring on the analytic backend equals the alpha-beta closed form") {
  const uint32_t n = 8;
  const auto spec = topo::build_fabric(one_host_per_leaf(n));
  const AlphaBeta ab = alpha_beta(spec, 0, 1);
  CHECK(ab.alpha > 0);
  // S = n * 4096 * 64: every per-step message is a whole number of MTUs, so the closed form has no
  // packet rounding; the only error is picosecond rounding per step (tolerance 1 ns in total).
  const int64_t S = int64_t{n} * 4096 * 64;
  CollectiveRunOptions ro;  // H100 HBM: reductions cost 3 * bytes / 3.35 TB/s each
  const double red = reduction_time(S / n, ro).seconds();
  const double dn = n;

  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  PlanOptions o;
  o.ranks = n;
  o.bytes = S;
  const double ar = run_on(backend, o, ro).seconds();
  // 2(n-1) alpha + 2(n-1)/n S beta + (n-1) reductions of S/n on the critical path.
  const double ar_expected =
      2 * (dn - 1) * ab.alpha + 2 * (dn - 1) / dn * S * ab.beta + (dn - 1) * red;
  CHECK(std::abs(ar - ar_expected) < 1e-9);

  for (CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    Simulation s2(1);
    AnalyticBackend b2(s2, spec);
    o.op = op;
    const double t = run_on(b2, o, ro).seconds();
    const double expected = (dn - 1) * ab.alpha + (dn - 1) / dn * S * ab.beta +
                            (op == CollectiveOp::ReduceScatter ? (dn - 1) * red : 0.0);
    CAPTURE(std::string(to_string(op)));
    CHECK(std::abs(t - expected) < 1e-9);
  }
}

TEST_CASE("collective runner: per-step latency adds once per ring step") {
  const uint32_t n = 4;
  const auto spec = topo::build_fabric(one_host_per_leaf(n));
  PlanOptions o;
  o.ranks = n;
  o.bytes = 4 * 4096 * 8;
  CollectiveRunOptions ro;
  ro.hbm_bytes_per_s = 0;
  Simulation s1(1), s2(1);
  AnalyticBackend b1(s1, spec), b2(s2, spec);
  const Time base = run_on(b1, o, ro);
  ro.step_latency = Time::us(5);
  const Time slow = run_on(b2, o, ro);
  CHECK(slow - base == Time::us(5) * (2 * (n - 1)));
}

// About 0.1 s (8 x 64 MiB at 100G is ~1M packet hops), so not in the "slow" suite.
TEST_CASE("collective ring all_reduce on the packet backend is within 3% of the closed form") {
  const uint32_t n = 8;
  const auto spec = topo::build_fabric(one_host_per_leaf(n));
  const AlphaBeta ab = alpha_beta(spec, 0, 1);
  const int64_t S = int64_t{64} << 20;  // 64 MiB
  CollectiveRunOptions ro;
  const double dn = n;
  const double expected = 2 * (dn - 1) * ab.alpha + 2 * (dn - 1) / dn * S * ab.beta +
                          (dn - 1) * reduction_time(S / n, ro).seconds();
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  PlanOptions o;
  o.ranks = n;
  o.bytes = S;
  const double t = run_on(backend, o, ro).seconds();
  MESSAGE("packet ring all_reduce 8 x 64 MiB @100G: ", t * 1e3, " ms, closed form ", expected * 1e3,
          " ms");
  CHECK(t == doctest::Approx(expected).epsilon(0.03).scale(0));
}

TEST_CASE("collective double binary tree: small-message latency grows like log2(n)") {
  // Tiny messages on one channel (the whole 8 B on one tree): each tree edge costs one hop time;
  // NCCL's binary tree (a root with one child, ncclGetBtree) is 1 + floor(log2(n-1)) edges tall,
  // crossed up and then down.
  std::vector<double> per_hop;
  for (uint32_t n : {4u, 8u, 16u, 32u}) {
    const auto spec = topo::build_fabric(one_host_per_leaf(n));
    const double hop = single_transfer(spec, 0, 1, 8).seconds();
    Simulation sim(1);
    AnalyticBackend backend(sim, spec);
    PlanOptions o;
    o.ranks = n;
    o.bytes = 8;
    o.algo = CollectiveAlgo::Tree;
    CollectiveRunOptions ro;
    ro.hbm_bytes_per_s = 0;
    const double t = run_on(backend, o, ro).seconds();
    const double height = 1 + std::floor(std::log2(n - 1));
    CAPTURE(n);
    CHECK(t / (2 * hop) == doctest::Approx(height).epsilon(1e-9));
    per_hop.push_back(t / hop);
  }
  // Doubling n adds one level (two hops: up and down), not a factor of two.
  for (std::size_t i = 1; i < per_hop.size(); ++i)
    CHECK(per_hop[i] - per_hop[i - 1] == doctest::Approx(2.0));
}

TEST_CASE("collective hierarchical all_reduce beats a flat ring by the predicted ratio") {
  // 4 hosts x 4 GPUs x 4 NICs (100G), NVLink 3600G; analytic backend, free reductions.
  const uint32_t hosts = 4, g = 4, n = hosts * g;
  topo::FabricParams p = one_host_per_leaf(hosts);
  p.host.gpus = g;
  p.host.nics = g;
  p.spine_leaf.spines = g;  // leaf uplinks = host downlinks: non-blocking
  const auto spec = topo::build_fabric(p);
  const AlphaBeta inter = alpha_beta(spec, 0, g);  // GPU 0 of host 0 -> GPU 0 of host 1 (rail 0)
  const AlphaBeta intra = alpha_beta(spec, 0, 1);  // NVLink
  CHECK(intra.beta * 10 < inter.beta);
  const double S = 64.0 * 4096 * 64;
  const double dn = n, dg = g, dh = hosts;
  CollectiveRunOptions ro;
  ro.hbm_bytes_per_s = 0;
  PlanOptions o;
  o.ranks = n;
  o.bytes = static_cast<int64_t>(S);
  Simulation s1(1), s2(1);
  AnalyticBackend b1(s1, spec), b2(s2, spec);
  const double ring = run_on(b1, o, ro).seconds();
  o.algo = CollectiveAlgo::Hierarchical;
  o.gpus_per_host = g;
  const double hier = run_on(b2, o, ro).seconds();
  // Flat ring: every step waits for its slowest (inter-node) hop.
  const double ring_pred = 2 * (dn - 1) * inter.time(S / dn);
  const double hier_pred =
      2 * (dg - 1) * intra.time(S / dg) + 2 * (dh - 1) * inter.time(S / (dg * dh));
  MESSAGE("ring ", ring * 1e6, " us (pred ", ring_pred * 1e6, "), hierarchical ", hier * 1e6,
          " us (pred ", hier_pred * 1e6, ")");
  CHECK(hier < ring);
  CHECK(ring / hier == doctest::Approx(ring_pred / hier_pred).epsilon(0.10));
}

TEST_CASE("collective plans agree on the analytic and packet backends on an uncongested fabric") {
  // One flow per link at a time in each of these plans (rings, halving-doubling pairs, pairwise
  // exchange, a pipelined chain), so the packet backend must match the contention-free analytic
  // one. Tolerance 1%: packets of consecutive transfers on one connection do not overlap in either.
  struct Case {
    CollectiveOp op;
    CollectiveAlgo algo;
    uint32_t ranks;
    int64_t chunk;
  };
  const Case cases[] = {
      {CollectiveOp::AllReduce, CollectiveAlgo::Ring, 8, 0},
      {CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, 8, 0},
      {CollectiveOp::AllGather, CollectiveAlgo::Ring, 8, 0},
      {CollectiveOp::AllReduce, CollectiveAlgo::HalvingDoubling, 8, 0},
      {CollectiveOp::AllReduce, CollectiveAlgo::HalvingDoubling, 6, 0},
      {CollectiveOp::AllToAll, CollectiveAlgo::Pairwise, 8, 0},
      {CollectiveOp::Broadcast, CollectiveAlgo::Ring, 8, 1 << 20},
  };
  for (const Case& c : cases) {
    const auto spec = topo::build_fabric(one_host_per_leaf(c.ranks));
    PlanOptions o;
    o.op = c.op;
    o.algo = c.algo;
    o.ranks = c.ranks;
    o.bytes = 16 << 20;
    o.chunk_bytes = c.chunk;
    // Two slots per connection (NCCL keeps 4 to 8): at packet level a freed slot is reused once
    // the receiver's notice is back, which a second slot hides; with one, every step would pay it.
    o.connection_depth = 2;
    Simulation s1(1), s2(1);
    AnalyticBackend analytic(s1, spec);
    PacketBackend packet(s2, spec);
    const double ta = run_on(analytic, o).seconds();
    const double tp = run_on(packet, o).seconds();
    CAPTURE(std::string(to_string(c.op)));
    CAPTURE(std::string(to_string(c.algo)));
    CAPTURE(c.ranks);
    CHECK(tp == doctest::Approx(ta).epsilon(0.01).scale(0));
  }
}

TEST_CASE("collective runner: an empty plan and zero-byte transfers complete") {
  const auto spec = topo::build_fabric(one_host_per_leaf(4));
  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  PlanOptions o;
  o.ranks = 4;
  o.bytes = 0;
  const CollectivePlan plan = build_plan(o);
  const auto r = run_collective(backend, plan, identity(4));
  CHECK(r.transfers == plan.transfer_count());
  CHECK(r.duration() == Time::zero());
  CollectivePlan empty;
  empty.ranks = 2;
  Simulation sim2(1);
  AnalyticBackend b2(sim2, spec);
  CHECK(run_collective(b2, empty, identity(2)).duration() == Time::zero());
  CHECK_THROWS_AS(CollectiveRunner(b2, plan, {0, 1}), std::invalid_argument);
}

// all_to_all on a 2:1 oversubscribed spine-leaf vs the same fabric non-blocking. Two single-GPU
// hosts per leaf and ONE spine, so there is no ECMP choice and no hash collision can slow the
// non-blocking case (with several spines, per-flow ECMP puts two flows on one uplink now and then,
// which made an earlier 2-spine comparison come out at 1.22x instead of 2x). Non-blocking: leaf
// uplinks of 200G for two 100G hosts; 2:1: uplinks of 100G. In pairwise step k rank s sends to
// s + k, so both hosts of a leaf send off-leaf in all but one step each: they share the uplink and
// every block takes twice as long. The exceptions (k = 1 for even s, k = n - 1 for odd s: the
// leaf mate) and the latency terms, which do not double, leave the ratio a little under 2:
// about (2(n - 3) + 2) / (n - 1) = 1.94 for n = 32. Tolerance: the issue's +-10% around 2.
TEST_CASE("collective all_to_all on a 2:1 oversubscribed fabric takes about twice as long") {
  const uint32_t leaves = 16, n = 2 * leaves;
  auto fabric = [&](int64_t uplink_gbps) {
    topo::FabricParams p = one_host_per_leaf(leaves);
    p.spine_leaf.hosts_per_leaf = 2;
    p.links.fabric.bandwidth = Bandwidth::gbps(uplink_gbps);
    return topo::build_fabric(p);
  };
  const auto full = fabric(200), half = fabric(100);
  PlanOptions o;
  o.op = CollectiveOp::AllToAll;
  o.algo = CollectiveAlgo::Pairwise;
  o.ranks = n;
  o.bytes = int64_t{n} << 20;  // 1 MiB blocks
  SUBCASE("packet backend") {
    Simulation s1(1), s2(1);
    PacketBackend b1(s1, full), b2(s2, half);
    const double t_full = run_on(b1, o).seconds(), t_half = run_on(b2, o).seconds();
    MESSAGE("packet all_to_all 32 x 32 MiB: non-blocking ", t_full * 1e3, " ms, 2:1 ", t_half * 1e3,
            " ms, ratio ", t_half / t_full);
    CHECK(t_half / t_full > 1.8);
    CHECK(t_half / t_full < 2.2);
  }
  SUBCASE("flow backend") {
    Simulation s1(1), s2(1);
    FlowBackend b1(s1, full), b2(s2, half);
    const double t_full = run_on(b1, o).seconds(), t_half = run_on(b2, o).seconds();
    MESSAGE("flow all_to_all 32 x 32 MiB: ratio ", t_half / t_full);
    CHECK(t_half / t_full > 1.8);
    CHECK(t_half / t_full < 2.2);
  }
}

TEST_CASE("collective runner: transfers name their connection's queue pairs (channel x QP)") {
  const auto spec = topo::build_fabric(one_host_per_leaf(4));
  const CollectivePlan plan = ring_allreduce(4, 8 << 20, 2);
  for (const uint32_t qps : {0u, 1u, 3u}) {
    CAPTURE(qps);
    Simulation sim(1);
    AnalyticBackend backend(sim, spec);
    CollectiveRunOptions ro;
    ro.qps_per_connection = qps;
    run_collective(backend, plan, identity(4), ro);
    // Per (channel, src, dst): the QP tags its transfers used, in order.
    std::vector<std::vector<uint32_t>> seen(2 * 4 * 4);
    std::size_t transfers = 0;
    for (const PlanStep& s : plan.steps) {
      if (s.kind != PlanStep::Kind::Transfer) continue;
      ++transfers;
    }
    REQUIRE(backend.transfers().size() == transfers);
    // Transfers start in plan order per connection; record the tags by connection.
    for (const TransferRecord& r : backend.transfers()) {
      const uint32_t tag = r.request.connection;
      if (qps == 0) {
        CHECK(tag == kNoConnection);
        continue;
      }
      const uint32_t channel = tag / qps;
      REQUIRE(channel < 2);
      seen[(channel * 4 + r.request.src_gpu) * 4 + r.request.dst_gpu].push_back(tag % qps);
    }
    if (qps == 0) continue;
    std::size_t connections = 0;
    for (const auto& tags : seen) {
      if (tags.empty()) continue;
      ++connections;
      // Round robin over the connection's QPs: 0, 1, 2, 0, ...
      for (std::size_t i = 0; i < tags.size(); ++i) CHECK(tags[i] == i % qps);
    }
    CHECK(connections == 2 * 4);  // 2 channels x 4 ring edges
  }
  CollectiveRunOptions bad;
  bad.qps_per_connection = 257;
  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  CHECK_THROWS_AS(run_collective(backend, plan, identity(4), bad), std::invalid_argument);
}

TEST_CASE("collective runner: communicators own their queue pairs; one communicator reuses its") {
  // A 4-rank ring of 2 channels on 4 single-GPU hosts: 4 ring edges x 2 channels = 8 connections
  // between NICs. Collectives on one communicator reuse them (NCCL's connections live as long as
  // the communicator); a second communicator over the same GPUs opens its own.
  const auto spec = topo::build_fabric(one_host_per_leaf(4));
  const CollectivePlan plan = ring_allreduce(4, 1 << 20, 2);
  Simulation sim(1);
  FlowBackend backend(sim, spec);
  CollectiveRunOptions first;
  run_collective(backend, plan, identity(4), first);
  CHECK(backend.persistent_queue_pairs() == 8);
  run_collective(backend, plan, identity(4), first);
  CHECK(backend.persistent_queue_pairs() == 8);
  CollectiveRunOptions second;
  second.communicator = 1;
  run_collective(backend, plan, identity(4), second);
  CHECK(backend.persistent_queue_pairs() == 16);
  CollectiveRunOptions bad;
  bad.communicator = 1U << 16;
  CHECK_THROWS_AS(CollectiveRunner(backend, plan, identity(4), bad), std::invalid_argument);
}

TEST_CASE("collective runner: a communicator's queue pairs open in plan order before it sends") {
  // NCCL connects every channel to its peers when the communicator is set up. The runner opens
  // each connection's queue pairs at start(), in the plan's order, so their numbers (which feed the
  // ECMP hash) are the same whichever transfer goes first at run time: a 4-rank ring of 2 channels
  // opens its 8 connections (x QPs) before a single transfer has begun, numbered by the plan.
  const auto spec = topo::build_fabric(one_host_per_leaf(4));
  const CollectivePlan plan = ring_allreduce(4, 1 << 20, 2);
  for (const uint32_t qps : {1u, 2u}) {
    CAPTURE(qps);
    Simulation sim(1);
    FlowBackend backend(sim, spec);
    CollectiveRunOptions ro;
    ro.qps_per_connection = qps;
    ro.launch_latency = Time::us(5);  // nothing begins inside start()
    CollectiveRunner runner(backend, plan, identity(4), ro);
    runner.start();
    CHECK(backend.transfers().empty());
    CHECK(backend.persistent_queue_pairs() == 8 * qps);
    sim.queue().run();
    CHECK(runner.done());
    CHECK(backend.persistent_queue_pairs() == 8 * qps);  // the run opened none of its own
  }
  // Without persistent queue pairs (a QP per transfer) nothing is opened ahead.
  Simulation sim(1);
  FlowBackend backend(sim, spec);
  CollectiveRunOptions fresh;
  fresh.qps_per_connection = 0;
  CollectiveRunner runner(backend, plan, identity(4), fresh);
  runner.start();
  CHECK(backend.persistent_queue_pairs() == 0);
}
