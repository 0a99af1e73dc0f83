#include "sim/net/configuration_check.hpp"

#include <algorithm>

#include "sim/net/ecn.hpp"
#include "sim/net/pfc.hpp"
#include "sim/net/switch.hpp"

namespace syncsim::net {

std::vector<ConfigurationFinding> check_configuration(const NetworkSpec& spec,
                                                      const Routing& routing,
                                                      const std::vector<Switch*>& switches) {
  std::vector<ConfigurationFinding> findings;
  const PfcParams& pfc = spec.pfc;
  const EcnParams& ecn = spec.ecn;
  if (!pfc.enabled) return findings;
  // One check per (switch-facing) link class; findings name the class.
  std::vector<uint32_t> seen_classes;
  int64_t min_shared = INT64_MAX;
  for (const Switch* sw : switches) {
    if (sw == nullptr || spec.nodes[sw->id()].role == SwitchRole::NvSwitch) continue;
    min_shared = std::min(min_shared, sw->mmu().shared_capacity().count());
    for (PortId p : routing.ports_of(sw->id())) {
      const uint32_t cls = routing.ports()[p].link_class;
      if (std::find(seen_classes.begin(), seen_classes.end(), cls) == seen_classes.end()) {
        seen_classes.push_back(cls);
      }
    }
  }
  if (min_shared == INT64_MAX) return findings;
  if (min_shared <= 0) findings.push_back({.kind = ConfigurationFindingKind::NoSharedBuffer});
  const int64_t xoff_max = pfc.dynamic_threshold
                               ? static_cast<int64_t>(pfc.alpha * static_cast<double>(min_shared))
                               : pfc.static_xoff.count();
  for (uint32_t cls : seen_classes) {
    const LinkParams& link = spec.link_classes[cls];
    if (!pfc.headroom_auto) {
      // The same formula (and response time) that `headroom: auto` reserves.
      const int64_t need = required_headroom(link, pfc.response_time);
      if (pfc.headroom.count() < need) {
        findings.push_back({.kind = ConfigurationFindingKind::HeadroomTooSmall,
                            .link_class = link.name,
                            .headroom_bytes = pfc.headroom.count(),
                            .required_bytes = need});
      }
    }
    if (ecn.enabled) {
      const auto [kmin, kmax] = ecn_thresholds(ecn, link.bandwidth);
      if (kmin >= xoff_max || kmax > xoff_max) {
        findings.push_back({.kind = ConfigurationFindingKind::EcnAboveXoff,
                            .link_class = link.name,
                            .kmin_bytes = kmin,
                            .kmax_bytes = kmax,
                            .xoff_bytes = xoff_max,
                            .xoff_dynamic = pfc.dynamic_threshold});
      }
    }
  }
  return findings;
}

}  // namespace syncsim::net
