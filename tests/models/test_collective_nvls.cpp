// NVLS (NVLink SHARP) all_reduce: NCCL's NVLS graph per node shape, its cost model, the plan
// (verified symbolically, traffic counted per GPU) and runs on NVSwitch fabrics against the
// link-bound closed form.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_cost.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/gpu.hpp"
#include "models/nccl_channels.hpp"
#include "models/nccl_setup.hpp"
#include "sim/backends/make_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::identity;
using collective_fixtures::nvswitch_host;

namespace {

NcclSystem one_node(const std::string& gpu_name, uint32_t gpus, uint32_t nodes = 1) {
  const GpuSpec gpu = *gpu_preset(gpu_name);
  return nccl_system(nodes * gpus, gpus, 8, Bandwidth::gbps(400),
                     Bandwidth::bps(static_cast<int64_t>(nccl_nvlink_bytes_per_s(gpu) * 8)), gpu);
}

PlanOptions nvls_options(uint32_t ranks, int64_t bytes, uint32_t channels) {
  return collective_fixtures::plan_options(CollectiveOp::AllReduce, CollectiveAlgo::Nvls, ranks,
                                           bytes, channels);
}

}  // namespace

TEST_CASE("nvls graph: one DGX H100 is 8 heads of 40 GB/s on 16 CTAs") {
  // Per GPU the NVLS search loads heads + 1 channels (its own twice): 9 x 40 = 360 <= 18 x 20.6.
  const NcclChannels c = nccl_channels(one_node("h100", 8), std::nullopt);
  CHECK(c.nvls_heads == 8);
  CHECK(c.nvls_bw_GBps == doctest::Approx(40.0));
  CHECK(c.nvls_efficiency == doctest::Approx(0.85));
  CHECK(c.nvls_channels == 16);
  // NCCL's bus bandwidth 8 x 40 x 0.85 x 7/8 x 2 = 476 GB/s against the plan's link-bound
  // 370.8 x 8/9 x 2 x 7/8 = 576.8 GB/s.
  CHECK(c.nvls_link_efficiency == doctest::Approx(476.0 / (370.8 * 8 / 9 * 1.75)).epsilon(1e-3));
}

TEST_CASE("nvls graph: a GB200 NVL72 domain is 32 heads of 20 GB/s on 24 CTAs") {
  // NCCL_MAX_NVLS_ARITY caps the heads at 32; 33 x 20 <= 18 x 40.1 < 33 x 24.
  const NcclChannels c = nccl_channels(one_node("gb200", 72), std::nullopt);
  CHECK(c.nvls_heads == 32);
  CHECK(c.nvls_bw_GBps == doctest::Approx(20.0));
  CHECK(c.nvls_efficiency == doctest::Approx(0.74));
  CHECK(c.nvls_channels == 24);
  CHECK(c.nvls_link_efficiency < 0.7);
  CHECK(c.nvls_link_efficiency > 0.6);
}

TEST_CASE("nvls graph: none without NVLink SHARP or on one GPU") {
  CHECK(nccl_channels(one_node("a100", 8), std::nullopt).nvls_heads == 0);
  CHECK(nccl_channels(one_node("h100", 1), std::nullopt).nvls_heads == 0);
  CHECK(nccl_channels(one_node("a100", 8, 4), std::nullopt).nvls_heads == 0);
}

TEST_CASE("nvls graph across DGX H100 nodes: a head per NIC at 40 GB/s, NVLS-tree's cap") {
  // 9 x 42 > 370.8 >= 9 x 40 (inter list), and 40 <= the 48 GB/s NIC path.
  const NcclChannels two = nccl_channels(one_node("h100", 8, 2), std::nullopt);
  CHECK(two.nvls_heads == 8);
  CHECK(two.nvls_bw_GBps == doctest::Approx(40.0));
  CHECK(two.nvls_channels == 16);
  CHECK(two.nvls_tree_cap_GBps == doctest::Approx(57.7));
  CHECK(nccl_channels(one_node("h100", 8, 8), std::nullopt).nvls_tree_cap_GBps ==
        doctest::Approx(45.5));
  // Fewer NICs than GPUs: a head per NIC.
  const GpuSpec h100 = *gpu_preset("h100");
  const NcclSystem two_nics =
      nccl_system(16, 8, 2, Bandwidth::gbps(400),
                  Bandwidth::bps(static_cast<int64_t>(nccl_nvlink_bytes_per_s(h100) * 8)), h100);
  CHECK(nccl_channels(two_nics, std::nullopt).nvls_heads == 2);
  // NCCL's NVLS-tree model on 8 nodes: per channel min(40 x 0.85 x 7/8 x 2, 40, 45.5) = 40, so
  // 8 x 40 = 320 GB/s of bus bandwidth; latency 25 + 2 x 3 x 20.9 us.
  const NcclCostInputs in = nccl_cost_inputs(CollectiveOp::AllReduce, 64, 8,
                                             nccl_channels(one_node("h100", 8, 8), std::nullopt));
  const int64_t s = int64_t{1} << 30;
  const double expect = 25.0 + 6 * 20.9 + static_cast<double>(s) / (1000.0 * 320.0 * 64.0 / 126.0);
  CHECK(nccl_predicted_time_us(CollectiveAlgo::NvlsTree, NcclProtocol::Simple, in, s) ==
        doctest::Approx(expect));
  // No NVLS (single-node algorithm) across nodes, no NVLS-tree on one node.
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple, in, s) < 0);
  const NcclCostInputs one = nccl_cost_inputs(CollectiveOp::AllReduce, 8, 8,
                                              nccl_channels(one_node("h100", 8), std::nullopt));
  CHECK(nccl_predicted_time_us(CollectiveAlgo::NvlsTree, NcclProtocol::Simple, one, s) < 0);
}

TEST_CASE("nvls cost: NCCL's model by hand, and auto takes NVLS only where it is fastest") {
  const NcclChannels ch = nccl_channels(one_node("h100", 8), std::nullopt);
  const NcclCostInputs in = nccl_cost_inputs(CollectiveOp::AllReduce, 8, 8, ch);
  const int64_t s = int64_t{1} << 30;
  // busBw 476; algbw = 476 x 8 / 14; time = 25 us + S / algbw.
  const double expect = 25.0 + static_cast<double>(s) / (1000.0 * 476.0 * 8.0 / 14.0);
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple, in, s) ==
        doctest::Approx(expect));
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::LL, in, s) < 0);
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::LL128, in, s) < 0);
  CHECK(nccl_choose(in, s).algo == CollectiveAlgo::Nvls);
  CHECK(nccl_choose(in, 8).algo != CollectiveAlgo::Nvls);  // 25 us is too much for 8 B
  CHECK(nccl_best_protocol(CollectiveAlgo::Nvls, in, s) == NcclProtocol::Simple);
  // reduce_scatter has an NVLS row too, which NCCL's model puts below its ring on one DGX H100
  // (208 GB/s of algorithm bandwidth); all_to_all has none.
  NcclCostInputs rs = in;
  rs.op = CollectiveOp::ReduceScatter;
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple, rs, s) > 0);
  CHECK(nccl_choose(rs, s).algo == CollectiveAlgo::Ring);
  NcclCostInputs a2a = in;
  a2a.op = CollectiveOp::AllToAll;
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple, a2a, s) < 0);
  // Never chosen where the node has no NVLS graph.
  const NcclCostInputs a100 = nccl_cost_inputs(CollectiveOp::AllReduce, 8, 8,
                                               nccl_channels(one_node("a100", 8), std::nullopt));
  for (int64_t b = 8; b <= (int64_t{8} << 30); b *= 4) {
    CHECK(nccl_choose(a100, b).algo != CollectiveAlgo::Nvls);
  }
  // Predicted time never falls with size, and auto's choice neither.
  double last = 0, last_auto = 0;
  for (int64_t b = 8; b <= (int64_t{8} << 30); b *= 2) {
    const double t = nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple, in, b);
    CHECK(t >= last);
    last = t;
    const double a = nccl_choose(in, b).time_us;
    CHECK(a >= last_auto);
    last_auto = a;
  }
}

TEST_CASE("nvls plan: symbolically correct, one switch engine, the round structure counted") {
  for (uint32_t n : {2u, 3u, 8u, 40u}) {
    for (int64_t bytes : {int64_t{0}, int64_t{5}, int64_t{1} << 20, (int64_t{3} << 20) + 7}) {
      for (uint32_t channels : {1u, 3u}) {
        CAPTURE(n);
        CAPTURE(bytes);
        CAPTURE(channels);
        PlanOptions o = nvls_options(n, bytes, channels);
        o.chunk_bytes = 16 << 10;
        const CollectivePlan plan = build_plan(o);
        CHECK(plan.engines == 1);
        CHECK(plan.total_ranks() == n + 1);
        const PlanCheck check = verify_plan(plan);
        CHECK_MESSAGE(check.ok, check.error);
        // Per channel and round 2 n + 2 heads transfers (heads = min(32, n)).
        const uint32_t heads = std::min(n, 32u);
        const auto transfers = static_cast<double>(plan.transfer_count());
        CHECK(std::fmod(transfers, 2.0 * n + 2.0 * heads) == 0.0);
        CHECK(transfers <= plan_size_estimate(CollectiveAlgo::Nvls, n, static_cast<double>(bytes),
                                              static_cast<double>(o.chunk_bytes), channels, n)
                               .transfers);
      }
    }
  }
}

TEST_CASE("nvls plan: every GPU sends S (+ S / heads as a head) and receives the same") {
  const uint32_t n = 40;  // 32 heads, 8 GPUs that only send and receive
  const int64_t bytes = int64_t{64} << 20;
  const CollectivePlan plan = build_plan(nvls_options(n, bytes, 4));
  std::vector<int64_t> sent(n + 1, 0), received(n + 1, 0);
  for (const PlanStep& s : plan.steps) {
    if (s.kind != PlanStep::Kind::Transfer) continue;
    sent[s.src] += s.bytes;
    received[s.dst] += s.bytes;
  }
  const int64_t slice = bytes / 32;
  for (uint32_t k = 0; k < n; ++k) {
    CAPTURE(k);
    const int64_t want = bytes + (k < 32 ? slice : 0);
    CHECK(sent[k] == doctest::Approx(static_cast<double>(want)).epsilon(1e-6));
    CHECK(received[k] == doctest::Approx(static_cast<double>(want)).epsilon(1e-6));
  }
  // The engine takes in n x S + S (reads and stores) and sends as much (results and multicast).
  CHECK(received[n] == doctest::Approx(static_cast<double>(n + 1) * bytes).epsilon(1e-6));
  CHECK(sent[n] == received[n]);
}

TEST_CASE("nvls plan: refused across hosts and for other collectives") {
  PlanOptions o = nvls_options(16, 1 << 20, 2);
  o.gpus_per_host = 8;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  o = nvls_options(8, 1 << 20, 2);
  o.op = CollectiveOp::AllToAll;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  o = nvls_options(16, 1 << 20, 2);
  o.op = CollectiveOp::ReduceScatter;
  o.gpus_per_host = 8;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  CHECK_THROWS_AS(protocol_timing(CollectiveAlgo::Nvls, NcclProtocol::LL, CollectiveConfig{}),
                  std::invalid_argument);
}

TEST_CASE("nvls reduce_scatter / all_gather plans: verified, S out and S / n in per GPU") {
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    for (uint32_t n : {2u, 3u, 8u}) {
      for (int64_t bytes : {int64_t{1} << 20, (int64_t{3} << 20) + 7}) {
        for (uint32_t channels : {1u, 3u}) {
          CAPTURE(static_cast<int>(op));
          CAPTURE(n);
          CAPTURE(bytes);
          CAPTURE(channels);
          PlanOptions o = nvls_options(n, bytes, channels);
          o.op = op;
          o.chunk_bytes = 16 << 10;
          const CollectivePlan plan = build_plan(o);
          CHECK(plan.engines == 1);
          const PlanCheck check = verify_plan(plan);
          CHECK_MESSAGE(check.ok, check.error);
          std::vector<int64_t> sent(n + 1, 0), received(n + 1, 0);
          for (const PlanStep& st : plan.steps) {
            if (st.kind != PlanStep::Kind::Transfer) continue;
            sent[st.src] += st.bytes;
            received[st.dst] += st.bytes;
          }
          // reduce_scatter: each GPU gives the switch its whole input and gets its shard back;
          // all_gather: each gives its shard and gets the whole array (the multicast).
          const bool rs = op == CollectiveOp::ReduceScatter;
          const auto shard = static_cast<double>(bytes) / n;
          const auto whole = static_cast<double>(bytes);
          for (uint32_t k = 0; k < n; ++k) {
            CAPTURE(k);
            CHECK(static_cast<double>(sent[k]) ==
                  doctest::Approx(rs ? whole : shard).epsilon(1e-5));
            CHECK(static_cast<double>(received[k]) ==
                  doctest::Approx(rs ? shard : whole).epsilon(1e-5));
          }
        }
      }
    }
  }
}

TEST_CASE("nvls reduce_scatter / all_gather run: link-bound at S per GPU; NCCL's model by hand") {
  const uint32_t n = 8;
  const int64_t bytes = int64_t{256} << 20;
  const net::NetworkSpec spec = topo::build_fabric(nvswitch_host(n, Bandwidth::gbps(400)));
  const double link_Bps = 400e9 / 8 * 4096.0 / (4096.0 + 32.0);
  const double closed = static_cast<double>(bytes) / link_Bps;
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow}) {
      CAPTURE(static_cast<int>(op));
      CAPTURE(static_cast<int>(f));
      Simulation sim(1);
      auto backend = make_backend(f, sim, spec);
      PlanOptions o = nvls_options(n, bytes, 8);
      o.op = op;
      CollectiveRunOptions ro;
      ro.hbm_bytes_per_s = 0;
      const double t =
          run_collective(*backend, build_plan(o), identity(n), ro).duration().seconds();
      MESSAGE("nvls " << to_string(op) << " 8 x 256 MiB: " << t * 1e3 << " ms, closed form "
                      << closed * 1e3 << " ms");
      CHECK(t >= closed * 0.999);
      CHECK(t <= closed * 1.05);
    }
    // NCCL's model (tuning.cc): heads x bw x efficiency x (heads - 1) / heads x (ppn - 1) / ppn as
    // the algorithm bandwidth, NVLS's latency once.
    const NcclChannels ch = nccl_channels(one_node("h100", 8), std::nullopt);
    REQUIRE(ch.nvls_heads == 8);
    const NcclCostInputs cost = nccl_cost_inputs(op, 8, 8, ch);
    const double alg = 8 * ch.nvls_bw_GBps * ch.nvls_efficiency * 7.0 / 8 * 7.0 / 8;
    const double t =
        nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple, cost, int64_t{1} << 30);
    CHECK(t > 0);
    CHECK(
        t - static_cast<double>(int64_t{1} << 30) / (1000 * alg) ==
        doctest::Approx(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple, cost, 0))
            .epsilon(1e-9));
    // Not across hosts (NCCL needs CollNet there).
    const NcclChannels two = nccl_channels(one_node("h100", 8, 2), std::nullopt);
    CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple,
                                 nccl_cost_inputs(op, 16, 8, two), int64_t{1} << 30) < 0);
  }
}

TEST_CASE("nvls fabric: one engine per host on its NVSwitch, at the GPUs' NVLink together") {
  const net::NetworkSpec spec = topo::build_fabric(nvswitch_host(8, Bandwidth::gbps(2966)));
  REQUIRE(spec.nvls_engines.size() == 1);
  const net::NodeId engine = spec.nvls_engines[0].nvlink_port;
  CHECK(spec.nodes[engine].name == "host0.nvls");
  CHECK(spec.endpoint_count() == 9);
  CHECK(spec.endpoint(spec.nvls_endpoint(0)).nvlink_port == engine);
  const net::LinkSpec& link = spec.links.back();
  CHECK(link.a == engine);
  CHECK(spec.nodes[link.b].role == net::SwitchRole::NvSwitch);
  CHECK(spec.link_classes[link.link_class].name == "nvls");
  CHECK(spec.link_classes[link.link_class].bandwidth.bits_per_second() ==
        8 * int64_t{2966} * 1000000000);
  // fabric_size counts it; without NVLink SHARP there is none.
  CHECK(topo::fabric_size(nvswitch_host(8, Bandwidth::gbps(2966))).nodes == spec.nodes.size());
  const net::NetworkSpec plain = topo::build_fabric(nvswitch_host(8, Bandwidth::gbps(2966), false));
  CHECK(plain.nvls_engines.empty());
  CHECK(plain.nodes.size() + 1 == spec.nodes.size());
  // The runner refuses an NVLS plan there.
  Simulation sim(1);
  auto backend = make_backend(Fidelity::Flow, sim, plain);
  const CollectivePlan plan = build_plan(nvls_options(8, 1 << 20, 2));
  CHECK_THROWS_AS(CollectiveRunner(*backend, plan, identity(8)), std::invalid_argument);
}

TEST_CASE("nvls run: a large all_reduce is link-bound at S (1 + 1/heads) per GPU, every fidelity") {
  // 8 GPUs at 400 Gb/s NVLink: per GPU and direction S + S/8; 256 MiB over 8 channels. The
  // engine's link is 8x faster and never the bottleneck.
  const uint32_t n = 8;
  const int64_t bytes = int64_t{256} << 20;
  const net::NetworkSpec spec = topo::build_fabric(nvswitch_host(n, Bandwidth::gbps(400)));
  const double link_Bps = 400e9 / 8 * 4096.0 / (4096.0 + 32.0);  // NVLink MTU 4 KiB, 32 B header
  const double closed = static_cast<double>(bytes) * (1.0 + 1.0 / n) / link_Bps;
  for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow}) {
    CAPTURE(static_cast<int>(f));
    Simulation sim(1);
    auto backend = make_backend(f, sim, spec);
    const CollectivePlan plan = build_plan(nvls_options(n, bytes, 8));
    REQUIRE(verify_plan(plan).ok);
    CollectiveRunOptions ro;
    ro.hbm_bytes_per_s = 0;
    const double t = run_collective(*backend, plan, identity(n), ro).duration().seconds();
    MESSAGE("nvls 8 x 256 MiB: " << t * 1e3 << " ms, closed form " << closed * 1e3 << " ms");
    CHECK(t >= closed * 0.999);
    // Pipeline fill and drain over 64 rounds per channel: analytic +3.1 %, flow +5.2 % (its
    // queue pairs drain their transfers in order).
    CHECK(t <= closed * 1.06);
  }
  // Against a ring on the same fabric: 2 (n-1)/n S per GPU, so NVLS is (2 (n-1)/n) / (1 + 1/n)
  // = 1.56x faster at line rate.
  Simulation sim(1);
  auto backend = make_backend(Fidelity::Flow, sim, spec);
  PlanOptions ring = nvls_options(n, bytes, 8);
  ring.algo = CollectiveAlgo::Ring;
  ring.chunk_bytes = 2 << 20;
  CollectiveRunOptions ro;
  ro.hbm_bytes_per_s = 0;
  const double t_ring =
      run_collective(*backend, build_plan(ring), identity(n), ro).duration().seconds();
  CHECK(t_ring / closed == doctest::Approx(1.75 / 1.125).epsilon(0.05));
}

namespace {

PlanOptions nvls_tree_options(uint32_t nodes, uint32_t gpus, int64_t bytes, uint32_t channels) {
  PlanOptions o = nvls_options(nodes * gpus, bytes, channels);
  o.algo = CollectiveAlgo::NvlsTree;
  o.gpus_per_host = gpus;
  return o;
}

}  // namespace

TEST_CASE("nvls_tree plan: symbolically correct, an engine per host, sized as estimated") {
  for (uint32_t nodes : {2u, 3u, 5u}) {
    for (uint32_t g : {2u, 4u}) {
      for (int64_t bytes : {int64_t{0}, int64_t{7}, int64_t{2} << 20, (int64_t{2} << 20) + 3}) {
        for (uint32_t channels : {1u, 4u}) {
          CAPTURE(nodes);
          CAPTURE(g);
          CAPTURE(bytes);
          CAPTURE(channels);
          PlanOptions o = nvls_tree_options(nodes, g, bytes, channels);
          o.chunk_bytes = 32 << 10;
          const CollectivePlan plan = build_plan(o);
          CHECK(plan.engines == nodes);
          const PlanCheck check = verify_plan(plan);
          CHECK_MESSAGE(check.ok, check.error);
          const auto est = plan_size_estimate(CollectiveAlgo::NvlsTree, nodes * g,
                                              static_cast<double>(bytes), 32 << 10, channels, g);
          // Exact where every channel gets as many rounds; otherwise the estimate counts channel
          // 0's rounds everywhere (the remainder bytes go to the first channels).
          const auto transfers = static_cast<double>(plan.transfer_count());
          if (bytes % (int64_t{channels} * 32768 * std::min(g, 32u)) == 0 || bytes < 32768) {
            CHECK(transfers == doctest::Approx(est.transfers));
          } else {
            CHECK(transfers <= est.transfers);
          }
        }
      }
    }
  }
  // Whole hosts, two or more.
  CHECK_THROWS_AS(build_plan(nvls_tree_options(1, 8, 1 << 20, 2)), std::invalid_argument);
  PlanOptions ragged = nvls_tree_options(2, 4, 1 << 20, 2);
  ragged.ranks = 7;
  CHECK_THROWS_AS(build_plan(ragged), std::invalid_argument);
}

TEST_CASE("nvls_tree run: two hosts are NIC-bound at S / heads per NIC and direction") {
  // 2 hosts x 4 GPUs x 4 NICs at 100 Gb/s, NVLink 3600 Gb/s: per NIC and direction head h moves
  // its slice S / 4 up one of the two trees and down the other (the trees are mirrored), so
  // t = S / (4 x NIC rate) while NVLink needs only S (1 + 1/4) / 450 GB/s.
  topo::FabricParams p = nvswitch_host(4, Bandwidth::gbps(3600));
  p.spine_leaf.hosts_per_leaf = 2;
  p.host.nics = 4;
  p.links.host.bandwidth = Bandwidth::gbps(100);
  const net::NetworkSpec spec = topo::build_fabric(p);
  REQUIRE(spec.nvls_engines.size() == 2);
  const int64_t bytes = int64_t{128} << 20;
  const double nic_Bps = 100e9 / 8 * 4096.0 / (4096.0 + 64.0);  // 4 KiB MTU, 64 B header
  const double closed = static_cast<double>(bytes) / 4.0 / nic_Bps;
  Simulation sim(1);
  auto backend = make_backend(Fidelity::Flow, sim, spec);
  const CollectivePlan plan = build_plan(nvls_tree_options(2, 4, bytes, 8));
  REQUIRE(verify_plan(plan).ok);
  CollectiveRunOptions ro;
  ro.hbm_bytes_per_s = 0;
  const double t = run_collective(*backend, plan, identity(8), ro).duration().seconds();
  MESSAGE("nvls_tree 2 x 4 x 128 MiB @100G: " << t * 1e3 << " ms, closed form " << closed * 1e3
                                              << " ms");
  CHECK(t >= closed * 0.999);
  CHECK(t <= closed * 1.06);
}

TEST_CASE("nvls cost: every algorithm's time and auto's grow with size on 1, 2, 16, 128 nodes") {
  for (uint32_t nodes : {1u, 2u, 16u, 128u}) {
    CAPTURE(nodes);
    const NcclCostInputs in =
        nccl_cost_inputs(CollectiveOp::AllReduce, nodes * 8, 8,
                         nccl_channels(one_node("h100", 8, nodes), std::nullopt));
    for (CollectiveAlgo a : {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::Nvls,
                             CollectiveAlgo::NvlsTree}) {
      for (NcclProtocol p : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
        double last = -1;
        for (int64_t b = 8; b <= (int64_t{8} << 30); b *= 2) {
          const double t = nccl_predicted_time_us(a, p, in, b);
          if (t < 0) continue;
          CHECK(t >= last);
          last = t;
        }
      }
    }
    double last = 0;
    bool nvls_seen = false;
    for (int64_t b = 8; b <= (int64_t{8} << 30); b *= 2) {
      const NcclChoice c = nccl_choose(in, b);
      CHECK(c.time_us >= last);
      last = c.time_us;
      nvls_seen = nvls_seen || is_nvls(c.algo);
      CHECK((c.algo != CollectiveAlgo::Nvls || nodes == 1));
      CHECK((c.algo != CollectiveAlgo::NvlsTree || nodes > 1));
    }
    if (nodes == 1) CHECK(nvls_seen);  // one DGX H100: NVLS from mid sizes on
  }
}

TEST_CASE("nvls chunk: NCCL's calcCollChunking halves it for smaller all_reduces") {
  // One DGX H100: 16 NVLS channels x 8 heads = 128 concurrent operations.
  const int64_t MiB = int64_t{1} << 20;
  CHECK(nccl_nvls_chunk_bytes(false, 8192 * MiB, 16, 8, 1) == 128 * 1024);
  CHECK(nccl_nvls_chunk_bytes(false, 1024 * MiB, 16, 8, 1) == 128 * 1024);  // not < 64 x 128 x 128K
  CHECK(nccl_nvls_chunk_bytes(false, 1024 * MiB - 1, 16, 8, 1) == 64 * 1024);
  CHECK(nccl_nvls_chunk_bytes(false, 128 * MiB, 16, 8, 1) == 64 * 1024);  // not < 8 x 128 x 64K
  CHECK(nccl_nvls_chunk_bytes(false, 16 * MiB, 16, 8, 1) == 32 * 1024);   // not < 2 x 128 x 32K
  CHECK(nccl_nvls_chunk_bytes(false, 1 * MiB, 16, 8, 1) == 16 * 1024);
  // NVLS-tree: 128 KiB on 2 nodes for large sizes, 64 KiB from 4 nodes, 32 KiB when small.
  CHECK(nccl_nvls_chunk_bytes(true, 8192 * MiB, 16, 8, 2) == 128 * 1024);
  CHECK(nccl_nvls_chunk_bytes(true, 8192 * MiB, 16, 8, 4) == 64 * 1024);
  CHECK(nccl_nvls_chunk_bytes(true, 64 * MiB - 1, 16, 8, 2) == 64 * 1024);  // < 4 x 128 x 128K
  CHECK(nccl_nvls_chunk_bytes(true, 8 * MiB - 1, 16, 8, 2) == 32 * 1024);   // < 1 x 128 x 64K
  // nccl_setup hands the rule to the plan unless a chunk was given.
  NcclCollective c;
  c.algo = CollectiveAlgo::Nvls;
  c.ranks = 8;
  c.gpus_per_host = 8;
  c.channels = 16;
  c.nvls_heads = 8;
  c.bytes = 16 * MiB;
  CHECK(nccl_setup(c, CollectiveConfig{}).plan.chunk_bytes == 32 * 1024);
  c.chunk_bytes = 256 * 1024;
  CHECK(nccl_setup(c, CollectiveConfig{}).plan.chunk_bytes == 256 * 1024);
}
