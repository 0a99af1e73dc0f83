// 2-tier leaf-spine: shape (spines given or derived from the oversubscription ratio) and layout.
#include <algorithm>
#include <cmath>
#include <string>

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

}  // namespace

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

}  // namespace syncsim::topo::detail
