// `fabric:` the topology blocks, host, links, ECMP, link layer and routing;
// `fabric.route_overrides` and `fabric.flow`. The switch and NIC blocks are read in
// read_fabric_switch.cpp and read_fabric_nic.cpp.
#include <limits>
#include <string_view>
#include <utility>

#include "scenario/section_readers.hpp"
#include "sim/net/ib_presets.hpp"

namespace syncsim::app::yaml_reader {

namespace {

const std::vector<std::pair<std::string_view, net::LoadBalancing>> kLoadBalancing{
    {"ecmp", net::LoadBalancing::Ecmp},
    {"packet_spray", net::LoadBalancing::PacketSpray},
    {"flowlet", net::LoadBalancing::Flowlet},
    {"adaptive", net::LoadBalancing::Adaptive},
};

const std::vector<std::pair<std::string_view, topo::PlaneSelection>> kPlaneSelections{
    {"pinned", topo::PlaneSelection::Pinned},
    {"spray", topo::PlaneSelection::Spray},
};

const std::vector<std::pair<std::string_view, net::LinkLayer>> kLinkLayers{
    {"roce", net::LinkLayer::Roce},
    {"infiniband", net::LinkLayer::Infiniband},
};

const std::vector<std::pair<std::string_view, net::RoutingAlgorithm>> kRouting{
    {"ecmp", net::RoutingAlgorithm::Ecmp},
    {"ftree", net::RoutingAlgorithm::Ftree},
};

const std::vector<std::pair<std::string_view, topo::TopologyKind>> kTopologies{
    {"spine_leaf", topo::TopologyKind::SpineLeaf},
    {"fat_tree", topo::TopologyKind::FatTree},
    {"rail_optimized", topo::TopologyKind::RailOptimized},
};

// An InfiniBand link generation: its data rate, the 4 KiB IB MTU and the 26 B of IB headers.
void apply_ib_link(const net::IbLinkPreset& preset, net::LinkParams& link) {
  link.bandwidth = preset.data_rate;
  link.mtu = Bytes{net::kIbMtuBytes};
  link.header = Bytes{net::kIbPacketHeaderBytes};
}

std::string link_preset_names() {
  std::string names;
  for (const auto& p : net::ib_link_presets())
    names += (names.empty() ? "" : ", ") + std::string(p.name);
  return names;
}

void read_link(const Reader& in, const YAML::Node& node, const std::string& path,
               net::LinkParams& link) {
  const MapView m(in, node, path, {"bandwidth", "delay", "mtu", "header", "preset"});
  if (const YAML::Node* v = m.find("preset")) {
    const std::string name = in.read_string(*v, m.path_of("preset"));
    const auto preset = net::ib_link_preset(name);
    if (!preset) {
      in.fail(
          m.path_of("preset"), *v,
          "expected an InfiniBand link preset (" + link_preset_names() + "), got " + quoted(name));
    }
    apply_ib_link(*preset, link);
  }
  const YAML::Node* bandwidth = m.find("bandwidth");
  if (bandwidth != nullptr) {
    link.bandwidth = in.read_bandwidth(*bandwidth, m.path_of("bandwidth"));
  }
  if (const YAML::Node* v = m.find("delay")) {
    link.delay = in.read_time(*v, m.path_of("delay"));
  }
  if (const YAML::Node* v = m.find("mtu")) {
    link.mtu = in.read_bytes(*v, m.path_of("mtu"));
  }
  if (const YAML::Node* v = m.find("header")) {
    link.header = in.read_bytes(*v, m.path_of("header"));
  }
  // A written rate must be a real link's, even in a class the topology does not use. The rules of
  // LinkParams::check() are build_fabric's, for the classes it uses.
  if (const FieldErrors errors = link.check_real_rate(); bandwidth != nullptr && !errors.empty()) {
    in.fail(m.path_of("bandwidth"), *bandwidth,
            errors.front().message + ", got " + quoted(bandwidth->Scalar()));
  }
}

}  // namespace

topo::FabricParams read_fabric(const Reader& in, const YAML::Node& node, const std::string& path,
                               NetworkBehaviour& behaviour) {
  const MapView fabric(in, node, path,
                       {"topology",
                        "spine_leaf",
                        "fat_tree",
                        "rail_optimized",
                        "host",
                        "links",
                        "switch",
                        "ecmp",
                        "nic",
                        "nic_overrides",
                        "transport",
                        "impairments",
                        "route_overrides",
                        "flow",
                        "load_balancing",
                        "flowlet_gap",
                        "planes",
                        "plane_selection",
                        "link_layer",
                        "routing",
                        "infiniband",
                        "routing_convergence"});
  topo::FabricParams p;
  p.kind = in.read_enum(fabric.require("topology"), fabric.path_of("topology"), kTopologies);

  // Blocks of the topologies not selected are still read, so a typo there is caught before a sweep
  // flips `fabric.topology` to them.
  if (const YAML::Node* n = fabric.find("spine_leaf")) {
    const MapView m(
        in, *n, fabric.path_of("spine_leaf"),
        {"leaves", "hosts_per_leaf", "spines", "uplinks_per_spine", "oversubscription"});
    auto& sl = p.spine_leaf;
    if (const YAML::Node* v = m.find("leaves")) {
      sl.leaves = in.read_u32(*v, m.path_of("leaves"));
    }
    if (const YAML::Node* v = m.find("hosts_per_leaf")) {
      sl.hosts_per_leaf = in.read_u32(*v, m.path_of("hosts_per_leaf"));
    }
    // null clears an optional field, so `--set fabric.spine_leaf.oversubscription=null` works.
    // Ranges and combinations (0 spines, spines together with oversubscription) are checked by
    // build_fabric, whose TopologyError is mapped back to the node here.
    if (const YAML::Node* v = m.find("spines"); v && !v->IsNull()) {
      sl.spines = in.read_u32(*v, m.path_of("spines"));
    }
    if (const YAML::Node* v = m.find("uplinks_per_spine")) {
      sl.uplinks_per_spine = in.read_u32(*v, m.path_of("uplinks_per_spine"));
    }
    if (const YAML::Node* v = m.find("oversubscription"); v && !v->IsNull()) {
      sl.oversubscription = in.read_number(*v, m.path_of("oversubscription"));
    }
  }
  if (const YAML::Node* n = fabric.find("fat_tree")) {
    const MapView m(in, *n, fabric.path_of("fat_tree"),
                    {"k", "pods", "leaves_per_pod", "spines_per_pod", "hosts_per_leaf", "cores"});
    auto& ft = p.fat_tree;
    if (const YAML::Node* v = m.find("k"); v && !v->IsNull()) {
      ft.k = in.read_u32(*v, m.path_of("k"));
    }
    const std::pair<std::string_view, uint32_t*> counts[] = {
        {"pods", &ft.pods},
        {"leaves_per_pod", &ft.leaves_per_pod},
        {"spines_per_pod", &ft.spines_per_pod},
        {"hosts_per_leaf", &ft.hosts_per_leaf},
        {"cores", &ft.cores},
    };
    for (const auto& [key, field] : counts) {
      if (const YAML::Node* v = m.find(key)) {
        *field = in.read_u32(*v, m.path_of(key));
        // k fixes every count; an explicit count next to it would be silently ignored.
        if (ft.k) {
          in.fail(m.path_of(key), *v,
                  "expected either k or explicit counts, got k = " + std::to_string(*ft.k) +
                      " and " + std::string(key) + " = " + std::to_string(*field));
        }
      }
    }
  }
  if (const YAML::Node* n = fabric.find("rail_optimized")) {
    const MapView m(in, *n, fabric.path_of("rail_optimized"),
                    {"groups", "hosts_per_group", "spines", "uplinks_per_spine"});
    auto& r = p.rail;
    if (const YAML::Node* v = m.find("groups")) {
      r.groups = in.read_u32(*v, m.path_of("groups"));
    }
    if (const YAML::Node* v = m.find("hosts_per_group")) {
      r.hosts_per_group = in.read_u32(*v, m.path_of("hosts_per_group"));
    }
    if (const YAML::Node* v = m.find("spines")) {
      r.spines = in.read_u32(*v, m.path_of("spines"));
    }
    if (const YAML::Node* v = m.find("uplinks_per_spine")) {
      r.uplinks_per_spine = in.read_u32(*v, m.path_of("uplinks_per_spine"));
    }
  }
  if (const YAML::Node* n = fabric.find("host")) {
    // gpu and gpus_per_pcie_switch: read_root (their defaults depend on the GPU preset)
    const MapView m(in, *n, fabric.path_of("host"),
                    {"gpus", "nics", "gpu", "gpus_per_pcie_switch", "hca"});
    if (const YAML::Node* v = m.find("hca")) {
      // The HCA's InfiniBand port sets the host links (fabric.links.host keys override it).
      const std::string name = in.read_string(*v, m.path_of("hca"));
      const auto hca = net::ib_hca_preset(name);
      if (!hca) {
        std::string names;
        for (const auto& h : net::ib_hca_presets())
          names += (names.empty() ? "" : ", ") + std::string(h.name);
        in.fail(m.path_of("hca"), *v,
                "expected an HCA preset (" + names + "), got " + quoted(name));
      }
      apply_ib_link(*net::ib_link_preset(hca->link), p.links.host);
    }
    if (const YAML::Node* v = m.find("gpus")) {
      p.host.gpus = in.read_u32(*v, m.path_of("gpus"));
    }
    if (const YAML::Node* v = m.find("nics")) {
      p.host.nics = in.read_u32(*v, m.path_of("nics"));
    }
  }
  if (const YAML::Node* n = fabric.find("links")) {
    const MapView m(in, *n, fabric.path_of("links"), {"host", "fabric", "core", "nvlink"});
    const std::pair<std::string_view, net::LinkParams*> classes[] = {
        {"host", &p.links.host},
        {"fabric", &p.links.fabric},
        {"core", &p.links.core},
        {"nvlink", &p.links.nvlink},
    };
    for (const auto& [key, link] : classes) {
      if (const YAML::Node* v = m.find(key)) {
        read_link(in, *v, m.path_of(key), *link);
      }
    }
  }
  if (const YAML::Node* n = fabric.find("switch")) {
    read_switch(in, *n, fabric.path_of("switch"), p, behaviour);
  }
  if (const YAML::Node* n = fabric.find("nic")) {
    read_nic(in, *n, fabric.path_of("nic"), behaviour.nic);
  }
  if (const YAML::Node* n = fabric.find("nic_overrides")) {
    // [{hosts: [H, ...], nic: {dcqcn: ..., rx_pfc: ...}}]: fabric.nic with the entry's block over
    // it, for the NICs of those hosts (host numbers are checked against the built fabric).
    const std::string list = fabric.path_of("nic_overrides");
    if (!n->IsSequence()) {
      in.fail(list, *n, "expected a list of {hosts, nic}, got " + describe(*n));
    }
    for (std::size_t i = 0; i < n->size(); ++i) {
      const std::string at = join_path(list, i);
      const MapView o(in, (*n)[i], at, {"hosts", "nic"});
      NicOverrideSpec spec;
      const YAML::Node& hosts = o.require("hosts");
      if (!hosts.IsSequence() || hosts.size() == 0) {
        in.fail(o.path_of("hosts"), hosts,
                "expected a non-empty list of host numbers, got " + describe(hosts));
      }
      for (std::size_t k = 0; k < hosts.size(); ++k) {
        spec.hosts.push_back(in.read_u32(hosts[k], join_path(o.path_of("hosts"), k)));
      }
      spec.nic = behaviour.nic;
      read_nic(in, o.require("nic"), o.path_of("nic"), spec.nic, /*over_current=*/true);
      behaviour.nic_overrides.push_back(std::move(spec));
    }
  }
  if (const YAML::Node* n = fabric.find("transport")) {
    read_transport(in, *n, fabric.path_of("transport"), behaviour.transport);
  }
  if (const YAML::Node* n = fabric.find("impairments")) {
    read_impairments(in, *n, fabric.path_of("impairments"), behaviour.impairments);
  }
  // Load balancing (sim/net/load_balancing_params.hpp); ranges are its check()'s.
  if (const YAML::Node* v = fabric.find("load_balancing")) {
    p.load_balancing.mode = in.read_enum(*v, fabric.path_of("load_balancing"), kLoadBalancing);
  }
  if (const YAML::Node* v = fabric.find("flowlet_gap")) {
    p.load_balancing.flowlet_gap = in.read_time(*v, fabric.path_of("flowlet_gap"));
  }
  in.check_fields(path, p.load_balancing.check());
  // Multi-plane fabrics; build_fabric checks the count against host.nics (TopologyError).
  if (const YAML::Node* v = fabric.find("planes")) {
    p.planes = in.read_u32(*v, fabric.path_of("planes"), 1);
  }
  if (const YAML::Node* v = fabric.find("plane_selection")) {
    p.plane_selection = in.read_enum(*v, fabric.path_of("plane_selection"), kPlaneSelections);
  }
  if (const YAML::Node* v = fabric.find("link_layer")) {
    behaviour.link_layer = in.read_enum(*v, fabric.path_of("link_layer"), kLinkLayers);
  }
  if (const YAML::Node* v = fabric.find("routing")) {
    behaviour.routing = in.read_enum(*v, fabric.path_of("routing"), kRouting);
  }
  if (const YAML::Node* n = fabric.find("infiniband")) {
    read_infiniband(in, *n, fabric.path_of("infiniband"), behaviour.infiniband, p.sharp);
  }
  if (const YAML::Node* n = fabric.find("ecmp")) {
    const MapView m(in, *n, fabric.path_of("ecmp"), {"hash_seed", "per_switch_salt"});
    if (const YAML::Node* v = m.find("hash_seed")) {
      p.ecmp_hash_seed =
          in.read_uint(*v, m.path_of("hash_seed"), 0, std::numeric_limits<uint64_t>::max());
    }
    if (const YAML::Node* v = m.find("per_switch_salt")) {
      p.ecmp_per_switch_salt = in.read_bool(*v, m.path_of("per_switch_salt"));
    }
  }
  return p;
}

// `fabric.route_overrides: [{src: GPU, dst: GPU, via: [leaf1, ...]}]`; switch names are checked by
// the runner against the built fabric.
std::vector<RouteOverrideSpec> read_route_overrides(const Reader& in, const YAML::Node& node,
                                                    const std::string& path) {
  if (!node.IsSequence()) {
    in.fail(path, node, "expected a list of {src, dst, via}, got " + describe(node));
  }
  std::vector<RouteOverrideSpec> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = join_path(path, i);
    const MapView m(in, node[i], at, {"src", "dst", "via"});
    RouteOverrideSpec r;
    r.src_gpu = in.read_u32(m.require("src"), m.path_of("src"));
    r.dst_gpu = in.read_u32(m.require("dst"), m.path_of("dst"));
    const YAML::Node& via = m.require("via");
    if (!via.IsSequence() || via.size() == 0) {
      in.fail(m.path_of("via"), via,
              "expected a non-empty list of switch names, got " + describe(via));
    }
    for (std::size_t k = 0; k < via.size(); ++k) {
      r.via.push_back(in.read_string(via[k], join_path(m.path_of("via"), k)));
    }
    out.push_back(std::move(r));
  }
  return out;
}

// `fabric.flow:` options of the flow-level backend (read whatever the fidelity, so a sweep that
// flips `fidelity` to flow finds typos early): {cc_correction: {contended_efficiency, enabled}}.
net::FlowCcCorrection read_flow_options(const Reader& in, const YAML::Node& node,
                                        const std::string& path) {
  const MapView m(in, node, path, {"cc_correction"});
  net::FlowCcCorrection c;
  const YAML::Node* cc = m.find("cc_correction");
  if (cc == nullptr || cc->IsNull()) return c;
  const MapView cm(in, *cc, m.path_of("cc_correction"), {"contended_efficiency", "enabled"});
  const YAML::Node& e = cm.require("contended_efficiency");
  c.contended_efficiency = in.read_number(e, cm.path_of("contended_efficiency"));
  if (const FieldErrors errors = c.check(); !errors.empty()) {  // cites the value as written
    in.fail(cm.path_of("contended_efficiency"), e,
            errors.front().message + ", got " + quoted(e.Scalar()));
  }
  c.enabled = true;
  if (const YAML::Node* v = cm.find("enabled")) c.enabled = in.read_bool(*v, cm.path_of("enabled"));
  return c;
}

}  // namespace syncsim::app::yaml_reader
