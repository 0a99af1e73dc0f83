// NCCL's tuning model (references §1) against hand-computed values, and NCCL's `auto` choice.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>

#include "models/collective_cost.hpp"

using namespace syncsim::models;

TEST_CASE("collective cost: ring Simple all_reduce on one node, by hand") {
  NcclCostInputs in;
  in.nodes = 1;
  in.gpus_per_node = 8;
  in.channels = 1;
  in.bw_intra = 20.6;
  // bus 20.6, alg = 20.6 * 8 / 14; lat = base 8.4 + 14 steps * NVLink ring Simple 3.4 = 56.0.
  const double expected = 56.0 + 1e6 / (1000.0 * 20.6 * 8.0 / 14.0);
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Ring, NcclProtocol::Simple, in, 1'000'000) ==
        doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("collective cost: tree LL all_reduce over 4 nodes, by hand") {
  NcclCostInputs in;
  in.nodes = 4;
  in.gpus_per_node = 8;
  in.channels = 2;
  in.bw_inter = 12.0;
  // bus = min(0.92 * 24, 2 * 36.0) = 22.08; LL: min(22.08 / 3.8, llMaxBw Intel N4 20.4);
  // alg = bus / 2, times treeCorrection LL[log2(4096 >> 6) = 6] = 0.7.
  const double alg = 22.08 / 3.8 * 0.5 * 0.7;
  // lat = 6.8 + 2 * (7 * NVLink tree LL 0.6 + log2(4) * NET tree LL 5.0) = 35.2.
  const double expected = 35.2 + 4096.0 / (1000.0 * alg);
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Tree, NcclProtocol::LL, in, 4096) ==
        doctest::Approx(expected).epsilon(1e-12));
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Tree, NcclProtocol::LL,
                               NcclCostInputs{.op = CollectiveOp::AllGather}, 4096) < 0);
}

TEST_CASE("collective cost: multi-node ring Simple gets the 1.4 plateau factor") {
  NcclCostInputs in;
  in.nodes = 2;
  in.gpus_per_node = 8;
  in.channels = 1;
  in.net_overhead_us = 1.0;
  // nsteps 30, inter steps 2: lat = 8.4 + 28 * max(3.4, 3 * 1.0) + 2 * 14 = 131.6; x1.4 when
  // bytes / (channels * ranks) >= 64.
  const double bw = 20.6 * 16.0 / 30.0;
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Ring, NcclProtocol::Simple, in, 512) ==
        doctest::Approx(131.6 + 512 / (1000.0 * bw)));
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Ring, NcclProtocol::Simple, in, 1024) ==
        doctest::Approx(131.6 * 1.4 + 1024 / (1000.0 * bw)));
}

TEST_CASE(
    "collective cost: tree wins small all_reduces, ring wins large ones, auto takes the minimum") {
  NcclCostInputs in;
  in.nodes = 16;
  in.gpus_per_node = 8;
  in.channels = 8;
  in.bw_intra = 20.6;
  in.bw_inter = 12.0;
  bool saw_tree = false, saw_ring_after_tree = false;
  for (int64_t bytes = 8; bytes <= (int64_t{8} << 30); bytes *= 2) {
    const NcclChoice c = nccl_choose(in, bytes);
    double best = 1e300;
    for (CollectiveAlgo a : {CollectiveAlgo::Ring, CollectiveAlgo::Tree}) {
      for (NcclProtocol p : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
        const double t = nccl_predicted_time_us(a, p, in, bytes);
        if (t >= 0) best = std::min(best, t);
      }
    }
    CAPTURE(bytes);
    CHECK(c.time_us == best);
    if (c.algo == CollectiveAlgo::Tree) saw_tree = true;
    if (saw_tree && c.algo == CollectiveAlgo::Ring && !saw_ring_after_tree) {
      saw_ring_after_tree = true;
      MESSAGE("16 nodes x 8 GPUs, 8 channels: ring takes over from tree at ", bytes, " B");
    }
  }
  CHECK(nccl_choose(in, 8).algo == CollectiveAlgo::Tree);
  CHECK(nccl_choose(in, int64_t{8} << 30).algo == CollectiveAlgo::Ring);
  CHECK(saw_ring_after_tree);  // a crossover exists
}

TEST_CASE("collective cost: protocol timing follows NCCL's buffer sizes and steps") {
  const CollectiveConfig c;  // NCCL's defaults
  const ProtocolTiming simple = protocol_timing(CollectiveAlgo::Ring, NcclProtocol::Simple, c);
  CHECK(simple.wire_factor == 1.0);
  // A transfer is a slice: 4 MiB / 8 steps x ALLREDUCE_SLICESTEPS 2, 4 of them in flight.
  CHECK(simple.chunk_bytes == (int64_t{1} << 20));
  CHECK(simple.pipeline_depth == 4);
  CHECK(simple.launch_us == 8.4);
  CHECK(simple.step_intra_us == 3.4);
  CHECK(simple.step_inter_us == 14.0);
  const ProtocolTiming ll = protocol_timing(CollectiveAlgo::Ring, NcclProtocol::LL, c);
  CHECK(ll.wire_factor == 2.0);
  CHECK(ll.chunk_bytes == (int64_t{32} << 10));  // 512 KiB of lines, half data, 8 slots
  CHECK(ll.pipeline_depth == 8);
  CHECK(ll.step_inter_us == 2.7);
  const ProtocolTiming ll128 = protocol_timing(CollectiveAlgo::Tree, NcclProtocol::LL128, c);
  CHECK(ll128.wire_factor == doctest::Approx(128.0 / 120.0));
  CHECK(ll128.chunk_bytes == 4'915'200 * 120 / 128 / 8);
  CHECK(ll128.step_inter_us == 8.5);
  CollectiveConfig small = c;
  small.buffer_size = 1 << 20;
  small.steps = 4;
  const ProtocolTiming s2 = protocol_timing(CollectiveAlgo::Ring, NcclProtocol::Simple, small);
  CHECK(s2.chunk_bytes == (256 << 10));  // 1 MiB / 4 steps x 1 slot per slice
  CHECK(s2.pipeline_depth == 4);
  CHECK(parse_nccl_protocol("ll128") == NcclProtocol::LL128);
  CHECK(parse_nccl_protocol("Simple") == NcclProtocol::Simple);
  CHECK_THROWS_AS(parse_nccl_protocol("LL64"), std::invalid_argument);
}

TEST_CASE("nccl cost model: per-channel caps follow the GPU generation") {
  // The tree's per-channel cap on one node (perChMaxTreeBws N1): Ampere 24.0 against Hopper 38.7,
  // with a graph fast enough that the cap binds: 1 channel of 100 GB/s, 8 GPUs, 1 GiB.
  NcclCostInputs in;
  in.nodes = 1;
  in.gpus_per_node = 8;
  in.channels = 1;
  in.bw_intra = 100.0;
  const int64_t bytes = int64_t{1} << 30;
  in.compute_capability = 90;
  const double hopper =
      nccl_predicted_time_us(CollectiveAlgo::Tree, NcclProtocol::Simple, in, bytes);
  in.compute_capability = 80;
  const double ampere =
      nccl_predicted_time_us(CollectiveAlgo::Tree, NcclProtocol::Simple, in, bytes);
  // Time is latency + S / (0.5 x busbw); at 1 GiB the bandwidth term dominates.
  CHECK(ampere / hopper == doctest::Approx(38.7 / 24.0).epsilon(0.01));
  // The ring's LL128 cap: Blackwell 40.0 per channel against Hopper's 36.7.
  in.compute_capability = 100;
  const double blackwell =
      nccl_predicted_time_us(CollectiveAlgo::Ring, NcclProtocol::LL128, in, bytes);
  in.compute_capability = 90;
  const double hopper_ll128 =
      nccl_predicted_time_us(CollectiveAlgo::Ring, NcclProtocol::LL128, in, bytes);
  CHECK(hopper_ll128 / blackwell == doctest::Approx(40.0 / 36.7).epsilon(0.01));
}
