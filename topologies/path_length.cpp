#include "topologies/path_length.hpp"

#include <algorithm>

#include "topologies/fabric_detail.hpp"

namespace syncsim::topo {

uint32_t links_between_gpus(const FabricParams& params, uint64_t a, uint64_t b) {
  if (a == b) return 0;
  const uint64_t gpus = std::max<uint32_t>(1, params.host.gpus);
  const uint64_t nics = std::max<uint32_t>(1, params.host.nics);
  const uint64_t host_a = a / gpus;
  const uint64_t host_b = b / gpus;
  if (host_a == host_b) return 2;
  const uint64_t nic_a = a % gpus * nics / gpus;
  const uint64_t nic_b = b % gpus * nics / gpus;
  const uint64_t planes = std::max<uint32_t>(1, params.planes);
  // The builders plug NIC i into plane i mod planes; planes meet only through the hosts.
  const bool same_plane = nic_a % planes == nic_b % planes;
  switch (params.kind) {
    case TopologyKind::SpineLeaf: {
      const uint64_t per_leaf = std::max<uint32_t>(1, params.spine_leaf.hosts_per_leaf);
      return same_plane && host_a / per_leaf == host_b / per_leaf ? 2 : 4;
    }
    case TopologyKind::FatTree: {
      const FatTreeParams ft = detail::resolve_fat_tree(params.fat_tree);
      const uint64_t per_leaf = std::max<uint32_t>(1, ft.hosts_per_leaf);
      const uint64_t per_pod = per_leaf * std::max<uint32_t>(1, ft.leaves_per_pod);
      if (same_plane && host_a / per_leaf == host_b / per_leaf) return 2;
      return host_a / per_pod == host_b / per_pod ? 4 : 6;
    }
    case TopologyKind::RailOptimized: {
      // One leaf per rail (NIC index) and group of hosts.
      const uint64_t per_group = std::max<uint32_t>(1, params.rail.hosts_per_group);
      return nic_a == nic_b && host_a / per_group == host_b / per_group ? 2 : 4;
    }
  }
  return 4;
}

}  // namespace syncsim::topo
