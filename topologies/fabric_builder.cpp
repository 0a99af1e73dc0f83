// build_fabric: validates FabricParams and lays out nodes, links and GPU attachments; routing.cpp
// then fills the routing tables.
//
// Layout (deterministic; tests and backends may rely on it). G = host.gpus, N = host.nics.
//
// NodeIds: fabric switches first, so the fabric is routing component 0 and host h's NVSwitch island
// (when G > 1) is component h + 1.
//   spine_leaf:      leaf0..leaf{L-1} (Leaf), spine0..spine{S-1} (Spine)
//   fat_tree:        pod{p}.leaf{l} (Leaf, pod-major), pod{p}.spine{s} (Spine, pod-major),
//                    core0..core{C-1} (Core)
//   rail_optimized:  group{q}.rail{i} (Leaf, group-major), spine0..spine{S-1} (Spine)
// then per host h = 0..H-1: host{h}.nic0..nic{N-1} (Nic), and if G > 1 host{h}.gpu0..gpu{G-1} (Nic,
// the NVLink ports) and host{h}.nvswitch (Switch, NvSwitch). All of host h's nodes carry host = h.
//
// Hosts: spine_leaf host h sits under leaf h / hosts_per_leaf; fat_tree hosts are numbered
// pod-major, then leaf, then host; rail_optimized host h is in group h / hosts_per_group.
//
// Links, in this order (a = the lower tier):
//   1. per host: NIC i -> its leaf (class host); then, if G > 1, gpu g -> nvswitch (class nvlink).
//      spine_leaf and fat_tree: all N NICs go to the host's leaf; rail_optimized: NIC i goes to its
//      group's rail i leaf.
//   2. leaf-major, then spine, then parallel cable: leaf -> spine (class fabric); uplinks_per_spine
//      cables each (fat_tree: one cable, only to the spines of the leaf's pod).
//   3. fat_tree only, spine-major: pod{p}.spine{j} -> core j*(C/spines_per_pod) + m (class core).
//
// link_classes: host, fabric, then core (fat_tree only), then nvlink (G > 1 only).
// GPU rank r = h*G + g uses NIC floor(g*N/G) of host h and NVLink port host{h}.gpu{g}.
#include "topologies/fabric_builder.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "topologies/routing.hpp"

namespace syncsim::topo {
namespace {

using net::kNoNode;
using net::NodeId;
using net::NodeKind;
using net::SwitchRole;

// NodeIds are uint32 with UINT32_MAX as kNoNode; host indices use UINT32_MAX as "no host".
constexpr uint64_t kMaxNodes = UINT32_MAX - 1;
constexpr uint64_t kMaxLinks = UINT32_MAX - 1;
// Above this the attachments x switches routing table alone passes 4 GiB: certainly a typo.
constexpr uint64_t kMaxHopsEntries = uint64_t{1} << 32;
constexpr uint32_t kMaxPriorities = 8;  // 802.1p has 8 classes

constexpr std::string_view kSpineLeaf = "spine_leaf";
constexpr std::string_view kFatTree = "fat_tree";
constexpr std::string_view kRail = "rail_optimized";

// Saturating arithmetic, so size checks on absurd inputs cannot wrap around and pass.
uint64_t mul(uint64_t a, uint64_t b) {
  if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a) {
    return std::numeric_limits<uint64_t>::max();
  }
  return a * b;
}
uint64_t add(uint64_t a, uint64_t b) {
  return b > std::numeric_limits<uint64_t>::max() - a ? std::numeric_limits<uint64_t>::max()
                                                      : a + b;
}

std::string path(std::string_view section, std::string_view field) {
  std::string p{section};
  p += '.';
  p += field;
  return p;
}

std::string fmt_double(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

void require_at_least_one(std::string_view section, std::string_view field, uint32_t value,
                          std::string_view what) {
  if (value == 0) {
    throw TopologyError(path(section, field),
                        "expected at least 1 " + std::string{what} + ", got 0");
  }
}

void validate_link(const net::LinkParams& link, std::string_view key) {
  const std::string base = "links." + std::string{key};
  if (link.bandwidth.bits_per_second() <= 0) {
    throw TopologyError(base + ".bandwidth", "expected a bandwidth > 0, got " +
                                                 std::to_string(link.bandwidth.bits_per_second()) +
                                                 " bit/s");
  }
  if (link.delay < Time::zero()) {
    throw TopologyError(base + ".delay", "expected a delay >= 0, got " +
                                             std::to_string(link.delay.picoseconds()) + " ps");
  }
  if (link.mtu.count() <= 0) {
    throw TopologyError(base + ".mtu",
                        "expected an MTU > 0 bytes, got " + std::to_string(link.mtu.count()));
  }
  if (link.header.count() < 0) {
    throw TopologyError(base + ".header", "expected a header size >= 0 bytes, got " +
                                              std::to_string(link.header.count()));
  }
}

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

uint32_t narrow_count(uint64_t v, std::string_view section, std::string_view what) {
  if (v > kMaxNodes) {
    throw TopologyError(std::string{section}, "expected at most " + std::to_string(kMaxNodes) +
                                                  " " + std::string{what} + ", got " +
                                                  std::to_string(v));
  }
  return static_cast<uint32_t>(v);
}

uint32_t derive_spines(const SpineLeafParams& p, const FabricParams& params) {
  if (p.spines && p.oversubscription) {
    throw TopologyError(
        path(kSpineLeaf, "oversubscription"),
        "set either spines or oversubscription, not both: expected one, got spines = " +
            std::to_string(*p.spines) +
            " and oversubscription = " + fmt_double(*p.oversubscription));
  }
  if (p.spines) {
    require_at_least_one(kSpineLeaf, "spines", *p.spines, "spine");
    return *p.spines;
  }
  const double ratio = p.oversubscription.value_or(1.0);
  if (!(ratio > 0.0) || !std::isfinite(ratio)) {
    throw TopologyError(path(kSpineLeaf, "oversubscription"),
                        "expected a finite ratio > 0 (e.g. 2 for 2:1), got " + fmt_double(ratio));
  }
  // Downlink capacity of one leaf over (ratio x what one spine adds per leaf).
  const double down = static_cast<double>(p.hosts_per_leaf) * params.host.nics *
                      params.links.host.bandwidth.gbit_per_second();
  const double up_per_spine =
      ratio * p.uplinks_per_spine * params.links.fabric.bandwidth.gbit_per_second();
  // The relative slack keeps exact ratios (1600 / 800 = 2) from rounding up on float noise.
  const double spines = std::max(1.0, std::ceil(down / up_per_spine * (1.0 - 1e-12)));
  if (spines > static_cast<double>(kMaxNodes)) {
    throw TopologyError(path(kSpineLeaf, "oversubscription"),
                        "the ratio " + fmt_double(ratio) + " needs " + fmt_double(spines) +
                            " spines, more than the " + std::to_string(kMaxNodes) + " allowed");
  }
  return static_cast<uint32_t>(spines);
}

Shape shape_spine_leaf(const FabricParams& params) {
  const SpineLeafParams& p = params.spine_leaf;
  require_at_least_one(kSpineLeaf, "leaves", p.leaves, "leaf");
  require_at_least_one(kSpineLeaf, "hosts_per_leaf", p.hosts_per_leaf, "host per leaf");
  require_at_least_one(kSpineLeaf, "uplinks_per_spine", p.uplinks_per_spine, "uplink per spine");
  Shape s{.section = kSpineLeaf};
  s.spines = derive_spines(p, params);
  s.leaves = p.leaves;
  s.hosts = narrow_count(mul(p.leaves, p.hosts_per_leaf), kSpineLeaf, "hosts");
  s.fabric_links = mul(mul(p.leaves, s.spines), p.uplinks_per_spine);
  s.attachment_leaves = p.leaves;
  return s;
}

FatTreeParams resolve_fat_tree(const FatTreeParams& p) {
  if (!p.k) {
    return p;
  }
  const uint32_t k = *p.k;
  if (k < 2 || k % 2 != 0) {
    throw TopologyError(path(kFatTree, "k"), "expected an even k >= 2, got " + std::to_string(k));
  }
  const uint32_t half = k / 2;
  return FatTreeParams{.k = k,
                       .pods = k,
                       .leaves_per_pod = half,
                       .spines_per_pod = half,
                       .hosts_per_leaf = half,
                       .cores = narrow_count(mul(half, half), kFatTree, "cores")};
}

Shape shape_fat_tree(const FatTreeParams& p) {
  require_at_least_one(kFatTree, "pods", p.pods, "pod");
  require_at_least_one(kFatTree, "leaves_per_pod", p.leaves_per_pod, "leaf per pod");
  require_at_least_one(kFatTree, "spines_per_pod", p.spines_per_pod, "spine per pod");
  require_at_least_one(kFatTree, "hosts_per_leaf", p.hosts_per_leaf, "host per leaf");
  if (p.cores % p.spines_per_pod != 0) {
    throw TopologyError(path(kFatTree, "cores"), "expected a multiple of spines_per_pod (" +
                                                     std::to_string(p.spines_per_pod) + "), got " +
                                                     std::to_string(p.cores));
  }
  if (p.pods > 1 && p.cores == 0) {
    throw TopologyError(path(kFatTree, "cores"), "expected at least 1 core to join " +
                                                     std::to_string(p.pods) + " pods, got 0");
  }
  Shape s{.section = kFatTree};
  s.leaves = narrow_count(mul(p.pods, p.leaves_per_pod), kFatTree, "leaves");
  s.spines = narrow_count(mul(p.pods, p.spines_per_pod), kFatTree, "spines");
  s.cores = p.cores;
  s.hosts = narrow_count(mul(s.leaves, p.hosts_per_leaf), kFatTree, "hosts");
  // Each spine reaches cores / spines_per_pod cores.
  s.fabric_links = add(mul(s.leaves, p.spines_per_pod), mul(s.spines, p.cores / p.spines_per_pod));
  s.attachment_leaves = s.leaves;
  return s;
}

Shape shape_rail(const FabricParams& params) {
  const RailOptimizedParams& p = params.rail;
  require_at_least_one(kRail, "groups", p.groups, "group");
  require_at_least_one(kRail, "hosts_per_group", p.hosts_per_group, "host per group");
  // spines = 0 is accepted: one group with one NIC per host is a single-leaf fabric. Otherwise the
  // connectivity check rejects it.
  if (p.spines > 0) {
    require_at_least_one(kRail, "uplinks_per_spine", p.uplinks_per_spine, "uplink per spine");
  }
  Shape s{.section = kRail};
  s.leaves = narrow_count(mul(p.groups, params.host.nics), kRail, "rail leaves");
  s.spines = p.spines;
  s.hosts = narrow_count(mul(p.groups, p.hosts_per_group), kRail, "hosts");
  s.fabric_links = mul(mul(s.leaves, s.spines), p.uplinks_per_spine);
  s.attachment_leaves = s.leaves;
  return s;
}

Shape resolve_shape(const FabricParams& params, FatTreeParams& fat_tree) {
  switch (params.kind) {
    case TopologyKind::SpineLeaf:
      return shape_spine_leaf(params);
    case TopologyKind::FatTree:
      fat_tree = resolve_fat_tree(params.fat_tree);
      return shape_fat_tree(fat_tree);
    case TopologyKind::RailOptimized:
      return shape_rail(params);
  }
  throw TopologyError("topology",
                      "unknown topology kind " + std::to_string(static_cast<int>(params.kind)));
}

struct Totals {
  uint64_t nodes = 0;
  uint64_t links = 0;
};

// Rejects sizes whose ids or tables would not fit, before anything is allocated.
Totals check_sizes(const Shape& s, const HostParams& host) {
  const uint64_t nodes_per_host = add(host.nics, host.gpus > 1 ? add(host.gpus, 1) : 0);
  const uint64_t switches = add(add(s.leaves, s.spines), s.cores);
  const uint64_t nodes = add(switches, mul(s.hosts, nodes_per_host));
  const std::string section{s.section};
  if (nodes > kMaxNodes) {
    throw TopologyError(section, "expected at most " + std::to_string(kMaxNodes) +
                                     " nodes (NodeId is 32-bit), this fabric has " +
                                     std::to_string(nodes));
  }
  const uint64_t gpus = mul(s.hosts, host.gpus);
  if (gpus > UINT32_MAX) {
    throw TopologyError(section, "expected at most " + std::to_string(UINT32_MAX) +
                                     " GPUs, this fabric has " + std::to_string(gpus));
  }
  const uint64_t host_links = mul(s.hosts, add(host.nics, host.gpus > 1 ? host.gpus : 0));
  const uint64_t links = add(host_links, s.fabric_links);
  if (links > kMaxLinks) {
    throw TopologyError(section, "expected at most " + std::to_string(kMaxLinks) +
                                     " links, this fabric has " + std::to_string(links));
  }
  const uint64_t hops = mul(s.attachment_leaves, switches);
  if (hops > kMaxHopsEntries) {
    throw TopologyError(section, "expected a routing table of at most " +
                                     std::to_string(kMaxHopsEntries) +
                                     " entries (leaves x switches), "
                                     "this fabric needs " +
                                     std::to_string(hops));
  }
  return Totals{.nodes = nodes, .links = links};
}

void validate_params(const FabricParams& params) {
  require_at_least_one("host", "gpus", params.host.gpus, "GPU per host");
  require_at_least_one("host", "nics", params.host.nics, "NIC per host");
  const bool fat_tree = params.kind == TopologyKind::FatTree;
  const bool nvlink = params.host.gpus > 1;
  validate_link(params.links.host, "host");
  validate_link(params.links.fabric, "fabric");
  if (fat_tree) {
    validate_link(params.links.core, "core");
  }
  if (nvlink) {
    validate_link(params.links.nvlink, "nvlink");
  }
  if (params.switch_params.priorities == 0 || params.switch_params.priorities > kMaxPriorities) {
    throw TopologyError("switch.priorities", "expected 1 to " + std::to_string(kMaxPriorities) +
                                                 " priorities, got " +
                                                 std::to_string(params.switch_params.priorities));
  }
  if (params.switch_params.buffer.count() <= 0) {
    throw TopologyError("switch.buffer", "expected a buffer > 0 bytes, got " +
                                             std::to_string(params.switch_params.buffer.count()));
  }
}

}  // namespace

FabricSize fabric_size(const FabricParams& params) {
  validate_params(params);
  FatTreeParams fat_tree = params.fat_tree;
  const Shape shape = resolve_shape(params, fat_tree);
  const Totals totals = check_sizes(shape, params.host);
  FabricSize size;
  size.hosts = shape.hosts;
  size.gpus = mul(shape.hosts, params.host.gpus);
  size.switches = add(add(shape.leaves, shape.spines), shape.cores);
  size.nodes = totals.nodes;
  size.links = totals.links;
  size.routing_entries = mul(shape.attachment_leaves, size.switches);
  return size;
}

namespace {

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

// Adds every host's NICs, NVLink ports and NVSwitch, their links, and the GPU attachments.
// leaf_of(h, i) is the leaf NIC i of host h plugs into.
template <typename LeafOf>
void add_hosts(SpecWriter& out, net::NetworkSpec& spec, uint32_t hosts, const HostParams& hp,
               const ClassIds& cls, LeafOf leaf_of) {
  const uint32_t gpus = hp.gpus;
  const uint32_t nics = hp.nics;
  spec.gpus.reserve(static_cast<std::size_t>(hosts) * gpus);
  for (uint32_t h = 0; h < hosts; ++h) {
    const std::string prefix = "host" + std::to_string(h) + ".";
    const NodeId first_nic = static_cast<NodeId>(spec.nodes.size());
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

void layout_spine_leaf(SpecWriter& out, net::NetworkSpec& spec, const FabricParams& params,
                       const Shape& s, const ClassIds& cls) {
  const NodeId first_leaf = static_cast<NodeId>(spec.nodes.size());
  for (uint32_t l = 0; l < s.leaves; ++l) {
    out.add_switch(SwitchRole::Leaf, "leaf" + std::to_string(l));
  }
  const NodeId first_spine = static_cast<NodeId>(spec.nodes.size());
  for (uint32_t j = 0; j < s.spines; ++j) {
    out.add_switch(SwitchRole::Spine, "spine" + std::to_string(j));
  }
  const uint32_t per_leaf = params.spine_leaf.hosts_per_leaf;
  add_hosts(out, spec, s.hosts, params.host, cls,
            [&](uint32_t h, uint32_t) { return first_leaf + h / per_leaf; });
  for (uint32_t l = 0; l < s.leaves; ++l) {
    for (uint32_t j = 0; j < s.spines; ++j) {
      out.add_link(first_leaf + l, first_spine + j, cls.fabric,
                   params.spine_leaf.uplinks_per_spine);
    }
  }
}

void layout_fat_tree(SpecWriter& out, net::NetworkSpec& spec, const FabricParams& params,
                     const FatTreeParams& ft, const Shape& s, const ClassIds& cls) {
  const NodeId first_leaf = static_cast<NodeId>(spec.nodes.size());
  for (uint32_t p = 0; p < ft.pods; ++p) {
    for (uint32_t l = 0; l < ft.leaves_per_pod; ++l) {
      out.add_switch(SwitchRole::Leaf, "pod" + std::to_string(p) + ".leaf" + std::to_string(l));
    }
  }
  const NodeId first_spine = static_cast<NodeId>(spec.nodes.size());
  for (uint32_t p = 0; p < ft.pods; ++p) {
    for (uint32_t j = 0; j < ft.spines_per_pod; ++j) {
      out.add_switch(SwitchRole::Spine, "pod" + std::to_string(p) + ".spine" + std::to_string(j));
    }
  }
  const NodeId first_core = static_cast<NodeId>(spec.nodes.size());
  for (uint32_t c = 0; c < ft.cores; ++c) {
    out.add_switch(SwitchRole::Core, "core" + std::to_string(c));
  }
  // Leaves are numbered pod-major, so host h's global leaf index is simply h / hosts_per_leaf.
  add_hosts(out, spec, s.hosts, params.host, cls,
            [&](uint32_t h, uint32_t) { return first_leaf + h / ft.hosts_per_leaf; });
  for (uint32_t p = 0; p < ft.pods; ++p) {
    for (uint32_t l = 0; l < ft.leaves_per_pod; ++l) {
      for (uint32_t j = 0; j < ft.spines_per_pod; ++j) {
        out.add_link(first_leaf + p * ft.leaves_per_pod + l,
                     first_spine + p * ft.spines_per_pod + j, cls.fabric);
      }
    }
  }
  const uint32_t cores_per_group = ft.cores / ft.spines_per_pod;
  for (uint32_t p = 0; p < ft.pods; ++p) {
    for (uint32_t j = 0; j < ft.spines_per_pod; ++j) {
      for (uint32_t m = 0; m < cores_per_group; ++m) {
        out.add_link(first_spine + p * ft.spines_per_pod + j, first_core + j * cores_per_group + m,
                     cls.core);
      }
    }
  }
}

void layout_rail(SpecWriter& out, net::NetworkSpec& spec, const FabricParams& params,
                 const Shape& s, const ClassIds& cls) {
  const RailOptimizedParams& p = params.rail;
  const uint32_t nics = params.host.nics;
  const NodeId first_leaf = static_cast<NodeId>(spec.nodes.size());
  for (uint32_t q = 0; q < p.groups; ++q) {
    for (uint32_t i = 0; i < nics; ++i) {
      out.add_switch(SwitchRole::Leaf, "group" + std::to_string(q) + ".rail" + std::to_string(i));
    }
  }
  const NodeId first_spine = static_cast<NodeId>(spec.nodes.size());
  for (uint32_t j = 0; j < s.spines; ++j) {
    out.add_switch(SwitchRole::Spine, "spine" + std::to_string(j));
  }
  add_hosts(out, spec, s.hosts, params.host, cls, [&](uint32_t h, uint32_t i) {
    return first_leaf + (h / p.hosts_per_group) * nics + i;
  });
  for (uint32_t l = 0; l < s.leaves; ++l) {
    for (uint32_t j = 0; j < s.spines; ++j) {
      out.add_link(first_leaf + l, first_spine + j, cls.fabric, p.uplinks_per_spine);
    }
  }
}

// Every host NIC must reach every other through the fabric; otherwise routing has no answer.
void check_connected(const net::NetworkSpec& spec) {
  NodeId reference = kNoNode;
  for (std::size_t id = 0; id < spec.nodes.size(); ++id) {
    const net::NodeSpec& node = spec.nodes[id];
    if (node.kind != NodeKind::Nic) {
      continue;
    }
    const NodeId attachment = spec.attachment_of_nic[id];
    if (spec.nodes[attachment].role == SwitchRole::NvSwitch) {
      continue;  // an NVLink port, not a host NIC
    }
    if (reference == kNoNode) {
      reference = static_cast<NodeId>(id);
    } else if (spec.component_of[id] != spec.component_of[reference]) {
      throw TopologyError("topology", "expected a connected fabric, but " + node.name + " (on " +
                                          spec.nodes[attachment].name + ") cannot reach " +
                                          spec.nodes[reference].name + " (on " +
                                          spec.nodes[spec.attachment_of_nic[reference]].name + ")");
    }
  }
}

}  // namespace

net::NetworkSpec build_fabric(const FabricParams& params) {
  validate_params(params);
  const bool fat_tree = params.kind == TopologyKind::FatTree;
  const bool nvlink = params.host.gpus > 1;
  FatTreeParams ft = params.fat_tree;
  const Shape shape = resolve_shape(params, ft);
  const Totals totals = check_sizes(shape, params.host);

  net::NetworkSpec spec;
  spec.nodes.reserve(totals.nodes);
  spec.links.reserve(totals.links);
  spec.hosts = shape.hosts;
  spec.switch_params = params.switch_params;
  spec.ecmp_hash_seed = params.ecmp_hash_seed;
  spec.ecmp_per_switch_salt = params.ecmp_per_switch_salt;

  ClassIds cls;
  spec.link_classes.push_back(params.links.host);
  spec.link_classes.push_back(params.links.fabric);
  if (fat_tree) {
    cls.core = static_cast<uint32_t>(spec.link_classes.size());
    spec.link_classes.push_back(params.links.core);
  }
  if (nvlink) {
    cls.nvlink = static_cast<uint32_t>(spec.link_classes.size());
    spec.link_classes.push_back(params.links.nvlink);
  }

  SpecWriter out(spec);
  switch (params.kind) {
    case TopologyKind::SpineLeaf:
      layout_spine_leaf(out, spec, params, shape, cls);
      break;
    case TopologyKind::FatTree:
      layout_fat_tree(out, spec, params, ft, shape, cls);
      break;
    case TopologyKind::RailOptimized:
      layout_rail(out, spec, params, shape, cls);
      break;
  }

  detail::fill_routing(spec);
  check_connected(spec);
  return spec;
}

}  // namespace syncsim::topo
