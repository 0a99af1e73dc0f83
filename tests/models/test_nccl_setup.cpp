// NCCL set-up of a simulated collective (models/nccl_setup.hpp): the plan and run options follow
// the protocol's timing (collective_cost.hpp), and the three callers see the same translation.
#include <doctest/doctest.h>

#include <cstdint>

#include "models/nccl_setup.hpp"

using namespace syncsim;
using namespace syncsim::models;

TEST_CASE("nccl_setup: chunk, connection depth and run options come from the protocol timing") {
  const CollectiveConfig config;  // NCCL's defaults
  for (NcclProtocol proto : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
    for (CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Tree}) {
      CAPTURE(to_string(proto));
      CAPTURE(to_string(algo));
      NcclCollective c;
      c.algo = algo;
      c.protocol = proto;
      c.ranks = 64;
      c.bytes = int64_t{1} << 30;
      c.channels = 2;
      c.gpus_per_host = 8;
      c.nics_per_host = 4;
      c.root = 3;
      const NcclSetup s = nccl_setup(c, config);
      const ProtocolTiming t = protocol_timing(algo, proto, config);
      CHECK(s.timing.chunk_bytes == t.chunk_bytes);
      CHECK(s.plan.chunk_bytes ==
            nccl_chunk_bytes(algo, proto, t.chunk_bytes, c.bytes, c.channels, 8, c.ranks));
      CHECK(s.plan.connection_depth == t.pipeline_depth);
      CHECK(s.plan.op == c.op);
      CHECK(s.plan.algo == algo);
      CHECK(s.plan.ranks == 64);
      CHECK(s.plan.bytes == c.bytes);
      CHECK(s.plan.channels == 2);
      CHECK(s.plan.root == 3);
      CHECK(s.plan.peer == 4);
      CHECK(s.plan.gpus_per_host == 8);
      CHECK(s.plan.nics_per_host == 4);
      CHECK(s.run.wire_factor == t.wire_factor);
      CHECK(s.run.launch_latency == Time::from_seconds(t.launch_us * 1e-6));
      CHECK(s.run.step_latency == Time::from_seconds(t.step_intra_us * 1e-6));
      REQUIRE(s.run.net_step_latency.has_value());
      CHECK(*s.run.net_step_latency == Time::from_seconds(t.step_inter_us * 1e-6));
    }
  }
}

TEST_CASE("nccl_setup: tree LL128 halves the chunk on deep trees; an explicit chunk wins") {
  NcclCollective c;
  c.algo = CollectiveAlgo::Tree;
  c.protocol = NcclProtocol::LL128;
  c.ranks = 64;  // 64 single-GPU hosts: 12 levels
  c.bytes = int64_t{2} << 20;
  c.gpus_per_host = 1;
  const CollectiveConfig config;
  const NcclSetup s = nccl_setup(c, config);
  CHECK(s.plan.chunk_bytes < s.timing.chunk_bytes);
  c.chunk_bytes = 0;
  CHECK(nccl_setup(c, config).plan.chunk_bytes == 0);
}

TEST_CASE("apply_protocol_timing keeps a fixed step latency and the caller's other options") {
  CollectiveRunOptions base;
  base.step_latency = Time::us(3);
  base.hbm_bytes_per_s = 1e12;
  base.priority = 3;
  base.pxn = false;
  const ProtocolTiming t = protocol_timing(CollectiveAlgo::Ring, NcclProtocol::LL, {});
  const CollectiveRunOptions run = apply_protocol_timing(base, t);
  CHECK(run.step_latency == Time::us(3));
  CHECK_FALSE(run.net_step_latency.has_value());
  CHECK(run.wire_factor == 2.0);
  CHECK(run.launch_latency == Time::from_seconds(t.launch_us * 1e-6));
  CHECK(run.hbm_bytes_per_s == 1e12);
  CHECK(run.priority == 3);
  CHECK_FALSE(run.pxn);
}

TEST_CASE("apply_nccl_step_setup: Simple timing, NCCL's chunk unless the step sets one") {
  StepConfig step;
  step.algorithm = CollectiveAlgo::Tree;
  const CollectiveConfig config;
  NcclChannels channels;
  channels.channels = 16;
  const ProtocolTiming t = apply_nccl_step_setup(step, config, channels);
  CHECK(step.channels == 16);
  const ProtocolTiming simple = protocol_timing(CollectiveAlgo::Tree, NcclProtocol::Simple, config);
  CHECK(t.launch_us == simple.launch_us);
  // tree Simple: one 512 KiB slot (ring: a 1 MiB slice)
  CHECK(step.chunk_bytes == int64_t{512} << 10);
  StepConfig ring;
  apply_nccl_step_setup(ring, config, channels);
  CHECK(ring.chunk_bytes == int64_t{1} << 20);
  // NCCL's slices in flight per connection, as `syncsim collective` runs them: ring Simple 4
  // (NCCL_STEPS / ALLREDUCE_SLICESTEPS), tree Simple 8 (one slot per slice).
  CHECK(ring.connection_depth == 4);
  CHECK(step.connection_depth == 8);
  CHECK(step.collective.wire_factor == 1.0);
  CHECK(step.collective.launch_latency == Time::from_seconds(simple.launch_us * 1e-6));
  CHECK(step.collective.step_latency == Time::from_seconds(simple.step_intra_us * 1e-6));
  CHECK(step.collective.net_step_latency == Time::from_seconds(simple.step_inter_us * 1e-6));
  StepConfig fixed;
  fixed.chunk_bytes = 12345;
  apply_nccl_step_setup(fixed, config, channels);
  CHECK(fixed.chunk_bytes == 12345);
}

TEST_CASE("nccl_cost_inputs and nccl_best_protocol") {
  // 16 ranks on hosts of 8 GPUs: 2 nodes; the graph NCCL's search found (8 rings of 48 GB/s).
  NcclChannels graph;
  graph.search_channels = 8;
  graph.search_bw_GBps = 48.0;
  graph.channels = graph.default_channels = 16;
  const NcclCostInputs in = nccl_cost_inputs(CollectiveOp::AllReduce, 16, 8, graph);
  CHECK(in.nodes == 2);
  CHECK(in.gpus_per_node == 8);
  CHECK(in.channels == 8);
  CHECK(in.bw_intra == doctest::Approx(48.0));
  CHECK(in.bw_inter == doctest::Approx(48.0));
  // Fewer channels requested: the graph shrinks in proportion (4 of 16 -> 2 of 8 rings), more
  // requested channels do not add bandwidth to NCCL's model.
  NcclChannels fewer = graph;
  fewer.requested = true;
  fewer.channels = 4;
  CHECK(nccl_cost_inputs(CollectiveOp::AllReduce, 16, 8, fewer).channels == 2);
  fewer.channels = 1;
  CHECK(nccl_cost_inputs(CollectiveOp::AllReduce, 16, 8, fewer).channels == 1);
  fewer.channels = 64;
  CHECK(nccl_cost_inputs(CollectiveOp::AllReduce, 16, 8, fewer).channels == 8);
  // Fewer ranks than a host: one node of `ranks` GPUs.
  const NcclCostInputs small = nccl_cost_inputs(CollectiveOp::AllGather, 4, 8, graph);
  CHECK(small.nodes == 1);
  CHECK(small.gpus_per_node == 4);
  // The best protocol is the minimum of the algorithm's row.
  for (int64_t bytes : {int64_t{1} << 10, int64_t{1} << 20, int64_t{1} << 30}) {
    for (CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Tree}) {
      const NcclProtocol best = nccl_best_protocol(algo, in, bytes);
      for (NcclProtocol p : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
        CHECK(nccl_predicted_time_us(algo, best, in, bytes) <=
              nccl_predicted_time_us(algo, p, in, bytes));
      }
    }
  }
  // Algorithms without a row of their own use the Ring row; rows that do not apply give Simple.
  CHECK(nccl_best_protocol(CollectiveAlgo::HalvingDoubling, in, 4096) ==
        nccl_best_protocol(CollectiveAlgo::Ring, in, 4096));
  const NcclCostInputs ag = nccl_cost_inputs(CollectiveOp::AllGather, 16, 8, graph);
  CHECK(nccl_best_protocol(CollectiveAlgo::Tree, ag, 4096) == NcclProtocol::Simple);
}

TEST_CASE("nccl_setup: a ring Simple segment of one slice or less is still two slices") {
  // 8 ranks, 1 channel: a segment is bytes / 8. NCCL cuts a chunk in two slices even when it is
  // smaller than a slice (prims_simple.h), down to stepSize x StepPerSlice / 32 = 32 KiB each.
  NcclCollective c;
  c.algo = CollectiveAlgo::Ring;
  c.protocol = NcclProtocol::Simple;
  c.ranks = 8;
  c.channels = 1;
  const CollectiveConfig config;
  auto pieces_per_segment = [&](int64_t bytes) {
    c.bytes = bytes;
    const NcclSetup s = nccl_setup(c, config);
    return build_plan(s.plan).chunk_bytes.size() / 8;
  };
  CHECK(pieces_per_segment(int64_t{8} << 20) == 2);    // 1 MiB segments: two 512 KiB slices
  CHECK(pieces_per_segment(int64_t{16} << 20) == 2);   // 2 MiB: two 1 MiB slices
  CHECK(pieces_per_segment(int64_t{32} << 20) == 4);   // 4 MiB: four slices
  CHECK(pieces_per_segment(int64_t{512} << 10) == 2);  // 64 KiB: two of 32 KiB
  CHECK(pieces_per_segment(int64_t{256} << 10) == 1);  // 32 KiB: one, not two of 16 KiB
  c.op = CollectiveOp::Broadcast;                      // BROADCAST_SLICESTEPS = CHUNKSTEPS = 1
  c.bytes = int64_t{512} << 10;
  CHECK(nccl_setup(c, config).plan.min_pieces == 1);
}
