// NCCL's all_reduce trees (collective_plan_tree.cpp): per channel a chain through each node's GPUs
// and a binary tree over the nodes (ncclGetDtree's two trees on the two halves of the channels).
// Checked symbolically (verify_plan) and structurally against NCCL's rules.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_plan.hpp"

using namespace syncsim::models;

namespace {

PlanOptions tree_options(uint32_t ranks, uint32_t gpus, uint32_t nics, uint32_t channels,
                         int64_t bytes, int64_t chunk) {
  PlanOptions o = syncsim::collective_fixtures::plan_options(
      CollectiveOp::AllReduce, CollectiveAlgo::Tree, ranks, bytes, channels);
  o.gpus_per_host = gpus;
  o.nics_per_host = nics;
  o.chunk_bytes = chunk;
  o.connection_depth = 1;
  return o;
}

}  // namespace

TEST_CASE("NCCL tree all_reduce: data-flow correct for node and GPU shapes, channels, chunks") {
  for (uint32_t gpus : {1u, 2u, 3u, 8u}) {
    for (uint32_t nodes : {1u, 2u, 3u, 5u, 8u}) {
      for (uint32_t channels : {1u, 2u, 3u, 16u}) {
        for (int64_t chunk : {int64_t{0}, int64_t{700}}) {
          const uint32_t n = gpus * nodes - (gpus > 2 && nodes > 1 ? 1 : 0);  // a partial node
          if (n < 2) continue;
          CAPTURE(gpus);
          CAPTURE(nodes);
          CAPTURE(channels);
          CAPTURE(chunk);
          const CollectivePlan plan =
              build_plan(tree_options(n, gpus, gpus, channels, 10'007 + n, chunk));
          const PlanCheck check = verify_plan(plan);
          CAPTURE(check.error);
          CHECK(check.ok);
        }
      }
    }
  }
}

TEST_CASE("NCCL tree all_reduce: only channel heads on the channel's rail cross nodes") {
  // 8 nodes x 8 GPUs x 8 NICs, 16 channels: channel c's node heads are the GPU on rail c mod 8;
  // every edge inside a node is between neighbours of the chain, every edge across nodes joins
  // two heads on the same rail, and per channel a node talks to at most 3 other nodes.
  const uint32_t g = 8, nodes = 8, n = g * nodes, channels = 16;
  const CollectivePlan plan = build_plan(tree_options(n, g, 8, channels, int64_t{64} << 20, 0));
  REQUIRE(verify_plan(plan).ok);
  std::map<uint32_t, std::map<uint32_t, std::set<uint32_t>>> peers;  // channel -> node -> nodes
  std::size_t transfers = 0;
  for (const PlanStep& s : plan.steps) {
    if (s.kind != PlanStep::Kind::Transfer) continue;
    ++transfers;
    const uint32_t src_node = s.src / g, dst_node = s.dst / g;
    if (src_node == dst_node) continue;
    CAPTURE(s.channel);
    CHECK(s.src % g == s.channel % 8);
    CHECK(s.dst % g == s.channel % 8);
    peers[s.channel][src_node].insert(dst_node);
  }
  // One piece per channel (no chunking): up and down every one of the n - 1 edges.
  CHECK(transfers == std::size_t{channels} * 2 * (n - 1));
  CHECK(plan.transfer_count() == transfers);
  for (const auto& [channel, by_node] : peers) {
    for (const auto& [node, others] : by_node) CHECK(others.size() <= 3);
  }
  // The two trees: channels 0-7 follow ncclGetBtree over 8 nodes (0-4, 4-2, 4-6, 2-1, 2-3, 6-5,
  // 6-7), channels 8-15 its mirror (7-3, 3-5, 3-1, 5-6, 5-4, 1-2, 1-0).
  const std::set<uint32_t> first_tree_root_peers = peers[0][0];
  CHECK(first_tree_root_peers == std::set<uint32_t>{4});
  CHECK(peers[0][4] == std::set<uint32_t>{0, 2, 6});
  CHECK(peers[8][7] == std::set<uint32_t>{3});
  CHECK(peers[8][3] == std::set<uint32_t>{7, 5, 1});
}

TEST_CASE("NCCL tree all_reduce: plan size estimate is exact when channels divide the bytes") {
  for (uint32_t channels : {1u, 4u, 16u}) {
    const int64_t bytes = int64_t{channels} * 3'000'000;
    const CollectivePlan plan = build_plan(tree_options(32, 8, 8, channels, bytes, 1 << 20));
    const PlanSizeEstimate e = plan_size_estimate(CollectiveAlgo::Tree, 32,
                                                  static_cast<double>(bytes), 1 << 20, channels, 8);
    CHECK(e.transfers == doctest::Approx(static_cast<double>(plan.transfer_count())));
    CHECK(e.steps == doctest::Approx(static_cast<double>(plan.steps.size())));
  }
}
