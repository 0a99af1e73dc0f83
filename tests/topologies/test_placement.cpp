// Rank-to-GPU placement policies: permutations with the promised leaf and neighbour properties.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "topologies/fabric_builder.hpp"
#include "topologies/placement.hpp"

using namespace syncsim;
using topo::Placement;

namespace {

net::NetworkSpec spine_leaf(uint32_t leaves, uint32_t hosts_per_leaf, uint32_t gpus) {
  topo::FabricParams p;
  p.spine_leaf.leaves = leaves;
  p.spine_leaf.hosts_per_leaf = hosts_per_leaf;
  p.spine_leaf.spines = 2;
  p.host.gpus = gpus;
  p.host.nics = gpus;
  return topo::build_fabric(p);
}

net::NetworkSpec fat_tree() {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::FatTree;
  p.fat_tree = topo::FatTreeParams{.k = std::nullopt,
                                   .pods = 3,
                                   .leaves_per_pod = 2,
                                   .spines_per_pod = 2,
                                   .hosts_per_leaf = 2,
                                   .cores = 2};
  p.host.gpus = 4;
  p.host.nics = 4;
  return topo::build_fabric(p);
}

net::NetworkSpec rail(uint32_t hosts) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::RailOptimized;
  p.rail.groups = 1;
  p.rail.hosts_per_group = hosts;
  p.rail.spines = 2;
  p.host.gpus = 4;
  p.host.nics = 4;
  return topo::build_fabric(p);
}

std::size_t leaves_used(const net::NetworkSpec& spec, const std::vector<uint32_t>& placement) {
  const auto leaf = topo::gpu_leaves(spec);
  std::set<net::NodeId> used;
  for (uint32_t g : placement) used.insert(leaf[g]);
  return used.size();
}

bool is_injection(const std::vector<uint32_t>& p, std::size_t gpus) {
  std::set<uint32_t> seen(p.begin(), p.end());
  return seen.size() == p.size() &&
         std::all_of(p.begin(), p.end(), [&](uint32_t g) { return g < gpus; });
}

}  // namespace

TEST_CASE("placement: every policy is a permutation of distinct GPUs") {
  for (const auto& spec : {spine_leaf(4, 3, 2), fat_tree(), rail(4)}) {
    const auto gpus = static_cast<uint32_t>(spec.gpus.size());
    for (Placement p :
         {Placement::Packed, Placement::Random, Placement::Spread, Placement::TopologyAware}) {
      CAPTURE(topo::to_string(p));
      for (uint32_t ranks : {1u, 5u, gpus / 2, gpus}) {
        const auto placement = topo::place_ranks(spec, ranks, p, 7);
        CHECK(placement.size() == ranks);
        CHECK(is_injection(placement, gpus));
      }
    }
  }
  CHECK_THROWS_AS(topo::place_ranks(spine_leaf(2, 2, 1), 5, Placement::Packed, 1),
                  std::invalid_argument);
  CHECK_THROWS_AS(topo::parse_placement("clustered"), std::invalid_argument);
  CHECK(topo::parse_placement("topology_aware") == Placement::TopologyAware);
}

TEST_CASE("placement: packed uses the fewest leaves, spread the most") {
  const auto spec = spine_leaf(4, 3, 2);  // 6 GPUs per leaf, 24 GPUs
  for (uint32_t ranks : {1u, 4u, 6u, 7u, 13u, 24u}) {
    CAPTURE(ranks);
    CHECK(leaves_used(spec, topo::place_ranks(spec, ranks, Placement::Packed, 1)) ==
          (ranks + 5) / 6);
    CHECK(leaves_used(spec, topo::place_ranks(spec, ranks, Placement::Spread, 1)) ==
          std::min(ranks, 4u));
  }
  // Spread interleaves pods: the first three ranks of the fat-tree land in three different pods.
  const auto ft = fat_tree();
  const auto spread = topo::place_ranks(ft, 3, Placement::Spread, 1);
  const auto leaf = topo::gpu_leaves(ft);
  std::set<std::string> pods;
  for (uint32_t g : spread) pods.insert(ft.nodes[leaf[g]].name.substr(0, 4));
  CHECK(pods.size() == 3);
}

TEST_CASE("placement: random is determined by the seed") {
  const auto spec = fat_tree();
  const auto gpus = static_cast<uint32_t>(spec.gpus.size());
  const auto a = topo::place_ranks(spec, gpus, Placement::Random, 42);
  CHECK(a == topo::place_ranks(spec, gpus, Placement::Random, 42));
  CHECK(a != topo::place_ranks(spec, gpus, Placement::Random, 43));
  CHECK(a != topo::place_ranks(spec, gpus, Placement::Packed, 42));
}

TEST_CASE(
    "placement: topology_aware keeps host-to-host ring hops under one leaf (rail-optimized)") {
  const auto spec = rail(6);  // 4 rail leaves, NIC g of every host on rail leaf g
  const auto leaf = topo::gpu_leaves(spec);
  auto crossing_hops = [&](const std::vector<uint32_t>& p) {
    std::size_t crossings = 0;
    for (std::size_t r = 0; r < p.size(); ++r) {
      const uint32_t a = p[r], b = p[(r + 1) % p.size()];
      if (spec.gpus[a].host != spec.gpus[b].host && leaf[a] != leaf[b]) ++crossings;
    }
    return crossings;
  };
  const auto gpus = static_cast<uint32_t>(spec.gpus.size());
  CHECK(crossing_hops(topo::place_ranks(spec, gpus, Placement::TopologyAware, 1)) == 0);
  CHECK(crossing_hops(topo::place_ranks(spec, gpus, Placement::Packed, 1)) == 6);  // GPU 3 -> GPU 0
}

TEST_CASE("place_job: data parallelism follows the policy, model parallelism the first GPUs") {
  const auto spec = spine_leaf(2, 2, 4);  // 16 GPUs
  // Pure data parallelism: place_ranks with the policy; 0 replicas = every GPU.
  const auto dp = topo::place_job(spec, 1, 6, Placement::Spread, 3);
  CHECK(dp.rank_to_gpu == topo::place_ranks(spec, 6, Placement::Spread, 3));
  CHECK_FALSE(dp.policy_ignored);
  CHECK(topo::place_job(spec, 1, 0, Placement::Random, 3).rank_to_gpu ==
        topo::place_ranks(spec, 16, Placement::Random, 3));
  // Model parallelism of 3: 0 replicas = as many whole replicas as fit (5 x 3 = 15 ranks), on GPUs
  // 0..14 in order whatever the policy, and a policy other than packed is reported as ignored.
  const auto mp = topo::place_job(spec, 3, 0, Placement::Spread, 3);
  REQUIRE(mp.rank_to_gpu.size() == 15);
  for (uint32_t r = 0; r < 15; ++r) CHECK(mp.rank_to_gpu[r] == r);
  CHECK(mp.policy_ignored);
  const auto packed = topo::place_job(spec, 4, 2, Placement::Packed, 3);
  CHECK(packed.rank_to_gpu.size() == 8);
  CHECK_FALSE(packed.policy_ignored);
  CHECK_THROWS_AS(topo::place_job(spec, 1, 17, Placement::Packed, 1), std::invalid_argument);
}
