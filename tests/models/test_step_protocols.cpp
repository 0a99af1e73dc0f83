// A training step's collectives take the protocol NCCL's cost model picks for each (StepProtocols),
// checked against NCCL's predicted times computed by hand from tuning.cc's tables.
#include <doctest/doctest.h>

#include <cstdint>

#include "models/collective_cost.hpp"
#include "models/nccl_setup.hpp"
#include "models/step_protocols.hpp"
#include "models/step_sim.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

// 16 ranks on 2 hosts of 8 H100: NCCL's ring graph of 8 channels at 48 GB/s each (16 run).
NcclChannels two_hosts() {
  NcclChannels graph;
  graph.search_channels = 8;
  graph.search_bw_GBps = 48.0;
  graph.channels = graph.default_channels = 16;
  return graph;
}

StepConfig step_on_two_hosts(const CollectiveConfig& config) {
  StepConfig step;
  step.algorithm = CollectiveAlgo::Ring;
  step.gpus_per_host = 8;
  apply_nccl_step_setup(step, config, two_hosts());
  return step;
}

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;

// tuning.cc's ring all_reduce times on that graph (Hopper, Intel host, 2 nodes, nRanks 16,
// nsteps 2 x 15 = 30 of which 2 cross the network; net overhead 1 us, 3 us for Simple):
//   LL:     bw min(llMaxBw 39, 0.5 x 8 x 48) = 39 GB/s, algbw 39 x 16 / 30 = 20.8;
//           latency 6.6 + 28 x max(0.6, 1) + 2 x 2.7 = 40.0 us
//   LL128:  bw min(0.92 x 384, 8 x 36.7) = 293.6, algbw 156.59;
//           latency 14.0 + 28 x max(1.9, 1) + 2 x 4.0 = 75.2 us
//   Simple: bw 384, algbw 204.8; latency (8.4 + 28 x max(3.4, 3) + 2 x 14) x 1.4 = 184.24 us
// (t = latency + bytes / (1000 algbw)): LL up to ~0.84 MB, LL128 up to ~72.5 MB, Simple above.
double hand_time_us(NcclProtocol p, int64_t bytes) {
  const auto b = static_cast<double>(bytes);
  switch (p) {
    case NcclProtocol::LL:
      return 40.0 + b / (1000.0 * 39.0 * 16.0 / 30.0);
    case NcclProtocol::LL128:
      return 75.2 + b / (1000.0 * 293.6 * 16.0 / 30.0);
    case NcclProtocol::Simple:
      return 184.24 + b / (1000.0 * 384.0 * 16.0 / 30.0);
  }
  return 0;
}

}  // namespace

TEST_CASE("step protocols: NCCL's choice per all_reduce size, as its cost model predicts") {
  const StepConfig step = step_on_two_hosts({});
  const NcclCostInputs cost = nccl_cost_inputs(CollectiveOp::AllReduce, 16, 8, two_hosts());
  struct Row {
    int64_t bytes;
    NcclProtocol expected;
  };
  for (const Row& row :
       {Row{64 * kKiB, NcclProtocol::LL}, Row{4 * kMiB, NcclProtocol::LL128},
        Row{25 * kMiB, NcclProtocol::LL128}, Row{256 * kMiB, NcclProtocol::Simple}}) {
    CAPTURE(row.bytes);
    // The hand-computed table agrees with the cost model...
    for (const NcclProtocol p : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
      CHECK(nccl_predicted_time_us(CollectiveAlgo::Ring, p, cost, row.bytes) ==
            doctest::Approx(hand_time_us(p, row.bytes)).epsilon(1e-9));
    }
    // ...and the step takes its fastest protocol.
    CHECK(nccl_best_protocol(CollectiveAlgo::Ring, cost, row.bytes) == row.expected);
    CHECK(step_protocol(step, CollectiveOp::AllReduce, CollectiveAlgo::Ring, 16, row.bytes) ==
          row.expected);
  }
  // All-to-all and send/recv (pairwise), and algorithms NCCL runs with Simple only.
  CHECK(step_protocol(step, CollectiveOp::AllToAll, CollectiveAlgo::Pairwise, 16, 64 * kKiB) ==
        NcclProtocol::Simple);
  CHECK(step_protocol(step, CollectiveOp::AllReduce, CollectiveAlgo::CollnetDirect, 16,
                      64 * kKiB) == NcclProtocol::Simple);
}

TEST_CASE("step protocols: a pinned collective.protocol holds for every size") {
  CollectiveConfig config;
  config.protocol = NcclProtocol::LL;
  const StepConfig pinned = step_on_two_hosts(config);
  CHECK(step_protocol(pinned, CollectiveOp::AllReduce, CollectiveAlgo::Ring, 16, 256 * kMiB) ==
        NcclProtocol::LL);
  // Except where NCCL has no LL (CollNet runs Simple).
  CHECK(step_protocol(pinned, CollectiveOp::AllReduce, CollectiveAlgo::CollnetChain, 16,
                      256 * kMiB) == NcclProtocol::Simple);
  config.protocol = NcclProtocol::Simple;
  const StepConfig simple = step_on_two_hosts(config);
  CHECK(step_protocol(simple, CollectiveOp::AllReduce, CollectiveAlgo::Ring, 16, 64 * kKiB) ==
        NcclProtocol::Simple);
  // A step set up by hand (no apply_nccl_step_setup) keeps Simple.
  CHECK(step_protocol(StepConfig{}, CollectiveOp::AllReduce, CollectiveAlgo::Ring, 16, 64 * kKiB) ==
        NcclProtocol::Simple);
}

TEST_CASE("step protocols: each protocol's chunk, depth and run options, Simple the step's own") {
  const StepConfig step = step_on_two_hosts({});
  auto options = [](int64_t bytes) {
    PlanOptions o;
    o.op = CollectiveOp::AllReduce;
    o.algo = CollectiveAlgo::Ring;
    o.ranks = 16;
    o.bytes = bytes;
    o.channels = 16;
    o.gpus_per_host = 8;
    return o;
  };
  // LL: 512 KiB buffer of 8-byte lines half data, 8 slots: 32 KiB of payload per transfer, 8 in
  // flight; every wire byte doubled, LL's latencies.
  PlanOptions ll = options(64 * kKiB);
  const CollectiveRunOptions ll_run = shape_step_collective(step, NcclProtocol::LL, ll);
  const ProtocolTiming ll_timing = protocol_timing(CollectiveAlgo::Ring, NcclProtocol::LL, {});
  CHECK(ll.chunk_bytes == 32 * kKiB);
  CHECK(ll.connection_depth == 8);
  CHECK(ll.min_pieces == 1);
  CHECK(ll_run.wire_factor == 2.0);
  CHECK(ll_run.launch_latency == Time::from_seconds(ll_timing.launch_us * 1e-6));
  CHECK(ll_run.step_latency == Time::from_seconds(ll_timing.step_intra_us * 1e-6));
  CHECK(ll_run.net_step_latency == Time::from_seconds(ll_timing.step_inter_us * 1e-6));
  // What `syncsim collective` plans for the same collective (nccl_setup).
  NcclCollective c;
  c.protocol = NcclProtocol::LL128;
  c.ranks = 16;
  c.bytes = 25 * kMiB;
  c.channels = 16;
  c.gpus_per_host = 8;
  const NcclSetup setup = nccl_setup(c, {});
  PlanOptions ll128 = options(25 * kMiB);
  const CollectiveRunOptions ll128_run = shape_step_collective(step, NcclProtocol::LL128, ll128);
  CHECK(ll128.chunk_bytes == setup.plan.chunk_bytes);
  CHECK(ll128.connection_depth == setup.plan.connection_depth);
  CHECK(ll128.min_pieces == setup.plan.min_pieces);
  CHECK(ll128_run.wire_factor == setup.run.wire_factor);
  CHECK(ll128_run.launch_latency == setup.run.launch_latency);
  CHECK(ll128_run.step_latency == setup.run.step_latency);
  CHECK(ll128_run.net_step_latency == setup.run.net_step_latency);
  // Simple: the step's own fields, as before protocols were chosen.
  PlanOptions simple = options(256 * kMiB);
  const CollectiveRunOptions simple_run = shape_step_collective(step, NcclProtocol::Simple, simple);
  CHECK(simple.chunk_bytes == step.chunk_bytes);
  CHECK(simple.chunk_bytes == 1 * kMiB);
  CHECK(simple.min_pieces == step.ring_min_pieces);
  CHECK(simple.connection_depth == step.connection_depth);
  CHECK(simple_run.launch_latency == step.collective.launch_latency);
  CHECK(simple_run.wire_factor == 1.0);
}
