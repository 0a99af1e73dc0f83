// 2-tier leaf-spine: shape (spines given or derived from the oversubscription ratio) and layout.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "topologies/fabric_detail.hpp"

namespace syncsim::topo::detail {

namespace {

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
  // A plane's leaf serves its plane's NICs of each host.
  const uint32_t nics_per_plane = params.host.nics / params.planes;  // planes divide nics
  const double down = static_cast<double>(p.hosts_per_leaf) * nics_per_plane *
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

}  // namespace

Shape shape_spine_leaf(const FabricParams& params) {
  const SpineLeafParams& p = params.spine_leaf;
  require_at_least_one(kSpineLeaf, "leaves", p.leaves, "leaf");
  require_at_least_one(kSpineLeaf, "hosts_per_leaf", p.hosts_per_leaf, "host per leaf");
  require_at_least_one(kSpineLeaf, "uplinks_per_spine", p.uplinks_per_spine, "uplink per spine");
  Shape s{.section = kSpineLeaf};
  const uint32_t planes = params.planes;
  const uint32_t spines = derive_spines(p, params);
  s.spines = narrow_count(mul(spines, planes), kSpineLeaf, "spines");
  s.leaves = narrow_count(mul(p.leaves, planes), kSpineLeaf, "leaves");
  s.hosts = narrow_count(mul(p.leaves, p.hosts_per_leaf), kSpineLeaf, "hosts");
  s.fabric_links = mul(mul(mul(p.leaves, spines), p.uplinks_per_spine), planes);
  s.attachment_leaves = s.leaves;
  return s;
}

void layout_spine_leaf(SpecWriter& out, net::NetworkSpec& spec, const FabricParams& params,
                       const Shape& s, const ClassIds& cls) {
  // Plane-major: plane p's leaves, then its spines (one plane: the single-plane layout).
  const uint32_t planes = params.planes;
  const uint32_t leaves = s.leaves / planes;
  const uint32_t spines = s.spines / planes;
  std::vector<NodeId> first_leaf(planes);
  std::vector<NodeId> first_spine(planes);
  for (uint32_t p = 0; p < planes; ++p) {
    const std::string prefix = plane_prefix(planes, p);
    first_leaf[p] = static_cast<NodeId>(spec.nodes.size());
    for (uint32_t l = 0; l < leaves; ++l) {
      out.add_switch(SwitchRole::Leaf, prefix + "leaf" + std::to_string(l));
    }
    first_spine[p] = static_cast<NodeId>(spec.nodes.size());
    for (uint32_t j = 0; j < spines; ++j) {
      out.add_switch(SwitchRole::Spine, prefix + "spine" + std::to_string(j));
    }
  }
  const uint32_t per_leaf = params.spine_leaf.hosts_per_leaf;
  add_hosts(out, spec, s.hosts, params.host, cls,
            [&](uint32_t h, uint32_t i) { return first_leaf[i % planes] + h / per_leaf; });
  for (uint32_t p = 0; p < planes; ++p) {
    for (uint32_t l = 0; l < leaves; ++l) {
      for (uint32_t j = 0; j < spines; ++j) {
        out.add_link(first_leaf[p] + l, first_spine[p] + j, cls.fabric,
                     params.spine_leaf.uplinks_per_spine);
      }
    }
  }
}

}  // namespace syncsim::topo::detail
