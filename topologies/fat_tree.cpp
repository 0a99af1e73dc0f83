// 3-tier fat-tree (Clos): k-ary or explicit pods; shape and layout.
#include <string>
#include <vector>

#include "topologies/fabric_detail.hpp"

namespace syncsim::topo::detail {

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

void layout_fat_tree(SpecWriter& out, net::NetworkSpec& spec, const FabricParams& params,
                     const FatTreeParams& ft, const Shape& s, const ClassIds& cls) {
  // Plane-major: plane p's leaves, spines and cores (one plane: the single-plane layout).
  const uint32_t planes = params.planes;
  std::vector<NodeId> first_leaf(planes);
  std::vector<NodeId> first_spine(planes);
  std::vector<NodeId> first_core(planes);
  for (uint32_t q = 0; q < planes; ++q) {
    const std::string prefix = plane_prefix(planes, q);
    first_leaf[q] = static_cast<NodeId>(spec.nodes.size());
    for (uint32_t p = 0; p < ft.pods; ++p) {
      for (uint32_t l = 0; l < ft.leaves_per_pod; ++l) {
        out.add_switch(SwitchRole::Leaf,
                       prefix + "pod" + std::to_string(p) + ".leaf" + std::to_string(l));
      }
    }
    first_spine[q] = static_cast<NodeId>(spec.nodes.size());
    for (uint32_t p = 0; p < ft.pods; ++p) {
      for (uint32_t j = 0; j < ft.spines_per_pod; ++j) {
        out.add_switch(SwitchRole::Spine,
                       prefix + "pod" + std::to_string(p) + ".spine" + std::to_string(j));
      }
    }
    first_core[q] = static_cast<NodeId>(spec.nodes.size());
    for (uint32_t c = 0; c < ft.cores; ++c) {
      out.add_switch(SwitchRole::Core, prefix + "core" + std::to_string(c));
    }
  }
  // Leaves are numbered pod-major, so host h's leaf index within its plane is h / hosts_per_leaf.
  add_hosts(out, spec, s.hosts, params.host, cls,
            [&](uint32_t h, uint32_t i) { return first_leaf[i % planes] + h / ft.hosts_per_leaf; });
  const uint32_t cores_per_group = ft.cores / ft.spines_per_pod;
  for (uint32_t q = 0; q < planes; ++q) {
    for (uint32_t p = 0; p < ft.pods; ++p) {
      for (uint32_t l = 0; l < ft.leaves_per_pod; ++l) {
        for (uint32_t j = 0; j < ft.spines_per_pod; ++j) {
          out.add_link(first_leaf[q] + p * ft.leaves_per_pod + l,
                       first_spine[q] + p * ft.spines_per_pod + j, cls.fabric);
        }
      }
    }
  }
  for (uint32_t q = 0; q < planes; ++q) {
    for (uint32_t p = 0; p < ft.pods; ++p) {
      for (uint32_t j = 0; j < ft.spines_per_pod; ++j) {
        for (uint32_t m = 0; m < cores_per_group; ++m) {
          out.add_link(first_spine[q] + p * ft.spines_per_pod + j,
                       first_core[q] + j * cores_per_group + m, cls.core);
        }
      }
    }
  }
}

}  // namespace syncsim::topo::detail
