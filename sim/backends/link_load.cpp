#include "sim/backends/link_load.hpp"

#include <algorithm>

namespace syncsim {

std::vector<TierLoad> tier_loads(const net::NetworkSpec& spec,
                                 const std::vector<int64_t>& port_bytes) {
  std::vector<TierLoad> tiers;
  if (port_bytes.empty()) return tiers;
  for (uint32_t cls = 0; cls < spec.link_classes.size(); ++cls) {
    TierLoad t;
    t.tier = spec.link_classes[cls].name;
    double sum = 0;
    for (std::size_t link = 0; link < spec.links.size(); ++link) {
      const net::LinkSpec& l = spec.links[link];
      if (l.link_class != cls) continue;
      // Switch-to-switch cables only: both ends are switches, and not the NVSwitch.
      const net::NodeSpec& a = spec.nodes[l.a];
      const net::NodeSpec& b = spec.nodes[l.b];
      if (a.kind != net::NodeKind::Switch || b.kind != net::NodeKind::Switch) continue;
      if (a.role == net::SwitchRole::NvSwitch || b.role == net::SwitchRole::NvSwitch) continue;
      for (std::size_t p = 2 * link; p < 2 * link + 2 && p < port_bytes.size(); ++p) {
        ++t.ports;
        sum += static_cast<double>(port_bytes[p]);
        t.max_bytes = std::max(t.max_bytes, port_bytes[p]);
      }
    }
    if (t.ports == 0 || t.max_bytes == 0) continue;
    t.mean_bytes = sum / t.ports;
    t.max_over_mean = static_cast<double>(t.max_bytes) / t.mean_bytes;
    tiers.push_back(std::move(t));
  }
  return tiers;
}

std::optional<TierLoad> busiest_tier(const std::vector<TierLoad>& tiers) {
  if (tiers.empty()) return std::nullopt;
  return *std::max_element(tiers.begin(), tiers.end(), [](const TierLoad& a, const TierLoad& b) {
    return a.max_bytes < b.max_bytes;
  });
}

}  // namespace syncsim
