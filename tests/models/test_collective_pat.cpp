// PAT (NCCL's Parallel Aggregated Trees) all_gather / reduce_scatter: the plan verified
// symbolically with its step count and per-rank bytes, NCCL's cost rows by hand, and a run against
// the closed form of ceil(log2 n) dependent steps that move (n - 1) / n S per rank.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_cost.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "sim/backends/make_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::identity;

namespace {

PlanOptions pat_options(CollectiveOp op, uint32_t ranks, int64_t bytes, uint32_t channels,
                        int64_t chunk) {
  PlanOptions o =
      collective_fixtures::plan_options(op, CollectiveAlgo::Pat, ranks, bytes, channels);
  o.chunk_bytes = chunk;
  o.gpus_per_host = 1;  // one GPU per node, as NCCL runs PAT
  o.connection_depth = 8;
  return o;
}

}  // namespace

TEST_CASE("pat plan: all_gather and reduce_scatter verify for any rank count") {
  for (CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    for (uint32_t n : {2u, 3u, 5u, 8u, 12u, 33u}) {
      for (int64_t bytes : {int64_t{0}, int64_t{n} * 3, int64_t{1} << 20}) {
        for (uint32_t channels : {1u, 2u}) {
          CAPTURE(static_cast<int>(op));
          CAPTURE(n);
          CAPTURE(bytes);
          CAPTURE(channels);
          const CollectivePlan plan = build_plan(pat_options(op, n, bytes, channels, 64 << 10));
          const PlanCheck check = verify_plan(plan);
          CHECK_MESSAGE(check.ok, check.error);
        }
      }
    }
  }
  CHECK_THROWS_AS(build_plan(pat_options(CollectiveOp::AllReduce, 8, 1 << 20, 1, 0)),
                  std::invalid_argument);
}

TEST_CASE("pat plan: every rank sends and receives (n - 1) / n S in ceil(log2 n) steps") {
  const uint32_t n = 12;  // not a power of two: the last step sends n - 8 = 4 shards
  const int64_t bytes = int64_t{12} << 20;
  for (CollectiveOp op : {CollectiveOp::AllGather, CollectiveOp::ReduceScatter}) {
    const CollectivePlan plan = build_plan(pat_options(op, n, bytes, 1, 0));  // one piece
    std::vector<int64_t> sent(n, 0), received(n, 0);
    std::vector<uint32_t> peers(n, 0);
    for (const PlanStep& s : plan.steps) {
      if (s.kind != PlanStep::Kind::Transfer) continue;
      sent[s.src] += s.bytes;
      received[s.dst] += s.bytes;
    }
    for (uint32_t r = 0; r < n; ++r) {
      CHECK(sent[r] == bytes / n * (n - 1));
      CHECK(received[r] == bytes / n * (n - 1));
    }
    // 4 distances (1, 2, 4, 8), at most two transfers (a wrapped range) per rank and distance.
    CHECK(plan.transfer_count() >= 4 * n);
    CHECK(plan.transfer_count() <= 8 * n);
  }
}

TEST_CASE("pat cost: NCCL's rows by hand, only at one GPU per node, Simple, AG and RS") {
  NcclCostInputs in;
  in.op = CollectiveOp::AllGather;
  in.nodes = 16;
  in.gpus_per_node = 1;
  in.channels = 4;
  in.bw_intra = in.bw_inter = 12.0;
  const int64_t s = int64_t{1} << 30;
  // 8 + log2(16) x 14 / 3.5 + 16 x 2.8 us; bandwidth 4 x 12 x 0.75 (no algbw conversion).
  const double expect = 8.0 + 4 * 4.0 + 16 * 2.8 + static_cast<double>(s) / (1000.0 * 36.0);
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Pat, NcclProtocol::Simple, in, s) ==
        doctest::Approx(expect));
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Pat, NcclProtocol::LL, in, s) < 0);
  in.op = CollectiveOp::ReduceScatter;
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Pat, NcclProtocol::Simple, in, s) > 0);
  in.op = CollectiveOp::AllReduce;
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Pat, NcclProtocol::Simple, in, s) < 0);
  in.op = CollectiveOp::AllGather;
  in.gpus_per_node = 8;  // PAT needs one GPU per node
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Pat, NcclProtocol::Simple, in, s) < 0);
  CHECK(nccl_choose(in, s).algo != CollectiveAlgo::Pat);
  // The chunk: 512 KiB halved while chunk x channels x 32 (RS 16) exceeds the size.
  CHECK(nccl_chunk_bytes(CollectiveAlgo::Pat, NcclProtocol::Simple, 512 << 10, 4 << 20, 1, 16, 16,
                         CollectiveOp::AllGather) == 128 << 10);
  CHECK(nccl_chunk_bytes(CollectiveAlgo::Pat, NcclProtocol::Simple, 512 << 10, 4 << 20, 1, 16, 16,
                         CollectiveOp::ReduceScatter) == 256 << 10);
  CHECK(nccl_chunk_bytes(CollectiveAlgo::Pat, NcclProtocol::Simple, 512 << 10, 1 << 10, 4, 16, 16,
                         CollectiveOp::AllGather) == 64 << 10);
}

TEST_CASE("pat run: log2 n steps of latency, ring bandwidth, on a non-blocking fabric") {
  // 16 single-GPU hosts under one spine at 100G: each of the 4 steps crosses the spine once (a
  // wrapped range's two transfers in flight together), so a small all_gather takes about 4 path
  // latencies where a ring takes 15; a large one about (n - 1) / n S / B on both.
  const uint32_t n = 16;
  const net::NetworkSpec spec = topo::build_fabric(
      collective_fixtures::one_host_per_leaf(n, Bandwidth::gbps(100), Time::us(1)));
  auto time_of = [&](CollectiveAlgo a, int64_t bytes) {
    Simulation sim(1);
    auto backend = make_backend(Fidelity::Flow, sim, spec);
    PlanOptions o = pat_options(CollectiveOp::AllGather, n, bytes, 1, 0);
    o.algo = a;  // NCCL's depth for one-slot Simple transfers: 8 in flight per connection
    CollectiveRunOptions ro;
    ro.hbm_bytes_per_s = 0;
    return run_collective(*backend, build_plan(o), identity(n), ro).duration().seconds();
  };
  const double small_pat = time_of(CollectiveAlgo::Pat, n * 64);
  const double small_ring = time_of(CollectiveAlgo::Ring, n * 64);
  MESSAGE("all_gather 16 x 64 B: pat " << small_pat * 1e6 << " us, ring " << small_ring * 1e6
                                       << " us");
  CHECK(small_ring / small_pat == doctest::Approx(15.0 / 4.0).epsilon(0.1));
  const int64_t large = int64_t{256} << 20;
  const double closed = static_cast<double>(large) * (n - 1) / n / (100e9 / 8 * 4096.0 / 4160.0);
  const double large_pat = time_of(CollectiveAlgo::Pat, large);
  MESSAGE("all_gather 256 MiB: pat " << large_pat * 1e3 << " ms, closed form " << closed * 1e3);
  CHECK(large_pat >= closed * 0.999);
  CHECK(large_pat <= closed * 1.02);
}
