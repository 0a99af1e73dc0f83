// Rail-optimized: one leaf per rail and group, every leaf to every spine; shape and layout.
#include <string>

#include "topologies/fabric_detail.hpp"

namespace syncsim::topo::detail {

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
  // Planes: `spines` of their own each; a rail leaf joins its plane's spines only.
  s.spines = narrow_count(mul(p.spines, params.planes), kRail, "spines");
  s.hosts = narrow_count(mul(p.groups, p.hosts_per_group), kRail, "hosts");
  s.fabric_links = mul(mul(s.leaves, p.spines), p.uplinks_per_spine);
  s.attachment_leaves = s.leaves;
  return s;
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
  // Plane-major spines: plane q's are first_spine + q * p.spines + j.
  const uint32_t planes = params.planes;
  const NodeId first_spine = static_cast<NodeId>(spec.nodes.size());
  for (uint32_t q = 0; q < planes; ++q) {
    for (uint32_t j = 0; j < p.spines; ++j) {
      out.add_switch(SwitchRole::Spine, plane_prefix(planes, q) + "spine" + std::to_string(j));
    }
  }
  add_hosts(out, spec, s.hosts, params.host, cls, [&](uint32_t h, uint32_t i) {
    return first_leaf + (h / p.hosts_per_group) * nics + i;
  });
  for (uint32_t l = 0; l < s.leaves; ++l) {
    const uint32_t plane = (l % nics) % planes;  // leaf l serves rail l mod nics
    for (uint32_t j = 0; j < p.spines; ++j) {
      out.add_link(first_leaf + l, first_spine + plane * p.spines + j, cls.fabric,
                   p.uplinks_per_spine);
    }
  }
}

}  // namespace syncsim::topo::detail
