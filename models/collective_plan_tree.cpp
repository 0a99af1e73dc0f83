// Double binary tree plans (two complementary trees, half the buffer each): all_reduce (reduce up,
// broadcast down), broadcast, reduce.
#include "models/collective_plan_builder.hpp"

#include <vector>

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

}  // namespace

void build_tree(CollectivePlan& plan, const PlanOptions& o) {
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
