#include "sim/net/fabric_partition.hpp"

#include <algorithm>
#include <utility>

namespace syncsim::net {

namespace {
constexpr uint32_t kUnassigned = UINT32_MAX;

FabricPartition single(const NetworkSpec& spec, std::string why) {
  FabricPartition one;
  one.of_node.assign(spec.nodes.size(), 0);
  one.why_one = std::move(why);
  return one;
}
}  // namespace

FabricPartition partition_fabric(const NetworkSpec& spec, uint32_t max_partitions) {
  const std::size_t n = spec.nodes.size();
  std::vector<NodeId> leaves;
  for (NodeId id = 0; id < n; ++id) {
    if (spec.nodes[id].kind == NodeKind::Switch && spec.nodes[id].role == SwitchRole::Leaf) {
      leaves.push_back(id);
    }
  }
  const auto count =
      static_cast<uint32_t>(std::min<std::size_t>(std::max(1U, max_partitions), leaves.size()));
  if (count < 2) return single(spec, "the fabric has fewer than two leaf switches to split it at");

  FabricPartition part;
  part.count = count;
  part.of_node.assign(n, kUnassigned);
  for (std::size_t j = 0; j < leaves.size(); ++j) {
    part.of_node[leaves[j]] = static_cast<uint32_t>(j * count / leaves.size());
  }
  std::vector<std::vector<NodeId>> neighbours(n);
  for (const LinkSpec& l : spec.links) {
    neighbours[l.a].push_back(l.b);
    neighbours[l.b].push_back(l.a);
  }
  // A host goes with the leaf of its first NIC (in NodeId order) that hangs off one.
  std::vector<uint32_t> of_host(spec.hosts, kUnassigned);
  for (NodeId id = 0; id < n; ++id) {
    const NodeSpec& node = spec.nodes[id];
    if (node.kind != NodeKind::Nic || node.host == kNoHost || node.host >= spec.hosts ||
        of_host[node.host] != kUnassigned) {
      continue;
    }
    const NodeId attachment =
        id < spec.attachment_of_nic.size() ? spec.attachment_of_nic[id] : kNoNode;
    if (attachment != kNoNode && part.of_node[attachment] != kUnassigned &&
        spec.nodes[attachment].role == SwitchRole::Leaf) {
      of_host[node.host] = part.of_node[attachment];
    }
  }
  for (NodeId id = 0; id < n; ++id) {
    const uint32_t host = spec.nodes[id].host;
    if (host != kNoHost && host < spec.hosts) {
      part.of_node[id] = of_host[host] != kUnassigned ? of_host[host] : 0;
    }
  }
  // Switches other than leaves (and nodes of no host): with their neighbours when those agree.
  uint32_t round_robin = 0;
  for (NodeId id = 0; id < n; ++id) {
    if (part.of_node[id] != kUnassigned) continue;
    uint32_t shared = kUnassigned;
    bool agree = true;
    for (const NodeId m : neighbours[id]) {
      const uint32_t p = part.of_node[m];
      if (p == kUnassigned) continue;
      if (shared == kUnassigned) {
        shared = p;
      } else if (p != shared) {
        agree = false;
      }
    }
    part.of_node[id] = agree && shared != kUnassigned ? shared : round_robin++ % count;
  }
  for (const LinkSpec& l : spec.links) {
    if (part.of_node[l.a] != part.of_node[l.b]) {
      part.lookahead =
          std::min(part.lookahead, spec.impairments.least_delay(spec.link_classes[l.link_class]));
    }
  }
  if (part.lookahead <= Time::zero()) {
    return single(spec, spec.impairments.jitter == JitterDistribution::Normal
                            ? "normal link jitter can cut a link between leaves to zero delay "
                              "(its mean less 6 standard deviations reaches minus the link's "
                              "delay), so there is no lookahead"
                            : "a link between leaves has no delay, so there is no lookahead");
  }
  return part;
}

}  // namespace syncsim::net
