// build_fabric: validates FabricParams and lays out nodes, links and GPU attachments; routing.cpp
// then fills the routing tables.
//
// Layout (deterministic; tests and backends may rely on it). G = host.gpus, N = host.nics.
//
// NodeIds: fabric switches first, so the fabric is routing component 0 and host h's NVSwitch island
// (when G > 1) is component h + 1. With P = fabric.planes > 1 the fabric switches come plane-major
// (plane p's names prefixed "plane<p>."; rail_optimized: its leaves, then every plane's spines),
// plane p is component p and host h's NVSwitch island component h + P; NIC i of every host plugs
// into plane i mod P.
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
// With host.nvls (G > 1), after all of that: per host host{h}.nvls (Nic, the NVLS engine) and its
// link to host{h}.nvswitch (class nvls, appended last). With sharp.enabled, then: per fabric switch
// <switch>.sharp (Nic, no host, the SHARP engine) and its link to the switch (classes "sharp",
// one per distinct rate, appended last).
#include "topologies/fabric_builder.hpp"

#include "topologies/fabric_detail.hpp"
#include "topologies/routing.hpp"

namespace syncsim::topo {
namespace {

using detail::Shape;

Shape resolve_shape(const FabricParams& params, FatTreeParams& fat_tree) {
  switch (params.kind) {
    case TopologyKind::SpineLeaf:
      return detail::shape_spine_leaf(params);
    case TopologyKind::FatTree: {
      fat_tree = detail::resolve_fat_tree(params.fat_tree);
      // Every plane is a whole fat tree.
      Shape s = detail::shape_fat_tree(fat_tree);
      const uint32_t planes = params.planes;
      s.leaves = detail::narrow_count(detail::mul(s.leaves, planes), detail::kFatTree, "leaves");
      s.spines = detail::narrow_count(detail::mul(s.spines, planes), detail::kFatTree, "spines");
      s.cores = detail::narrow_count(detail::mul(s.cores, planes), detail::kFatTree, "cores");
      s.fabric_links = detail::mul(s.fabric_links, planes);
      s.attachment_leaves = s.leaves;
      return s;
    }
    case TopologyKind::RailOptimized:
      return detail::shape_rail(params);
  }
  throw TopologyError("topology",
                      "unknown topology kind " + std::to_string(static_cast<int>(params.kind)));
}

// After every other node and link, so the documented layout above is unchanged: per host h,
// host{h}.nvls (Nic) and its link to host{h}.nvswitch (class "nvls").
void add_nvls_engines(net::NetworkSpec& spec, const FabricParams& params) {
  net::LinkParams engine = params.links.nvlink;
  engine.name = "nvls";
  // The engine is inside the switch (sim/net/in_switch_engine.hpp): no cable between them, as for
  // the SHARP engines below.
  engine.delay = Time::zero();
  engine.bandwidth = Bandwidth::bps(params.links.nvlink.bandwidth.bits_per_second() *
                                    static_cast<int64_t>(params.host.gpus));
  const auto cls = static_cast<uint32_t>(spec.link_classes.size());
  spec.link_classes.push_back(engine);
  detail::SpecWriter out(spec);
  std::vector<net::NodeId> nvswitch(spec.hosts, net::kNoNode);
  for (net::NodeId id = 0; id < spec.nodes.size(); ++id) {
    const net::NodeSpec& n = spec.nodes[id];
    if (n.role == net::SwitchRole::NvSwitch) nvswitch[n.host] = id;
  }
  spec.nvls_engines.reserve(spec.hosts);
  for (uint32_t h = 0; h < spec.hosts; ++h) {
    const net::NodeId node = out.add_node(net::NodeKind::Nic, net::SwitchRole::None, h,
                                          "host" + std::to_string(h) + ".nvls");
    out.add_link(node, nvswitch[h], cls);
    spec.nvls_engines.push_back(
        net::GpuAttachment{.host = h, .local_index = 0, .nic = net::kNoNode, .nvlink_port = node});
  }
}

// After the NVLS engines: per fabric switch s (Leaf, Spine, Core; NodeId order), <name>.sharp
// (Nic, host kNoHost) and its link to s (class "sharp", appended last), at the sum of the rates of
// s's links: the switch reduces at line rate on every port at once.
void add_sharp_engines(net::NetworkSpec& spec, const FabricParams& params) {
  std::vector<int64_t> port_bps(spec.nodes.size(), 0);
  for (const net::LinkSpec& l : spec.links) {
    const int64_t bps = spec.link_classes[l.link_class].bandwidth.bits_per_second();
    port_bps[l.a] += bps;
    port_bps[l.b] += bps;
  }
  detail::SpecWriter out(spec);
  const std::size_t switches = spec.nodes.size();
  const auto first_class = static_cast<uint32_t>(spec.link_classes.size());
  for (net::NodeId id = 0; id < switches; ++id) {
    const net::NodeSpec n = spec.nodes[id];
    if (n.kind != net::NodeKind::Switch || n.role == net::SwitchRole::NvSwitch) continue;
    net::LinkParams engine = params.links.host;
    engine.name = "sharp";
    engine.delay = Time::zero();
    engine.bandwidth = Bandwidth::bps(std::min(port_bps[id], net::LinkParams::kMaxBps));
    // Switches of one tier share a class.
    auto cls = static_cast<uint32_t>(spec.link_classes.size());
    for (uint32_t c = first_class; c < spec.link_classes.size(); ++c) {
      if (spec.link_classes[c].bandwidth == engine.bandwidth) cls = c;
    }
    if (cls == spec.link_classes.size()) spec.link_classes.push_back(engine);
    const net::NodeId node =
        out.add_node(net::NodeKind::Nic, net::SwitchRole::None, net::kNoHost, n.name + ".sharp");
    out.add_link(node, id, cls);
    spec.sharp_engines.push_back(net::GpuAttachment{
        .host = net::kNoHost, .local_index = 0, .nic = node, .nvlink_port = net::kNoNode});
    spec.sharp_engine_switch.push_back(id);
  }
}

}  // namespace

FabricSize fabric_size(const FabricParams& params) {
  detail::validate_params(params);
  FatTreeParams fat_tree = params.fat_tree;
  const Shape shape = resolve_shape(params, fat_tree);
  const detail::Totals totals = detail::check_sizes(shape, params.host);
  FabricSize size;
  size.hosts = shape.hosts;
  size.gpus = detail::mul(shape.hosts, params.host.gpus);
  size.switches = detail::add(detail::add(shape.leaves, shape.spines), shape.cores);
  // NVLS engines: one node and one link per host.
  const uint64_t engines = params.host.nvls && params.host.gpus > 1 ? shape.hosts : 0;
  // SHARP engines: one node and one link per fabric switch.
  const uint64_t sharp = params.sharp.enabled ? size.switches : 0;
  size.nodes = totals.nodes + engines + sharp;
  size.links = totals.links + engines + sharp;
  size.routing_entries = detail::mul(shape.attachment_leaves, size.switches);
  return size;
}

net::NetworkSpec build_fabric(const FabricParams& params) {
  detail::validate_params(params);
  const bool fat_tree = params.kind == TopologyKind::FatTree;
  const bool nvlink = params.host.gpus > 1;
  FatTreeParams ft = params.fat_tree;
  const Shape shape = resolve_shape(params, ft);
  const detail::Totals totals = detail::check_sizes(shape, params.host);

  net::NetworkSpec spec;
  spec.nodes.reserve(totals.nodes);
  spec.links.reserve(totals.links);
  spec.hosts = shape.hosts;
  spec.switch_params = params.switch_params;
  spec.ecmp_hash_seed = params.ecmp_hash_seed;
  spec.ecmp_per_switch_salt = params.ecmp_per_switch_salt;
  spec.load_balancing = params.load_balancing;
  spec.planes = params.planes;
  spec.plane_spray = params.plane_selection == PlaneSelection::Spray && params.planes > 1;

  detail::ClassIds cls;
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

  detail::SpecWriter out(spec);
  switch (params.kind) {
    case TopologyKind::SpineLeaf:
      detail::layout_spine_leaf(out, spec, params, shape, cls);
      // Every leaf has the same hosts and the same uplinks to every spine.
      spec.translation_period_hosts = params.spine_leaf.hosts_per_leaf;
      break;
    case TopologyKind::FatTree:
      detail::layout_fat_tree(out, spec, params, ft, shape, cls);
      // Every pod has the same leaves and spines, and spine j of every pod reaches the same cores.
      spec.translation_period_hosts = ft.leaves_per_pod * ft.hosts_per_leaf;
      break;
    case TopologyKind::RailOptimized:
      detail::layout_rail(out, spec, params, shape, cls);
      // Every group has one leaf per rail, each with the same uplinks to every spine.
      spec.translation_period_hosts = params.rail.hosts_per_group;
      break;
  }

  if (nvlink && params.host.nvls) add_nvls_engines(spec, params);
  spec.sharp = params.sharp;
  if (params.sharp.enabled) add_sharp_engines(spec, params);
  detail::fill_routing(spec);
  detail::check_connected(spec);
  return spec;
}

}  // namespace syncsim::topo
