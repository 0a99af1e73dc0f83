// NCCL's double binary tree over nodes (src/graph/trees.cc ncclGetBtree / ncclGetDtree), shared by
// the tree and NVLS-tree plans.
#include <utility>
#include <vector>

#include "models/collective_plan_builder.hpp"

namespace syncsim::models::plan_detail {

namespace {

// NCCL's ncclGetBtree: the parent of `node` in a binary tree over `nodes` (kNone for the root,
// node 0). The tree is built from the binary representation: a node's parent clears its lowest
// set bit and sets the next one, falling back to clearing it when that leaves the range.
uint32_t btree_parent(uint32_t nodes, uint32_t node) {
  if (node == 0) return kNone;
  uint32_t bit = 1;
  while (bit < nodes && (bit & node) == 0) bit <<= 1;
  uint32_t up = (node ^ bit) | (bit << 1);
  if (up >= nodes) up = node ^ bit;
  return up;
}

// NCCL's ncclGetDtree, second tree: mirrored (even node counts) or shifted by one (odd).
uint32_t dtree_parent(uint32_t nodes, uint32_t node, uint32_t tree) {
  if (tree == 0) return btree_parent(nodes, node);
  if (nodes % 2 == 1) {
    const uint32_t up = btree_parent(nodes, (node + nodes - 1) % nodes);
    return up == kNone ? kNone : (up + 1) % nodes;
  }
  const uint32_t up = btree_parent(nodes, nodes - 1 - node);
  return up == kNone ? kNone : nodes - 1 - up;
}

}  // namespace

NodeTree node_tree(uint32_t nodes, uint32_t tree) {
  NodeTree t;
  t.parent.resize(nodes);
  t.children.assign(nodes, {});
  uint32_t root = 0;
  for (uint32_t v = 0; v < nodes; ++v) {
    t.parent[v] = dtree_parent(nodes, v, tree);
    if (t.parent[v] == kNone) {
      root = v;
    } else {
      t.children[t.parent[v]].push_back(v);
    }
  }
  // Iterative post-order from the root.
  std::vector<std::pair<uint32_t, std::size_t>> stack{{root, 0}};
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    if (next < t.children[v].size()) {
      const uint32_t child = t.children[v][next++];
      stack.emplace_back(child, 0);
    } else {
      t.children_first.push_back(v);
      stack.pop_back();
    }
  }
  return t;
}

}  // namespace syncsim::models::plan_detail
