// NCCL's chunks in flight per connection (NCCL_STEPS slots): PlanOptions::connection_depth lets a
// connection run several transfers at once, which hides the link latency behind the bandwidth.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::identity;

namespace {

// One single-GPU host per leaf, one spine, 100G links with 20 us of propagation each: 4 hops of
// 80 us dominate a 256 KiB chunk's 21 us of serialization.
topo::FabricParams far_apart(uint32_t leaves) {
  return collective_fixtures::one_host_per_leaf(leaves, Bandwidth::gbps(100), Time::us(20));
}

bool near(double got, double want, double rel) {
  return std::abs(got - want) <= rel * std::abs(want);
}

// One chunk of `m` bytes (whole MTUs of 4096 B) alone between ranks 0 and 1 of 100G links: alpha +
// beta*m, its serialization at the bottleneck (all links alike) and alpha.
struct ChunkAlone {
  double t_idle = 0;
  double t_wire = 0;
  double alpha = 0;
};
ChunkAlone chunk_alone(const net::NetworkSpec& spec, int64_t m) {
  Simulation probe(1);
  AnalyticBackend single(probe, spec);
  single.start(TransferRequest{0, 1, Bytes{m}, 0});
  probe.queue().run();
  ChunkAlone c;
  const int64_t whole_packets = m / 4096;
  c.t_idle = single.transfers()[0].finish.seconds();
  c.t_wire =
      Bandwidth::gbps(100).tx_time(Bytes{4096 + 64}).seconds() * static_cast<double>(whole_packets);
  c.alpha = c.t_idle - c.t_wire;
  return c;
}

}  // namespace

TEST_CASE("plans with several transfers in flight per connection stay data-flow correct") {
  const std::pair<CollectiveOp, CollectiveAlgo> combos[] = {
      {CollectiveOp::AllReduce, CollectiveAlgo::Ring},
      {CollectiveOp::ReduceScatter, CollectiveAlgo::Ring},
      {CollectiveOp::AllGather, CollectiveAlgo::Ring},
      {CollectiveOp::Broadcast, CollectiveAlgo::Ring},
      {CollectiveOp::Reduce, CollectiveAlgo::Ring},
      {CollectiveOp::AllReduce, CollectiveAlgo::Tree},
      {CollectiveOp::Broadcast, CollectiveAlgo::Tree},
      {CollectiveOp::Reduce, CollectiveAlgo::Tree},
      {CollectiveOp::AllReduce, CollectiveAlgo::HalvingDoubling},
      {CollectiveOp::SendRecv, CollectiveAlgo::Pairwise},
  };
  for (const auto& [op, algo] : combos) {
    for (uint32_t n = 2; n <= 17; ++n) {
      for (uint32_t depth : {2u, 8u}) {
        PlanOptions o;
        o.op = op;
        o.algo = algo;
        o.ranks = n;
        o.bytes = 40'000 + n;
        o.chunk_bytes = 500;  // many pieces: every connection carries more than `depth` transfers
        o.connection_depth = depth;
        o.root = n / 2;
        o.peer = n - 1 == o.root ? 0 : n - 1;
        // Copies: lambdas (CAPTURE) cannot name structured bindings in clang 14.
        const std::string op_name(to_string(op));
        const std::string algo_name(to_string(algo));
        CAPTURE(op_name);
        CAPTURE(algo_name);
        CAPTURE(n);
        CAPTURE(depth);
        const PlanCheck check = verify_plan(build_plan(o));
        CHECK_MESSAGE(check.ok, check.error);
      }
    }
  }
  // Multi-host rail-aligned rings and hierarchical plans too.
  for (CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Hierarchical}) {
    PlanOptions o;
    o.algo = algo;
    o.ranks = 12;
    o.gpus_per_host = 4;
    o.channels = 2;
    o.bytes = 50'000;
    o.chunk_bytes = 400;
    o.connection_depth = 8;
    const PlanCheck check = verify_plan(build_plan(o));
    CHECK_MESSAGE(check.ok, check.error);
  }
}

TEST_CASE(
    "chunks in flight per connection: 1 vs 8 slots on a high-latency ring as alpha-beta predicts") {
  const uint32_t n = 4;
  const int64_t m = int64_t{256} << 10;  // chunk: 64 MTUs, no packet rounding
  const int64_t pieces = 8;              // per ring segment
  const auto spec = topo::build_fabric(far_apart(n));
  const auto [t_idle, t_wire, alpha] = chunk_alone(spec, m);
  CHECK(alpha > 7 * t_wire / 2);  // latency-dominated chunk
  CHECK(alpha < 7 * t_wire);      // but 8 in flight cover it: bandwidth-bound with 8 slots

  PlanOptions o;
  o.ranks = n;
  o.bytes = int64_t{n} * pieces * m;
  o.chunk_bytes = m;
  CollectiveRunOptions ro;
  ro.hbm_bytes_per_s = 0;  // free reductions: the network alone
  auto run = [&](Fidelity f, uint32_t depth) {
    o.connection_depth = depth;
    const CollectivePlan plan = build_plan(o);
    Simulation sim(1);
    auto backend = make_backend(f, sim, spec);
    return run_collective(*backend, plan, identity(n), ro).duration().seconds();
  };
  // Every connection carries 2(n-1) * pieces chunks. One at a time: each pays alpha + beta*m.
  // Eight at a time (alpha < 7 beta*m): the connection streams, paying alpha once.
  const double per_connection = 2.0 * (n - 1) * pieces;
  const double one_expected = per_connection * t_idle;
  const double eight_expected = alpha + per_connection * t_wire;
  const double one = run(Fidelity::Analytic, 1);
  const double eight = run(Fidelity::Analytic, 8);
  MESSAGE("ring all_reduce 4 x 8 MiB, 80 us links: 1 slot ", one * 1e3, " ms (alpha-beta ",
          one_expected * 1e3, "), 8 slots ", eight * 1e3, " ms (", eight_expected * 1e3, ")");
  CHECK(near(one, one_expected, 1e-6));
  CHECK(near(eight, eight_expected, 1e-6));
  CHECK(one > 4 * eight);
  // The flow backend (max-min sharing) agrees: the runner paces a connection's transfers out of
  // the sender in order, so they do not share the link as parallel flows would.
  const double one_f = run(Fidelity::Flow, 1);
  const double eight_f = run(Fidelity::Flow, 8);
  MESSAGE("flow: 1 slot ", one_f * 1e3, " ms, 8 slots ", eight_f * 1e3, " ms");
  CHECK(near(one_f, one_expected, 0.02));
  CHECK(near(eight_f, eight_expected, 0.05));
}

TEST_CASE("chunks in flight at packet level: a freed slot's notice crosses the path back") {
  // At packet level a freed slot is known at the sender once the receiver's notice has crossed
  // the 4 links back (host, leaf-spine, spine-leaf, host; 20 us each): a slot's round trip is
  // alpha + beta*m + notice. Chunks of 512 KiB, so that 8 slots cover the round trip.
  const uint32_t n = 4;
  const int64_t m = int64_t{512} << 10;  // 128 MTUs
  const int64_t pieces = 8;
  const auto spec = topo::build_fabric(far_apart(n));
  const auto [t_idle, t_wire, alpha] = chunk_alone(spec, m);
  const double notice = 4 * 20e-6;
  CHECK(alpha + notice > 3 * t_wire);  // one slot: the round trip's latency dominates
  CHECK(alpha + notice < 7 * t_wire);  // 8 slots cover it: bandwidth-bound
  PlanOptions o;
  o.ranks = n;
  o.bytes = int64_t{n} * pieces * m;
  o.chunk_bytes = m;
  CollectiveRunOptions ro;
  ro.hbm_bytes_per_s = 0;
  auto run = [&](uint32_t depth) {
    o.connection_depth = depth;
    const CollectivePlan plan = build_plan(o);
    Simulation sim(1);
    PacketBackend backend(sim, spec);
    return run_collective(backend, plan, identity(n), ro).duration().seconds();
  };
  // One slot: every chunk pays alpha + beta*m, all but the last the notice too. Eight: streaming.
  const double per_connection = 2.0 * (n - 1) * pieces;
  const double one_expected = per_connection * t_idle + (per_connection - 1) * notice;
  const double eight_expected = alpha + per_connection * t_wire;
  const double one = run(1);
  const double eight = run(8);
  MESSAGE("packet, ring all_reduce 4 x 16 MiB, 80 us paths: 1 slot ", one * 1e3,
          " ms (alpha-beta-notice ", one_expected * 1e3, "), 8 slots ", eight * 1e3, " ms (",
          eight_expected * 1e3, ")");
  CHECK(near(one, one_expected, 0.02));
  CHECK(near(eight, eight_expected, 0.05));
}
