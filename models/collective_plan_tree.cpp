// Tree plans. all_reduce as NCCL runs it (src/graph/trees.cc, connect.cc, device/all_reduce.h): per
// channel, a chain through each node's GPUs and a binary tree over the nodes, half of the channels
// on NCCL's first tree and half on its second (mirrored for an even node count, shifted for an
// odd one), reduce up the chains and the tree, then broadcast back down. Broadcast and reduce: a
// rank-level double binary tree from the root (two complementary trees, half the buffer each).
#include "models/collective_plan_builder.hpp"

#include <vector>

#include "sim/core/huge_pages.hpp"

namespace syncsim::models::plan_detail {

namespace {

// A binary tree over `order`: order[0] is the root with one child, the in-order tree of the rest
// (middle element as subtree root). parent[rank] = parent rank or kNone.
struct Tree {
  std::vector<uint32_t> parent;
  std::vector<std::vector<uint32_t>> children;
  std::vector<uint32_t> preorder;
};

uint32_t build_inorder(Tree& t, const std::vector<uint32_t>& order, std::size_t lo, std::size_t hi,
                       uint32_t parent) {
  if (lo >= hi) return kNone;
  const std::size_t mid = lo + (hi - lo) / 2;
  const uint32_t node = order[mid];
  t.parent[node] = parent;
  t.preorder.push_back(node);
  if (parent != kNone) t.children[parent].push_back(node);
  build_inorder(t, order, lo, mid, node);
  build_inorder(t, order, mid + 1, hi, node);
  return node;
}

Tree make_tree(const std::vector<uint32_t>& order) {
  Tree t;
  const std::size_t n = order.size();
  t.parent.assign(n, kNone);
  t.children.assign(n, {});
  t.preorder.push_back(order[0]);
  build_inorder(t, order, 1, n, order[0]);
  return t;
}

// NCCL's all_reduce tree: every channel reduces its share of the buffer up each node's chain (its
// GPUs in order, starting at the GPU on the channel's NIC, which is the node's head and talks to
// the other nodes' heads) and up the node tree, then broadcasts it back down the same edges.
void build_nccl_allreduce_tree(CollectivePlan& plan, const PlanOptions& o) {
  const uint32_t n = o.ranks;
  const uint32_t g = o.gpus_per_host == 0 ? 1 : std::min(o.gpus_per_host, n);
  const uint32_t nodes = (n + g - 1) / g;
  const uint32_t rails = std::max(1u, std::min(o.nics_per_host == 0 ? g : o.nics_per_host, g));
  const uint32_t channels = o.channels;
  // Channels 0..C/2-1 run the first tree and the rest the second (NCCL: channel c and
  // c + nChannels share a search channel and take the two trees of ncclGetDtree).
  const uint32_t half = std::max(1u, channels / 2);
  const NodeTree trees[2] = {node_tree(nodes, 0), node_tree(nodes, 1)};
  const auto channel_bytes = split_bytes(o.bytes, channels);
  std::vector<std::vector<ChunkRange>> pieces(channels);
  for (uint32_t ch = 0; ch < channels; ++ch) {
    for (int64_t piece :
         split_bytes(channel_bytes[ch], pieces_for(channel_bytes[0], o.chunk_bytes))) {
      pieces[ch].push_back(ChunkRange{Builder::add_chunk(plan, piece), 1});
    }
  }
  // Per piece: n - 1 transfers up (each reducing, with its reduction) and n - 1 down. A transfer
  // has at most 3 dependencies, a reduction 2. Reserved up front in huge pages, as the ring
  // builder does: growing the arrays by doubling copied them and faulted in every page twice.
  std::size_t total_pieces = 0;
  for (const auto& p : pieces) total_pieces += p.size();
  const std::size_t max_steps = total_pieces * 3 * (std::size_t{n} - 1);
  reserve_huge(plan.steps, plan.steps.size() + max_steps);
  reserve_huge(plan.dep_offsets, plan.dep_offsets.size() + max_steps);
  reserve_huge(plan.dep_list, plan.dep_list.size() + 3 * max_steps);
  Builder b(plan, o.connection_depth);
  std::vector<uint32_t> chain;
  for (uint32_t ch = 0; ch < channels; ++ch) {
    const NodeTree& tr = trees[(ch / half) % 2];
    // The chain of node v for this channel: its local GPUs from the one on the channel's rail
    // (GPU l has NIC floor(l * rails / g)), cyclically.
    const uint32_t head_local = (ch % rails) * g / rails;
    auto chain_of = [&](uint32_t v) -> const std::vector<uint32_t>& {
      chain.clear();
      const uint32_t first = v * g;
      const uint32_t size = std::min(g, n - first);
      for (uint32_t i = 0; i < size; ++i) chain.push_back(first + (head_local % size + i) % size);
      return chain;
    };
    auto head_of = [&](uint32_t v) {
      const uint32_t size = std::min(g, n - v * g);
      return v * g + head_local % size;
    };
    for (const ChunkRange& piece : pieces[ch]) {
      for (uint32_t v : tr.children_first) {  // up: chain tail to head, then head to parent
        const std::vector<uint32_t>& c = chain_of(v);
        for (std::size_t i = c.size() - 1; i > 0; --i) b.transfer(c[i], c[i - 1], piece, ch, true);
        if (tr.parent[v] != kNone) b.transfer(head_of(v), head_of(tr.parent[v]), piece, ch, true);
      }
      for (auto it = tr.children_first.rbegin(); it != tr.children_first.rend(); ++it) {
        const uint32_t v = *it;  // down: parent first; head to child heads, then down the chain
        for (uint32_t child : tr.children[v]) {
          b.transfer(head_of(v), head_of(child), piece, ch, false);
        }
        const std::vector<uint32_t>& c = chain_of(v);
        for (std::size_t i = 0; i + 1 < c.size(); ++i) b.transfer(c[i], c[i + 1], piece, ch, false);
      }
    }
  }
}

}  // namespace

void build_tree(CollectivePlan& plan, const PlanOptions& o) {
  if (o.op == CollectiveOp::AllReduce) {
    build_nccl_allreduce_tree(plan, o);
    return;
  }
  const uint32_t n = o.ranks;
  const uint32_t root = o.op == CollectiveOp::AllReduce ? 0 : o.root;
  // Two complementary trees: the second shifts the in-order part by one position, so nodes that are
  // leaves in one tree tend to be interior in the other (NCCL shifts or mirrors similarly).
  std::vector<uint32_t> a{root}, bo{root};
  for (uint32_t i = 1; i < n; ++i) a.push_back((root + i) % n);
  for (uint32_t i = 1; i < n; ++i) bo.push_back((root + 1 + i % (n - 1)) % n);
  const Tree trees[2] = {make_tree(a), make_tree(bo)};
  const auto halves = split_bytes(o.bytes, 2);
  std::vector<std::vector<ChunkRange>> pieces(2);
  for (int t = 0; t < 2; ++t) {
    for (int64_t piece :
         split_bytes(halves[static_cast<std::size_t>(t)], pieces_for(halves[0], o.chunk_bytes))) {
      pieces[static_cast<std::size_t>(t)].push_back(ChunkRange{Builder::add_chunk(plan, piece), 1});
    }
  }
  Builder b(plan, o.connection_depth);
  const bool up = o.op != CollectiveOp::Broadcast;
  const bool down = o.op != CollectiveOp::Reduce;
  for (uint32_t t = 0; t < 2; ++t) {
    const Tree& tr = trees[t];
    for (const ChunkRange& piece : pieces[t]) {
      if (up) {  // reverse preorder visits children before parents
        for (auto it = tr.preorder.rbegin(); it != tr.preorder.rend(); ++it) {
          if (tr.parent[*it] != kNone) b.transfer(*it, tr.parent[*it], piece, t, true);
        }
      }
      if (down) {
        for (uint32_t node : tr.preorder) {
          for (uint32_t child : tr.children[node]) b.transfer(node, child, piece, t, false);
        }
      }
    }
  }
}

}  // namespace syncsim::models::plan_detail
