// SHARP (CollNet) all_reduce: aggregation engines on the fabric's switches, the trees sharp_am
// would build, the CollNet Direct and Chain plans (verified symbolically), runs against the
// in-network closed form (S once up and once down each NIC, against a ring's 2 (n - 1) / n S), the
// tree limits, and NCCL's cost model and choice.
#include <doctest/doctest.h>

#include <algorithm>
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
#include "sim/net/sharp_aggregation.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::identity;

namespace {

// A SHARP spine-leaf: `leaves` leaves of `hosts_per_leaf` hosts of `gpus` GPUs and as many NICs,
// `spines` spines, every fabric link at 400 Gb/s.
topo::FabricParams sharp_fabric(uint32_t leaves, uint32_t hosts_per_leaf, uint32_t gpus,
                                uint32_t spines = 2) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = leaves;
  p.spine_leaf.hosts_per_leaf = hosts_per_leaf;
  p.spine_leaf.spines = spines;
  p.spine_leaf.uplinks_per_spine = gpus;  // non-blocking at any host size
  p.host.gpus = gpus;
  p.host.nics = gpus;
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->bandwidth = Bandwidth::gbps(400);
    l->delay = Time::ns(500);
    l->mtu = Bytes{4096};
    l->header = Bytes{64};
  }
  p.switch_params.buffer = Bytes{64 << 20};
  p.sharp.enabled = true;
  return p;
}

PlanOptions collnet_options(CollectiveAlgo algo, const net::NetworkSpec& spec, uint32_t ranks,
                            uint32_t gpus_per_host, int64_t bytes, uint32_t channels,
                            int64_t chunk) {
  PlanOptions o =
      collective_fixtures::plan_options(CollectiveOp::AllReduce, algo, ranks, bytes, channels);
  o.gpus_per_host = gpus_per_host;
  o.nics_per_host = gpus_per_host;
  o.chunk_bytes = chunk;
  const std::vector<uint32_t> gpus = identity(ranks);
  o.collnet_trees = net::rail_aggregation_trees(spec, gpus, gpus_per_host, gpus_per_host);
  return o;
}

double run_seconds(const net::NetworkSpec& spec, const PlanOptions& o, Fidelity f) {
  Simulation sim(1);
  auto backend = make_backend(f, sim, spec);
  const CollectivePlan plan = build_plan(o);
  CollectiveRunOptions ro;
  ro.hbm_bytes_per_s = 0;
  return run_collective(*backend, plan, identity(o.ranks), ro).duration().seconds();
}

}  // namespace

TEST_CASE("sharp fabric: one engine per fabric switch, at its ports together, none without") {
  const net::NetworkSpec spec = topo::build_fabric(sharp_fabric(2, 2, 1));
  // 2 leaves + 2 spines.
  REQUIRE(spec.sharp_engines.size() == 4);
  CHECK(spec.endpoint_count() == spec.gpus.size() + 4);
  const net::NodeId leaf0 = spec.sharp_engine_switch[0];
  CHECK(spec.nodes[leaf0].name == "leaf0");
  CHECK(spec.nodes[spec.sharp_engines[0].nic].name == "leaf0.sharp");
  CHECK(spec.nodes[spec.sharp_engines[0].nic].host == net::kNoHost);
  CHECK(spec.endpoint(spec.sharp_endpoint(0)).nic == spec.sharp_engines[0].nic);
  // leaf0: 2 hosts + 2 spines at 400G = 1.6 Tb/s.
  const net::LinkSpec& link = spec.links[spec.links.size() - 4];
  CHECK(spec.link_classes[link.link_class].name == "sharp");
  CHECK(spec.link_classes[link.link_class].bandwidth == Bandwidth::gbps(1600));
  CHECK(topo::fabric_size(sharp_fabric(2, 2, 1)).nodes == spec.nodes.size());
  topo::FabricParams plain = sharp_fabric(2, 2, 1);
  plain.sharp.enabled = false;
  CHECK(topo::build_fabric(plain).sharp_engines.empty());
  CHECK(topo::build_fabric(plain).nodes.size() + 4 == spec.nodes.size());
}

TEST_CASE("sharp trees: leaves under a spine chosen per rail; one leaf is its own root") {
  const net::NetworkSpec spec = topo::build_fabric(sharp_fabric(2, 2, 2));
  const std::vector<uint32_t> gpus = identity(8);
  const auto trees = net::rail_aggregation_trees(spec, gpus, 2, 2);
  REQUIRE(trees.size() == 2);
  for (uint32_t rail = 0; rail < 2; ++rail) {
    const net::AggregationTree& t = trees[rail];
    CHECK(t.participant_engine == std::vector<uint32_t>{0, 0, 1, 1});  // leaf0, leaf0, leaf1, ...
    REQUIRE(t.edges.size() == 3);
    CHECK(t.edges[0].engine == 0);
    CHECK(t.edges[1].engine == 1);
    CHECK(t.edges[0].parent == t.root());
    CHECK(t.edges[1].parent == t.root());
    CHECK(t.edges[2].parent == net::AggregationTree::kNoEngine);
    CHECK(spec.nodes[spec.sharp_engine_switch[t.root()]].role == net::SwitchRole::Spine);
  }
  // The two rails' roots are different spines.
  CHECK(trees[0].root() != trees[1].root());
  // Hosts of one leaf: the leaf is the root.
  const auto one = net::rail_aggregation_trees(spec, identity(4), 2, 2);
  CHECK(one[0].edges.size() == 1);
  CHECK(one[0].root() == 0);
  // Per-switch load: each spine serves one tree, each leaf two (both rails).
  CHECK(net::aggregation_tree_load(spec, trees).most_trees == 2);
  CHECK(net::aggregation_tree_load(spec, trees).over_engine == net::AggregationTree::kNoEngine);
  net::NetworkSpec quantum = spec;
  quantum.sharp.trees_per_switch = 1;  // QM8700: one active tree per switch
  const net::TreeLoad over = net::aggregation_tree_load(quantum, trees);
  CHECK(over.over_engine == 0);
  CHECK(over.over_limit == 1);
  // A fabric without SHARP engines has no trees.
  topo::FabricParams plain = sharp_fabric(2, 2, 2);
  plain.sharp.enabled = false;
  CHECK_THROWS_AS(net::rail_aggregation_trees(topo::build_fabric(plain), gpus, 2, 2),
                  std::invalid_argument);
}

TEST_CASE("collnet plans: Direct and Chain verify for several host shapes and channels") {
  for (const CollectiveAlgo algo : {CollectiveAlgo::CollnetDirect, CollectiveAlgo::CollnetChain}) {
    for (const uint32_t g : {1u, 2u, 4u}) {
      const net::NetworkSpec spec = topo::build_fabric(sharp_fabric(2, 2, g));
      const uint32_t n = 4 * g;
      for (const uint32_t channels : {1u, 3u}) {
        CAPTURE(static_cast<int>(algo));
        CAPTURE(g);
        CAPTURE(channels);
        const PlanOptions o = collnet_options(algo, spec, n, g, 3 << 20, channels, 128 << 10);
        const CollectivePlan plan = build_plan(o);
        const PlanCheck check = verify_plan(plan);
        CHECK_MESSAGE(check.ok, check.error);
        // Two leaves, and a root spine per rail tree (rails alternate over the two spines).
        CHECK(plan.engines == 2 + std::min(g, 2u));
        CHECK(plan.fabric_engines.size() == plan.engines);
      }
    }
  }
  // Other collectives, Chain's reduce_scatter / all_gather, fewer NICs than GPUs for those two,
  // and a lone host are refused.
  const net::NetworkSpec spec = topo::build_fabric(sharp_fabric(2, 2, 2));
  PlanOptions o = collnet_options(CollectiveAlgo::CollnetDirect, spec, 8, 2, 1 << 20, 1, 0);
  o.op = CollectiveOp::AllToAll;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  o = collnet_options(CollectiveAlgo::CollnetChain, spec, 8, 2, 1 << 20, 1, 0);
  o.op = CollectiveOp::AllGather;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  o = collnet_options(CollectiveAlgo::CollnetDirect, spec, 8, 2, 1 << 20, 1, 0);
  o.op = CollectiveOp::ReduceScatter;
  o.nics_per_host = 1;
  CHECK_THROWS_WITH_AS(build_plan(o), doctest::Contains("needs a NIC per GPU"),
                       std::invalid_argument);
  o = collnet_options(CollectiveAlgo::CollnetDirect, spec, 8, 2, 1 << 20, 1, 0);
  o.ranks = 2;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  CHECK_THROWS_AS(
      protocol_timing(CollectiveAlgo::CollnetDirect, NcclProtocol::LL128, CollectiveConfig{}),
      std::invalid_argument);
}

TEST_CASE("collnet reduce_scatter / all_gather plans verify for several host shapes") {
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    for (const uint32_t g : {1u, 2u, 4u}) {
      // 2 leaves of 3 hosts: a leaf's hosts are a run of participants, the spine serves all.
      const net::NetworkSpec spec = topo::build_fabric(sharp_fabric(2, 3, g));
      const uint32_t n = 6 * g;
      for (const uint32_t channels : {1u, 3u}) {
        for (const int64_t bytes : {int64_t{3} << 20, int64_t{3 << 20} + 7}) {
          CAPTURE(static_cast<int>(op));
          CAPTURE(g);
          CAPTURE(channels);
          CAPTURE(bytes);
          PlanOptions o =
              collnet_options(CollectiveAlgo::CollnetDirect, spec, n, g, bytes, channels, 64 << 10);
          o.op = op;
          const CollectivePlan plan = build_plan(o);
          const PlanCheck check = verify_plan(plan);
          CHECK_MESSAGE(check.ok, check.error);
          CHECK(plan.engines == 2 + std::min(g, 2u));
          // Every byte of the gathered array is in exactly one chunk, owned by its shard's rank.
          int64_t total = 0;
          for (const int64_t c : plan.chunk_bytes) total += c;
          CHECK(total == bytes);
          // GPU 0 (head 0) sends (g - 1) / g of the array over NVLink: the other heads' rails of
          // its input (reduce_scatter) or its rail to the host's other GPUs (all_gather); its NIC
          // sends its host's sum of rail 0 up (reduce_scatter: S / g) or its shard (S / n).
          std::vector<int64_t> nvlink_out(n, 0);
          std::vector<int64_t> nic_up(n, 0);
          for (const PlanStep& st : plan.steps) {
            if (st.kind != PlanStep::Kind::Transfer) continue;
            if (st.src < n && st.dst < n) nvlink_out[st.src] += st.bytes;
            if (st.src < n && st.dst >= n) nic_up[st.src] += st.bytes;
          }
          const double s = static_cast<double>(bytes);
          const bool rs = op == CollectiveOp::ReduceScatter;
          CHECK(static_cast<double>(nic_up[0]) ==
                doctest::Approx(rs ? s / g : s / n).epsilon(1e-3));
          CHECK(static_cast<double>(nvlink_out[0]) ==
                doctest::Approx(s * (g - 1) / g).epsilon(1e-3));
        }
      }
    }
  }
}

TEST_CASE("collnet reduce_scatter / all_gather run: S through every NIC once, a ring (n-1)/n S") {
  // 4 single-GPU hosts: reduce_scatter sends every host's whole input up (the switches reduce it
  // and send each host its shard), all_gather receives the whole array on every NIC; the ring
  // moves (n - 1) / n S through every NIC. SHARP's gain here is its two tree hops, not bandwidth.
  const int64_t bytes = int64_t{64} << 20;
  const net::NetworkSpec spec = topo::build_fabric(sharp_fabric(2, 2, 1));
  const double payload_Bps = 400e9 / 8 * 4096.0 / (4096.0 + 64.0);
  const double closed = static_cast<double>(bytes) / payload_Bps;
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    for (const Fidelity f : {Fidelity::Analytic, Fidelity::Flow, Fidelity::Packet}) {
      CAPTURE(static_cast<int>(op));
      CAPTURE(static_cast<int>(f));
      PlanOptions o =
          collnet_options(CollectiveAlgo::CollnetDirect, spec, 4, 1, bytes, 2, 512 << 10);
      o.op = op;
      const double sharp = run_seconds(spec, o, f);
      PlanOptions ring = collective_fixtures::plan_options(op, CollectiveAlgo::Ring, 4, bytes, 2);
      ring.gpus_per_host = 1;
      ring.chunk_bytes = 512 << 10;
      const double ring_s = run_seconds(spec, ring, f);
      MESSAGE("collnet " << to_string(op) << " 4 x 64 MiB: " << sharp * 1e3 << " ms, ring "
                         << ring_s * 1e3 << " ms, closed form " << closed * 1e3 << " ms");
      CHECK(sharp >= closed * 0.999);
      CHECK(sharp <= closed * 1.08);
      CHECK(ring_s >= 0.75 * closed * 0.999);
      CHECK(ring_s <= 0.75 * closed * 1.01);
      CHECK(run_seconds(spec, o, f) == sharp);
    }
  }
}

TEST_CASE("collnet run: S once up and down each NIC, against a ring's 2 (n - 1) / n S") {
  // 4 single-GPU hosts on 2 leaves at 400 Gb/s: SHARP sends the buffer up once and receives it
  // once on every NIC (the two directions overlap), so the time is S over the payload rate plus
  // the pipeline's fill; a ring sends 2 (n - 1) / n S = 1.5 S.
  const int64_t bytes = int64_t{64} << 20;
  const net::NetworkSpec spec = topo::build_fabric(sharp_fabric(2, 2, 1));
  const double payload_Bps = 400e9 / 8 * 4096.0 / (4096.0 + 64.0);
  const double closed = static_cast<double>(bytes) / payload_Bps;
  for (const Fidelity f : {Fidelity::Analytic, Fidelity::Flow, Fidelity::Packet}) {
    CAPTURE(static_cast<int>(f));
    const double sharp = run_seconds(
        spec, collnet_options(CollectiveAlgo::CollnetDirect, spec, 4, 1, bytes, 2, 512 << 10), f);
    PlanOptions ring = collective_fixtures::plan_options(CollectiveOp::AllReduce,
                                                         CollectiveAlgo::Ring, 4, bytes, 2);
    ring.gpus_per_host = 1;
    ring.chunk_bytes = 512 << 10;
    const double ring_s = run_seconds(spec, ring, f);
    MESSAGE("collnet 4 x 64 MiB: " << sharp * 1e3 << " ms, ring " << ring_s * 1e3
                                   << " ms, closed form " << closed * 1e3 << " ms");
    // Fill and drain: a round crosses 4 transfers store-and-forward (host, leaf, spine, leaf,
    // host) over 64 rounds per channel. Measured: flow 2.5 %, analytic 6.3 %, packet 7.2 % over
    // the closed form; the ring, whose n-step pipeline hides its fill, is within 0.2 % of its own.
    CHECK(sharp >= closed * 0.999);
    CHECK(sharp <= closed * 1.08);
    CHECK(ring_s >= 1.5 * closed * 0.999);
    CHECK(ring_s <= 1.5 * closed * 1.01);
    CHECK(ring_s / sharp > 1.38);
    // Deterministic: the same plan on a fresh backend gives the same time to the picosecond.
    CHECK(run_seconds(
              spec, collnet_options(CollectiveAlgo::CollnetDirect, spec, 4, 1, bytes, 2, 512 << 10),
              f) == sharp);
  }
}

TEST_CASE("collnet cost model: NCCL picks CollNet for large all_reduces once SHARP is there") {
  NcclSystem s =
      nccl_system(64, 8, 8, Bandwidth::gbps(400), Bandwidth::gbps(3600), *gpu_preset("h100"));
  const NcclChannels without = nccl_channels(s, std::nullopt);
  CHECK(without.collnet_heads == 0);
  s.sharp = true;
  const NcclChannels with = nccl_channels(s, std::nullopt);
  CHECK(with.collnet_heads == 8);
  CHECK(with.collnet_nic_GBps > 0);
  const NcclCostInputs cost = nccl_cost_inputs(CollectiveOp::AllReduce, 64, 8, with);
  const int64_t big = int64_t{1} << 30;
  const double direct =
      nccl_predicted_time_us(CollectiveAlgo::CollnetDirect, NcclProtocol::Simple, cost, big);
  const double ring = nccl_predicted_time_us(CollectiveAlgo::Ring, NcclProtocol::Simple, cost, big);
  REQUIRE(direct > 0);
  // Direct's algorithm bandwidth: 0.5 x 8 heads x 2 x NIC x 0.85 (Hopper), capped by what the
  // NVLinks carry (2 x 7/8 of the buffer each way per GPU): here the cap binds.
  const double nic_bound = 0.5 * 8 * 2 * with.collnet_nic_GBps * 0.85;
  const double nvlink_bound = with.collnet_nvlink_GBps * 8 / 14;
  REQUIRE(with.collnet_nvlink_GBps > 0);
  CHECK(nvlink_bound < nic_bound);
  const double alg = std::min(nic_bound, nvlink_bound);
  CHECK(direct ==
        doctest::Approx(2 * (3.7 + 7 * 0.4) + 31.0 + static_cast<double>(big) / (1000 * alg))
            .epsilon(1e-9));
  CHECK(direct < ring);
  CHECK(is_collnet(nccl_choose(cost, big).algo));
  // LL and LL128 do not exist for CollNet.
  CHECK(nccl_predicted_time_us(CollectiveAlgo::CollnetChain, NcclProtocol::LL, cost, big) < 0);
  // One node: no CollNet.
  CHECK(nccl_predicted_time_us(CollectiveAlgo::CollnetDirect, NcclProtocol::Simple,
                               nccl_cost_inputs(CollectiveOp::AllReduce, 8, 8, with), big) < 0);
}

TEST_CASE("collnet cost model: reduce_scatter / all_gather on Direct with a NIC per GPU") {
  NcclSystem s =
      nccl_system(64, 8, 8, Bandwidth::gbps(400), Bandwidth::gbps(3600), *gpu_preset("h100"));
  s.sharp = true;
  const NcclChannels with = nccl_channels(s, std::nullopt);
  REQUIRE(with.collnet_heads == 8);
  const int64_t big = int64_t{1} << 30;
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    CAPTURE(static_cast<int>(op));
    const NcclCostInputs cost = nccl_cost_inputs(op, 64, 8, with);
    const double direct =
        nccl_predicted_time_us(CollectiveAlgo::CollnetDirect, NcclProtocol::Simple, cost, big);
    // tuning.cc: ppn x min(bwIntra, 0.9 bwInter) = 8 x 0.9 x NIC, not converted to a bus
    // bandwidth, unless the NVLinks (7/8 of the array through each GPU) carry less.
    const double alg = std::min(8 * 0.9 * with.collnet_nic_GBps, with.collnet_nvlink_GBps * 8 / 7);
    CHECK(direct ==
          doctest::Approx(2 * (3.7 + 7 * 0.4) + 31.0 + static_cast<double>(big) / (1000 * alg))
              .epsilon(1e-9));
    CHECK(nccl_predicted_time_us(CollectiveAlgo::CollnetChain, NcclProtocol::Simple, cost, big) <
          0);
    // At 1 MiB the 64-rank ring's 63 steps cost more than CollNet's two tree hops.
    CHECK(nccl_choose(cost, 1 << 20).algo == CollectiveAlgo::CollnetDirect);
  }
  // Fewer NICs than GPUs: NCCL turns CollNet off for these two.
  s.nics_per_node = 4;
  const NcclChannels four = nccl_channels(s, std::nullopt);
  REQUIRE(four.collnet_heads == 4);
  CHECK(nccl_predicted_time_us(CollectiveAlgo::CollnetDirect, NcclProtocol::Simple,
                               nccl_cost_inputs(CollectiveOp::ReduceScatter, 64, 8, four),
                               big) < 0);
}

TEST_CASE("collnet chunk: NCCL's halving rule") {
  // Direct, 8 channels x 8 heads: 512 KiB from 64 x 64 x 512 KiB = 2 GiB up.
  CHECK(nccl_collnet_chunk_bytes(true, int64_t{2} << 30, 8, 8, 8) == 512 << 10);
  CHECK(nccl_collnet_chunk_bytes(true, int64_t{1} << 30, 8, 8, 8) == 256 << 10);
  CHECK(nccl_collnet_chunk_bytes(true, 1 << 20, 8, 8, 8) == 32 << 10);
  // Chain: from 256 KiB.
  CHECK(nccl_collnet_chunk_bytes(false, int64_t{1} << 30, 16, 8, 8) == 128 << 10);
}

namespace {

// The SHARP fabric of 4 hosts (2 leaves) with NVLink SHARP in every host's NVSwitch, `nics` NICs
// per host of `gpus` GPUs.
net::NetworkSpec nvls_sharp_fabric(uint32_t gpus, uint32_t nics) {
  topo::FabricParams p = sharp_fabric(2, 2, gpus);
  p.host.nics = nics;
  p.spine_leaf.uplinks_per_spine = nics;
  p.host.nvls = true;
  return topo::build_fabric(p);
}

PlanOptions nvls_sharp_options(const net::NetworkSpec& spec, uint32_t gpus, uint32_t nics,
                               int64_t bytes, uint32_t channels, int64_t chunk) {
  const uint32_t n = 4 * gpus;
  PlanOptions o = collective_fixtures::plan_options(CollectiveOp::AllReduce, CollectiveAlgo::Nvls,
                                                    n, bytes, channels);
  o.gpus_per_host = gpus;
  o.nics_per_host = nics;
  o.chunk_bytes = chunk;
  o.collnet_trees = net::rail_aggregation_trees(spec, identity(n), gpus, nics);
  return o;
}

}  // namespace

TEST_CASE("nvls across hosts: plans verify; each head's NIC carries S / heads each way") {
  struct Shape {
    uint32_t gpus;
    uint32_t nics;
  };
  const int64_t bytes = (int64_t{3} << 20) + 3 * 4096 + 7;  // not a multiple of anything
  for (const Shape sh : {Shape{2, 2}, Shape{4, 4}, Shape{8, 8}, Shape{8, 4}}) {
    const net::NetworkSpec spec = nvls_sharp_fabric(sh.gpus, sh.nics);
    const uint32_t n = 4 * sh.gpus;
    for (const uint32_t channels : {1u, 3u}) {
      CAPTURE(sh.gpus);
      CAPTURE(sh.nics);
      CAPTURE(channels);
      const CollectivePlan plan =
          build_plan(nvls_sharp_options(spec, sh.gpus, sh.nics, bytes, channels, 64 << 10));
      const PlanCheck check = verify_plan(plan);
      CHECK_MESSAGE(check.ok, check.error);
      // The 4 hosts' NVSwitches first, then the SHARP switches.
      CHECK(plan.engines == 4 + plan.fabric_engines.size());
      CHECK(!plan.fabric_engines.empty());
      // Bytes between each GPU and the fabric's engines (its NIC's traffic).
      const uint32_t first_fabric = n + 4;
      std::vector<int64_t> up(n, 0), down(n, 0);
      for (const PlanStep& s : plan.steps) {
        if (s.kind != PlanStep::Kind::Transfer) continue;
        if (s.src < n && s.dst >= first_fabric) up[s.src] += s.bytes;
        if (s.dst < n && s.src >= first_fabric) down[s.dst] += s.bytes;
      }
      for (uint32_t v = 0; v < 4; ++v) {
        int64_t host_up = 0;
        for (uint32_t l = 0; l < sh.gpus; ++l) {
          const uint32_t r = v * sh.gpus + l;
          // Heads: the first GPU of each NIC (GPU l uses NIC floor(l nics / gpus)).
          const bool head = (l * sh.nics) % sh.gpus == 0;
          CAPTURE(r);
          if (!head) {
            CHECK(up[r] == 0);
            CHECK(down[r] == 0);
            continue;
          }
          CHECK(up[r] == down[r]);
          // S / heads, up to the rounding of slices within a round.
          CHECK(static_cast<double>(up[r]) ==
                doctest::Approx(static_cast<double>(bytes) / sh.nics).epsilon(0.001));
          host_up += up[r];
        }
        CHECK(host_up == bytes);  // every byte of the host's sum goes up once
      }
    }
  }
  // Refused: no SHARP trees (NCCL runs NVLS-tree then), reduce_scatter / all_gather with fewer
  // NICs than GPUs (NCCL: 1:1 GPU:NIC), hosts with fewer than two heads.
  const net::NetworkSpec spec = nvls_sharp_fabric(2, 2);
  PlanOptions o = nvls_sharp_options(spec, 2, 2, 1 << 20, 1, 0);
  o.collnet_trees.clear();
  CHECK_THROWS_WITH_AS(build_plan(o), doctest::Contains("SHARP"), std::invalid_argument);
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    o = nvls_sharp_options(spec, 2, 2, 1 << 20, 1, 0);
    o.op = op;
    o.collnet_trees.clear();
    CHECK_THROWS_WITH_AS(build_plan(o), doctest::Contains("SHARP"), std::invalid_argument);
    const net::NetworkSpec half = nvls_sharp_fabric(4, 2);
    o = nvls_sharp_options(half, 4, 2, 1 << 20, 1, 0);
    o.op = op;
    CHECK_THROWS_WITH_AS(build_plan(o), doctest::Contains("1:1 GPU:NIC"), std::invalid_argument);
  }
  o = nvls_sharp_options(spec, 2, 2, 1 << 20, 1, 0);
  o.nics_per_host = 1;
  CHECK_THROWS_WITH_AS(build_plan(o), doctest::Contains("two or more GPUs with a NIC"),
                       std::invalid_argument);
}

TEST_CASE("nvls reduce_scatter / all_gather across hosts: plans verify; NVSwitch and NIC bytes") {
  // Per GPU: S into its NVSwitch and S / n back (reduce_scatter), or S / g in and S out
  // (all_gather: a head's rail in, the multicast of the whole array out); per head h (GPU h, NIC
  // h): its host's S / g up and its own shard S / n down (reduce_scatter), or the reverse.
  const int64_t bytes = (int64_t{3} << 20) + 3 * 4096 + 7;  // not a multiple of anything
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    for (const uint32_t g : {2u, 4u, 8u}) {
      const net::NetworkSpec spec = nvls_sharp_fabric(g, g);
      const uint32_t n = 4 * g;
      for (const uint32_t channels : {1u, 3u}) {
        CAPTURE(static_cast<int>(op));
        CAPTURE(g);
        CAPTURE(channels);
        PlanOptions o = nvls_sharp_options(spec, g, g, bytes, channels, 64 << 10);
        o.op = op;
        const CollectivePlan plan = build_plan(o);
        const PlanCheck check = verify_plan(plan);
        CHECK_MESSAGE(check.ok, check.error);
        CHECK(plan.engines == 4 + plan.fabric_engines.size());
        int64_t total = 0;
        for (const int64_t c : plan.chunk_bytes) total += c;
        CHECK(total == bytes);
        const uint32_t first_fabric = n + 4;
        std::vector<int64_t> to_switch(n, 0), from_switch(n, 0), up(n, 0), down(n, 0);
        for (const PlanStep& st : plan.steps) {
          if (st.kind != PlanStep::Kind::Transfer) continue;
          CHECK(!(st.src < n && st.dst < n));  // no GPU-to-GPU copies: all through the switch
          if (st.src < n && st.dst >= n && st.dst < first_fabric) {
            CHECK(st.dst == n + st.src / g);  // a GPU's own host's NVSwitch
            to_switch[st.src] += st.bytes;
          }
          if (st.dst < n && st.src >= n && st.src < first_fabric) from_switch[st.dst] += st.bytes;
          if (st.src < n && st.dst >= first_fabric) up[st.src] += st.bytes;
          if (st.dst < n && st.src >= first_fabric) down[st.dst] += st.bytes;
        }
        const double s = static_cast<double>(bytes);
        const bool rs = op == CollectiveOp::ReduceScatter;
        for (uint32_t r = 0; r < n; ++r) {
          CAPTURE(r);
          const double shard = s / n;
          const double rail = s / g;
          CHECK(static_cast<double>(to_switch[r]) == doctest::Approx(rs ? s : rail).epsilon(1e-3));
          CHECK(static_cast<double>(from_switch[r]) ==
                doctest::Approx(rs ? rail : s).epsilon(1e-3));
          CHECK(static_cast<double>(up[r]) == doctest::Approx(rs ? rail : shard).epsilon(1e-3));
          CHECK(static_cast<double>(down[r]) == doctest::Approx(rs ? shard : rail).epsilon(1e-3));
        }
      }
    }
  }
}

TEST_CASE("nvls reduce_scatter / all_gather across hosts run: S / g through each NIC") {
  // 4 hosts of 2 GPUs and 2 NICs at 400 Gb/s, NVLink at 3.6 Tb/s: NIC-bound. Each head sends its
  // host's sum of its rail (S / 2) up and gets its shard back (reduce_scatter), or the reverse, so
  // the time is S / 2 over the payload rate plus the pipeline's fill.
  const int64_t bytes = int64_t{32} << 20;
  const net::NetworkSpec spec = nvls_sharp_fabric(2, 2);
  const double payload_Bps = 400e9 / 8 * 4096.0 / (4096.0 + 64.0);
  const double closed = static_cast<double>(bytes) / 2 / payload_Bps;
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    std::vector<double> times;
    for (const Fidelity f : {Fidelity::Analytic, Fidelity::Flow, Fidelity::Packet}) {
      CAPTURE(static_cast<int>(op));
      CAPTURE(static_cast<int>(f));
      PlanOptions o = nvls_sharp_options(spec, 2, 2, bytes, 2, 128 << 10);
      o.op = op;
      const double t = run_seconds(spec, o, f);
      MESSAGE("nvls + sharp " << to_string(op) << " 4 x 2 GPUs, 32 MiB: " << t * 1e3
                              << " ms, closed form " << closed * 1e3 << " ms");
      CHECK(t >= closed * 0.999);
      CHECK(t <= closed * 1.10);
      CHECK(run_seconds(spec, o, f) == t);  // deterministic
      times.push_back(t);
    }
    CHECK(times[1] == doctest::Approx(times[2]).epsilon(0.05));
    CHECK(times[0] <= times[2] * 1.001);
  }
}

TEST_CASE("nvls across hosts run: S / heads once up and down each NIC; fidelities agree") {
  // 4 hosts of 2 GPUs and 2 NICs at 400 Gb/s, NVLink at 3.6 Tb/s: NIC-bound. Each head sends its
  // host's half of the buffer up its SHARP tree and receives the total back, so the time is
  // S / 2 over the payload rate plus the pipeline's fill; a ring sends at least
  // 2 (n - 1) / n S / 2 = 0.875 S through each NIC.
  const int64_t bytes = int64_t{32} << 20;
  const net::NetworkSpec spec = nvls_sharp_fabric(2, 2);
  const double payload_Bps = 400e9 / 8 * 4096.0 / (4096.0 + 64.0);
  const double closed = static_cast<double>(bytes) / 2 / payload_Bps;
  std::vector<double> times;
  for (const Fidelity f : {Fidelity::Analytic, Fidelity::Flow, Fidelity::Packet}) {
    CAPTURE(static_cast<int>(f));
    const double t = run_seconds(spec, nvls_sharp_options(spec, 2, 2, bytes, 2, 128 << 10), f);
    PlanOptions ring = collective_fixtures::plan_options(CollectiveOp::AllReduce,
                                                         CollectiveAlgo::Ring, 8, bytes, 2);
    ring.gpus_per_host = 2;
    ring.nics_per_host = 2;
    ring.chunk_bytes = 512 << 10;
    const double ring_s = run_seconds(spec, ring, f);
    MESSAGE("nvls + sharp 4 x 2 GPUs, 32 MiB: " << t * 1e3 << " ms, ring " << ring_s * 1e3
                                                << " ms, closed form " << closed * 1e3 << " ms");
    // Measured: analytic +3.6 %, flow +8.8 %, packet +7.0 % (the fill of 32 rounds per channel).
    CHECK(t >= closed * 0.999);
    CHECK(t <= closed * 1.10);
    CHECK(ring_s > 1.5 * t);
    times.push_back(t);
  }
  // Flow and analytic within 5 % of packet on the idle fabric.
  CHECK(times[1] == doctest::Approx(times[2]).epsilon(0.05));
  CHECK(times[0] <= times[2] * 1.001);
}

TEST_CASE("nvls across hosts cost model: only with SHARP, NVLS's NET latency once") {
  NcclSystem s =
      nccl_system(64, 8, 8, Bandwidth::gbps(400), Bandwidth::gbps(3600), *gpu_preset("h100"));
  const int64_t big = int64_t{1} << 30;
  const NcclChannels without = nccl_channels(s, std::nullopt);
  CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple,
                               nccl_cost_inputs(CollectiveOp::AllReduce, 64, 8, without), big) < 0);
  s.sharp = true;
  const NcclChannels with = nccl_channels(s, std::nullopt);
  const NcclCostInputs cost = nccl_cost_inputs(CollectiveOp::AllReduce, 64, 8, with);
  REQUIRE(with.nvls_heads == 8);
  const double t = nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple, cost, big);
  REQUIRE(t > 0);
  // tuning.cc: per channel min(NVLS intra x 2, bwInter); latency NVLink 25 + NET 18 us.
  const double h = 8;
  const double per_channel =
      std::min(with.nvls_bw_GBps * with.nvls_efficiency * (h - 1) / h * 2, with.nvls_bw_GBps);
  const double alg = h * per_channel * 64.0 / (2.0 * 63.0);
  CHECK(t == doctest::Approx(25.0 + 18.0 + static_cast<double>(big) / (1000 * alg)).epsilon(1e-9));
  // reduce_scatter / all_gather across nodes: per channel min(NVLS intra x (ppn - 1) / ppn,
  // bwInter), not converted to a bus bandwidth; the same latency. Only with a NIC per GPU.
  const double shards_per_channel = std::min(
      with.nvls_bw_GBps * with.nvls_efficiency * (h - 1) / h * 7.0 / 8.0, with.nvls_bw_GBps);
  for (const CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
    CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple,
                                 nccl_cost_inputs(op, 64, 8, with), big) ==
          doctest::Approx(25.0 + 18.0 + static_cast<double>(big) / (1000 * h * shards_per_channel))
              .epsilon(1e-9));
    CHECK(nccl_predicted_time_us(CollectiveAlgo::Nvls, NcclProtocol::Simple,
                                 nccl_cost_inputs(op, 64, 8, without), big) < 0);
  }
  NcclSystem half = s;
  half.nics_per_node = 4;
  CHECK(nccl_predicted_time_us(
            CollectiveAlgo::Nvls, NcclProtocol::Simple,
            nccl_cost_inputs(CollectiveOp::ReduceScatter, 64, 8, nccl_channels(half, std::nullopt)),
            big) < 0);
}
