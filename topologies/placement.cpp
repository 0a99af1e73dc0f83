#include "topologies/placement.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include "sim/core/rng.hpp"

namespace syncsim::topo {

namespace {
constexpr uint64_t kPlacementStream = 0x91ACE;  // RNG stream id of the random placement
}  // namespace

std::string_view to_string(Placement p) {
  switch (p) {
    case Placement::Packed:
      return "packed";
    case Placement::Random:
      return "random";
    case Placement::Spread:
      return "spread";
    case Placement::TopologyAware:
      return "topology_aware";
  }
  return "?";
}

Placement parse_placement(std::string_view text) {
  for (Placement p :
       {Placement::Packed, Placement::Random, Placement::Spread, Placement::TopologyAware}) {
    if (text == to_string(p)) return p;
  }
  throw std::invalid_argument(
      "expected a placement (packed, random, spread, topology_aware), got \"" + std::string(text) +
      "\"");
}

std::vector<net::NodeId> gpu_leaves(const net::NetworkSpec& spec) {
  std::vector<net::NodeId> leaf_of(spec.nodes.size(), net::kNoNode);
  for (const net::LinkSpec& l : spec.links) {
    const net::NodeSpec& a = spec.nodes[l.a];
    const net::NodeSpec& b = spec.nodes[l.b];
    if (a.kind == net::NodeKind::Nic && b.role == net::SwitchRole::Leaf) leaf_of[l.a] = l.b;
    if (b.kind == net::NodeKind::Nic && a.role == net::SwitchRole::Leaf) leaf_of[l.b] = l.a;
  }
  std::vector<net::NodeId> out(spec.gpus.size());
  for (std::size_t g = 0; g < spec.gpus.size(); ++g) out[g] = leaf_of[spec.gpus[g].nic];
  return out;
}

std::vector<uint32_t> place_ranks(const net::NetworkSpec& spec, uint32_t ranks, Placement policy,
                                  uint64_t seed) {
  const auto gpus = static_cast<uint32_t>(spec.gpus.size());
  if (ranks == 0 || ranks > gpus) {
    throw std::invalid_argument("placement of " + std::to_string(ranks) + " ranks on " +
                                std::to_string(gpus) + " GPUs");
  }
  std::vector<uint32_t> order(gpus);
  std::iota(order.begin(), order.end(), 0u);
  switch (policy) {
    case Placement::Packed:
      break;
    case Placement::Random: {
      RngStream rng(seed, kPlacementStream);
      for (uint32_t i = gpus - 1; i > 0; --i) {
        std::swap(order[i], order[static_cast<uint32_t>(rng.below(uint64_t{i} + 1))]);
      }
      break;
    }
    case Placement::Spread: {
      // GPUs per leaf (in GPU order); leaves grouped by pod (the name's prefix before '.').
      const std::vector<net::NodeId> leaf = gpu_leaves(spec);
      std::map<net::NodeId, std::vector<uint32_t>> on_leaf;
      for (uint32_t g = 0; g < gpus; ++g) on_leaf[leaf[g]].push_back(g);
      std::vector<std::string> pod_names;
      std::vector<std::vector<net::NodeId>> pods;
      for (const auto& [id, members] : on_leaf) {
        const std::string& name = spec.nodes[id].name;
        const std::string pod =
            name.substr(0, name.find('.') == std::string::npos ? 0 : name.find('.'));
        auto it = std::find(pod_names.begin(), pod_names.end(), pod);
        if (it == pod_names.end()) {
          pod_names.push_back(pod);
          pods.emplace_back();
          it = pod_names.end() - 1;
        }
        pods[static_cast<std::size_t>(it - pod_names.begin())].push_back(id);
      }
      std::vector<net::NodeId> leaf_order;  // pod 0 leaf 0, pod 1 leaf 0, ..., pod 0 leaf 1, ...
      for (std::size_t i = 0; leaf_order.size() < on_leaf.size(); ++i) {
        for (const auto& pod : pods) {
          if (i < pod.size()) leaf_order.push_back(pod[i]);
        }
      }
      std::vector<std::size_t> taken(leaf_order.size(), 0);
      order.clear();
      while (order.size() < gpus) {
        for (std::size_t l = 0; l < leaf_order.size(); ++l) {
          const auto& members = on_leaf[leaf_order[l]];
          if (taken[l] < members.size()) order.push_back(members[taken[l]++]);
        }
      }
      break;
    }
    case Placement::TopologyAware: {
      // Hosts in order; every other host's GPUs reversed (a snake), so host-to-host ring hops
      // connect equal local GPU indices (equal NICs, equal rails).
      order.clear();
      uint32_t host_index = 0;
      for (uint32_t g = 0; g < gpus;) {
        uint32_t end = g;
        while (end < gpus && spec.gpus[end].host == spec.gpus[g].host) ++end;
        if (host_index % 2 == 0) {
          for (uint32_t x = g; x < end; ++x) order.push_back(x);
        } else {
          for (uint32_t x = end; x > g; --x) order.push_back(x - 1);
        }
        ++host_index;
        g = end;
      }
      break;
    }
  }
  order.resize(ranks);
  return order;
}

JobPlacement place_job(const net::NetworkSpec& spec, uint32_t model_parallel,
                       uint32_t data_parallel, Placement policy, uint64_t seed) {
  const auto gpus = static_cast<uint32_t>(spec.gpus.size());
  const uint32_t ranks =
      data_parallel == 0 ? gpus / model_parallel * model_parallel : data_parallel * model_parallel;
  JobPlacement out;
  if (model_parallel == 1) {
    out.rank_to_gpu = place_ranks(spec, ranks, policy, seed);
  } else {
    out.rank_to_gpu.resize(ranks);
    std::iota(out.rank_to_gpu.begin(), out.rank_to_gpu.end(), 0u);
    out.policy_ignored = policy != Placement::Packed;
  }
  return out;
}

}  // namespace syncsim::topo
