#pragma once
// Internal to the fabric builders (fabric_builder.cpp, one file per topology, fabric_checks.cpp):
// resolved sizes, the shared parameter and size checks, and the spec writer the layouts share.
// Not part of the topologies/ interface; include fabric_builder.hpp instead.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "sim/net/network_spec.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::topo::detail {

using net::kNoNode;
using net::NodeId;
using net::NodeKind;
using net::SwitchRole;

// NodeIds are uint32 with UINT32_MAX as kNoNode; host indices use UINT32_MAX as "no host".
inline constexpr uint64_t kMaxNodes = UINT32_MAX - 1;
inline constexpr uint64_t kMaxLinks = UINT32_MAX - 1;
// Above this the attachments x switches routing table alone passes 4 GiB: certainly a typo.
inline constexpr uint64_t kMaxHopsEntries = uint64_t{1} << 32;

// Parameter sections below `fabric.`, for TopologyError paths.
inline constexpr std::string_view kSpineLeaf = "spine_leaf";
inline constexpr std::string_view kFatTree = "fat_tree";
inline constexpr std::string_view kRail = "rail_optimized";

// Saturating arithmetic, so size checks on absurd inputs cannot wrap around and pass.
inline uint64_t mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) {
    return std::numeric_limits<uint64_t>::max();
  }
  return a * b;
}
inline uint64_t add(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

// "section.field", the TopologyError path of a parameter.
std::string path(std::string_view section, std::string_view field);
std::string fmt_double(double v);
// Throws TopologyError at section.field when value is 0.
void require_at_least_one(std::string_view section, std::string_view field, uint32_t value,
                          std::string_view what);
// Throws TopologyError at `section` when v does not fit a NodeId count.
uint32_t narrow_count(uint64_t v, std::string_view section, std::string_view what);

// Resolved sizes of any topology; every field has been validated.
struct Shape {
  std::string_view section;  // parameter section, for size errors
  uint32_t hosts = 0;
  uint32_t leaves = 0;
  uint32_t spines = 0;
  uint32_t cores = 0;
  uint64_t fabric_links = 0;       // leaf-spine and spine-core cables
  uint64_t attachment_leaves = 0;  // for the routing-table size check
};

struct Totals {
  uint64_t nodes = 0;
  uint64_t links = 0;
};

// Switch names of plane p: "plane<p>." before the single-plane name when there are planes.
inline std::string plane_prefix(uint32_t planes, uint32_t p) {
  return planes > 1 ? "plane" + std::to_string(p) + "." : std::string{};
}

// Checks the parameters every topology shares: host, link classes, switch, planes.
void validate_params(const FabricParams& params);
// Rejects sizes whose ids or tables would not fit, before anything is allocated.
Totals check_sizes(const Shape& s, const HostParams& host);
// Every host NIC must reach every other through the fabric; otherwise routing has no answer.
void check_connected(const net::NetworkSpec& spec);

class SpecWriter {
 public:
  explicit SpecWriter(net::NetworkSpec& spec) : spec_(spec) {}

  NodeId add_node(NodeKind kind, SwitchRole role, uint32_t host, std::string name) {
    const auto id = static_cast<NodeId>(spec_.nodes.size());
    spec_.nodes.push_back(
        net::NodeSpec{.kind = kind, .role = role, .host = host, .name = std::move(name)});
    return id;
  }
  NodeId add_switch(SwitchRole role, std::string name) {
    return add_node(NodeKind::Switch, role, UINT32_MAX, std::move(name));
  }
  void add_link(NodeId a, NodeId b, uint32_t link_class, uint32_t cables = 1) {
    for (uint32_t c = 0; c < cables; ++c) {
      spec_.links.push_back(net::LinkSpec{.a = a, .b = b, .link_class = link_class});
    }
  }

 private:
  net::NetworkSpec& spec_;
};

struct ClassIds {
  uint32_t host = 0;
  uint32_t fabric = 1;
  uint32_t core = UINT32_MAX;
  uint32_t nvlink = UINT32_MAX;
};

// Adds every host's NICs, NVLink ports and NVSwitch, their links, and the GPU attachments, and
// records each host's first NIC. leaf_of(h, i) is the leaf NIC i of host h plugs into.
template <typename LeafOf>
void add_hosts(SpecWriter& out, net::NetworkSpec& spec, uint32_t hosts, const HostParams& hp,
               const ClassIds& cls, LeafOf leaf_of) {
  const uint32_t gpus = hp.gpus;
  const uint32_t nics = hp.nics;
  spec.gpus.reserve(static_cast<std::size_t>(hosts) * gpus);
  spec.host_first_nic.reserve(hosts);
  for (uint32_t h = 0; h < hosts; ++h) {
    const std::string prefix = "host" + std::to_string(h) + ".";
    const NodeId first_nic = static_cast<NodeId>(spec.nodes.size());
    spec.host_first_nic.push_back(first_nic);
    for (uint32_t i = 0; i < nics; ++i) {
      const NodeId nic =
          out.add_node(NodeKind::Nic, SwitchRole::None, h, prefix + "nic" + std::to_string(i));
      out.add_link(nic, leaf_of(h, i), cls.host);
    }
    NodeId first_port = kNoNode;
    if (gpus > 1) {
      first_port = static_cast<NodeId>(spec.nodes.size());
      for (uint32_t g = 0; g < gpus; ++g) {
        out.add_node(NodeKind::Nic, SwitchRole::None, h, prefix + "gpu" + std::to_string(g));
      }
      const NodeId nvswitch =
          out.add_node(NodeKind::Switch, SwitchRole::NvSwitch, h, prefix + "nvswitch");
      for (uint32_t g = 0; g < gpus; ++g) {
        out.add_link(first_port + g, nvswitch, cls.nvlink);
      }
    }
    for (uint32_t g = 0; g < gpus; ++g) {
      const auto nic_index = static_cast<uint32_t>(uint64_t{g} * nics / gpus);
      spec.gpus.push_back(
          net::GpuAttachment{.host = h,
                             .local_index = g,
                             .nic = first_nic + nic_index,
                             .nvlink_port = first_port == kNoNode ? kNoNode : first_port + g});
    }
  }
}

// Per topology (spine_leaf.cpp, fat_tree.cpp, rail_optimized.cpp): the validated shape, and the
// layout of its switches, hosts and links in the order fabric_builder.cpp documents.
Shape shape_spine_leaf(const FabricParams& params);
void layout_spine_leaf(SpecWriter& out, net::NetworkSpec& spec, const FabricParams& params,
                       const Shape& s, const ClassIds& cls);
// k-ary parameters expanded to explicit pods (or `p` unchanged when k is unset).
FatTreeParams resolve_fat_tree(const FatTreeParams& p);
Shape shape_fat_tree(const FatTreeParams& p);
void layout_fat_tree(SpecWriter& out, net::NetworkSpec& spec, const FabricParams& params,
                     const FatTreeParams& ft, const Shape& s, const ClassIds& cls);
Shape shape_rail(const FabricParams& params);
void layout_rail(SpecWriter& out, net::NetworkSpec& spec, const FabricParams& params,
                 const Shape& s, const ClassIds& cls);

}  // namespace syncsim::topo::detail
