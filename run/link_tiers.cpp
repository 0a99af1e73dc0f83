#include "run/link_tiers.hpp"

#include <algorithm>

namespace syncsim::app {

std::vector<LinkTierUse> link_tier_use(const net::NetworkSpec& spec,
                                       const std::vector<int64_t>& port_bytes, double window_s) {
  std::vector<LinkTierUse> tiers(spec.link_classes.size());
  for (std::size_t c = 0; c < tiers.size(); ++c) {
    tiers[c].tier = spec.link_classes[c].name;
    tiers[c].bandwidth_bps = static_cast<double>(spec.link_classes[c].bandwidth.bits_per_second());
  }
  for (std::size_t link = 0; link < spec.links.size(); ++link) {
    LinkTierUse& t = tiers[spec.links[link].link_class];
    ++t.links;
    for (std::size_t p = 2 * link; p < 2 * link + 2 && p < port_bytes.size(); ++p) {
      t.bytes += port_bytes[p];
      t.max_port_bytes = std::max(t.max_port_bytes, port_bytes[p]);
    }
  }
  std::erase_if(tiers, [](const LinkTierUse& t) { return t.links == 0; });
  if (window_s <= 0) return tiers;
  for (LinkTierUse& t : tiers) {
    const double port_capacity_bits = t.bandwidth_bps * window_s;
    t.mean_utilisation = static_cast<double>(t.bytes) * 8.0 / (port_capacity_bits * 2.0 * t.links);
    t.max_utilisation = static_cast<double>(t.max_port_bytes) * 8.0 / port_capacity_bits;
  }
  return tiers;
}

}  // namespace syncsim::app
