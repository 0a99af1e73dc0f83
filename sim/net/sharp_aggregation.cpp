// SHARP aggregation trees over a fabric's switches (sharp_aggregation.hpp).
#include "sim/net/sharp_aggregation.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sim/net/network_spec.hpp"

namespace syncsim::net {

namespace {

// Tiers a tree climbs: a switch joins a parent of a higher tier.
int tier(SwitchRole role) {
  switch (role) {
    case SwitchRole::Leaf:
      return 1;
    case SwitchRole::Spine:
      return 2;
    case SwitchRole::Core:
      return 3;
    case SwitchRole::None:
    case SwitchRole::NvSwitch:
      break;
  }
  return 0;
}

}  // namespace

FieldErrors SharpParams::check() const {
  FieldErrors errors;
  if (outstanding_operations < 1 || outstanding_operations > 1024) {
    errors.push_back({"outstanding_operations", "expected 1..1024 reductions in flight",
                      std::to_string(outstanding_operations)});
  }
  return errors;
}

AggregationTree aggregation_tree(const NetworkSpec& spec, std::span<const uint32_t> nics,
                                 uint32_t tree_index) {
  if (spec.sharp_engines.empty()) {
    throw std::invalid_argument(
        "collnet needs SHARP switches (fabric.infiniband.sharp.enabled on an InfiniBand fabric)");
  }
  if (nics.empty()) throw std::invalid_argument("an aggregation tree needs a participant");
  std::vector<uint32_t> engine_of(spec.nodes.size(), AggregationTree::kNoEngine);
  for (uint32_t e = 0; e < spec.sharp_engine_switch.size(); ++e) {
    engine_of[spec.sharp_engine_switch[e]] = e;
  }
  // Upper-tier switch neighbours of every switch that has an engine, each once.
  std::vector<std::vector<NodeId>> up(spec.nodes.size());
  for (const LinkSpec& l : spec.links) {
    for (const auto& [from, to] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      if (engine_of[from] == AggregationTree::kNoEngine ||
          engine_of[to] == AggregationTree::kNoEngine) {
        continue;
      }
      if (tier(spec.nodes[to].role) > tier(spec.nodes[from].role) &&
          std::find(up[from].begin(), up[from].end(), to) == up[from].end()) {
        up[from].push_back(to);
      }
    }
  }
  AggregationTree tree;
  std::vector<NodeId> level;
  for (const uint32_t nic : nics) {
    const NodeId sw = nic < spec.attachment_of_nic.size() ? spec.attachment_of_nic[nic] : kNoNode;
    if (sw == kNoNode || engine_of[sw] == AggregationTree::kNoEngine) {
      throw std::invalid_argument("NIC " + spec.nodes.at(nic).name +
                                  " hangs off no switch with a SHARP engine");
    }
    tree.participant_engine.push_back(engine_of[sw]);
    level.push_back(sw);
  }
  std::sort(level.begin(), level.end());
  level.erase(std::unique(level.begin(), level.end()), level.end());
  std::vector<uint32_t> reach(spec.nodes.size(), 0);
  while (level.size() > 1) {
    std::vector<NodeId> next;
    std::vector<NodeId> left = level;
    while (!left.empty()) {
      // The upper-tier switch that joins most of what is left; among equals, the tree's own.
      std::vector<NodeId> candidates;
      uint32_t best = 0;
      for (const NodeId u : left) {
        for (const NodeId p : up[u]) {
          if (++reach[p] > best) best = reach[p];
        }
      }
      for (const NodeId u : left) {
        for (const NodeId p : up[u]) {
          if (reach[p] == best &&
              std::find(candidates.begin(), candidates.end(), p) == candidates.end()) {
            candidates.push_back(p);
          }
        }
      }
      for (const NodeId u : left) {
        for (const NodeId p : up[u]) reach[p] = 0;
      }
      if (best == 0) {
        throw std::invalid_argument("the switches of " + spec.nodes[left.front()].name +
                                    " and the others meet under no common SHARP switch");
      }
      std::sort(candidates.begin(), candidates.end());
      const NodeId parent = candidates[tree_index % candidates.size()];
      std::vector<NodeId> rest;
      for (const NodeId u : left) {
        if (std::find(up[u].begin(), up[u].end(), parent) != up[u].end()) {
          tree.edges.push_back({engine_of[u], engine_of[parent]});
        } else {
          rest.push_back(u);
        }
      }
      next.push_back(parent);
      left = std::move(rest);
    }
    std::sort(next.begin(), next.end());
    level = std::move(next);
  }
  tree.edges.push_back({engine_of[level.front()], AggregationTree::kNoEngine});
  return tree;
}

std::vector<AggregationTree> rail_aggregation_trees(const NetworkSpec& spec,
                                                    std::span<const uint32_t> gpus,
                                                    uint32_t gpus_per_host,
                                                    uint32_t nics_per_host) {
  const uint32_t g = std::max(1u, gpus_per_host);
  if (gpus.size() % g != 0) {
    throw std::invalid_argument(
        "aggregation trees join whole hosts: " + std::to_string(gpus.size()) +
        " GPUs on hosts of " + std::to_string(g));
  }
  const uint32_t nics = std::min(nics_per_host == 0 ? g : nics_per_host, g);
  const std::size_t nodes = gpus.size() / g;
  std::vector<AggregationTree> trees;
  std::vector<uint32_t> members(nodes);
  for (uint32_t i = 0; i < nics; ++i) {
    const auto local = static_cast<uint32_t>((uint64_t{i} * g + nics - 1) / nics);
    for (std::size_t v = 0; v < nodes; ++v) members[v] = spec.gpus.at(gpus[v * g + local]).nic;
    trees.push_back(aggregation_tree(spec, members, i));
  }
  return trees;
}

RailTrees usable_rail_trees(const NetworkSpec& spec, std::span<const uint32_t> gpus,
                            uint32_t gpus_per_host, uint32_t nics_per_host) {
  RailTrees out;
  if (spec.sharp_engines.empty()) {
    out.unavailable = "needs SHARP switches (fabric.infiniband.sharp.enabled)";
    return out;
  }
  try {
    out.trees = rail_aggregation_trees(spec, gpus, gpus_per_host, nics_per_host);
  } catch (const std::invalid_argument& e) {
    out.unavailable = std::string("cannot run here: ") + e.what();
    return out;
  }
  const TreeLoad load = aggregation_tree_load(spec, out.trees);
  if (load.over_engine != AggregationTree::kNoEngine) {
    out.unavailable =
        "has no SHARP resources: " + std::to_string(load.most_trees) + " rail trees meet in " +
        spec.nodes[spec.sharp_engine_switch[load.over_engine]].name + ", which serves " +
        std::to_string(load.over_limit) + " (fabric.infiniband.sharp.trees_per_switch)";
    out.trees.clear();
  }
  return out;
}

TreeLoad aggregation_tree_load(const NetworkSpec& spec, std::span<const AggregationTree> trees) {
  std::vector<uint32_t> count(spec.sharp_engines.size(), 0);
  for (const AggregationTree& t : trees) {
    for (const AggregationTree::Edge& e : t.edges) ++count[e.engine];
  }
  // A switch's ports (for the per-port rule): its links other than its engine's.
  std::vector<uint32_t> ports(spec.nodes.size(), 0);
  for (const LinkSpec& l : spec.links) {
    ++ports[l.a];
    ++ports[l.b];
  }
  TreeLoad load;
  for (uint32_t e = 0; e < count.size(); ++e) {
    load.most_trees = std::max(load.most_trees, count[e]);
    const uint32_t limit = spec.sharp.trees_per_switch > 0 ? spec.sharp.trees_per_switch
                                                           : ports[spec.sharp_engine_switch[e]] - 1;
    if (count[e] > limit && load.over_engine == AggregationTree::kNoEngine) {
      load.over_engine = e;
      load.over_limit = limit;
    }
  }
  return load;
}

}  // namespace syncsim::net
