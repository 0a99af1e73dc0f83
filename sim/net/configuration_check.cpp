#include "sim/net/configuration_check.hpp"

#include <algorithm>
#include <cmath>

#include "sim/net/ecn.hpp"
#include "sim/net/ib_credits.hpp"
#include "sim/net/pfc.hpp"
#include "sim/net/switch.hpp"

namespace syncsim::net {

namespace {

// InfiniBand: per link class, the smallest per-VL buffer its receivers advertise against one MTU
// packet and against the credit round trip.
std::vector<ConfigurationFinding> check_ib_credits(const NetworkSpec& spec,
                                                   const Routing& routing) {
  std::vector<ConfigurationFinding> findings;
  std::vector<int64_t> min_credit(spec.link_classes.size(), INT64_MAX);
  for (PortId p = 0; p < routing.ports().size(); ++p) {
    if (!ib_port(spec, routing, p)) continue;
    int64_t& m = min_credit[routing.ports()[p].link_class];
    m = std::min(m, ib_advertised_bytes(spec, routing, p));
  }
  for (std::size_t cls = 0; cls < min_credit.size(); ++cls) {
    if (min_credit[cls] == INT64_MAX) continue;
    const LinkParams& link = spec.link_classes[cls];
    const int64_t mtu_wire = link.mtu.count() + link.header.count();
    const int64_t credit = min_credit[cls] / kIbCreditBytes * kIbCreditBytes;
    if (credit < mtu_wire) {
      findings.push_back({.kind = ConfigurationFindingKind::IbCreditsBelowMtu,
                          .link_class = link.name,
                          .required_bytes = mtu_wire,
                          .credit_bytes = credit});
      continue;
    }
    // A credit comes back one packet time plus the cable both ways after it was spent.
    const double round_trip_ps = static_cast<double>(
        link.bandwidth.tx_time(Bytes{mtu_wire}).picoseconds() + 2 * link.delay.picoseconds());
    const double bps = static_cast<double>(link.bandwidth.bits_per_second());
    const auto need = static_cast<int64_t>(std::ceil(bps * round_trip_ps / 8e12));
    if (credit < need) {
      findings.push_back(
          {.kind = ConfigurationFindingKind::IbCreditsBelowBdp,
           .link_class = link.name,
           .required_bytes = need,
           .credit_bytes = credit,
           .rate_cap_gbps = static_cast<double>(credit) * 8e12 / round_trip_ps / 1e9});
    }
  }
  return findings;
}

}  // namespace

std::vector<ConfigurationFinding> check_configuration(const NetworkSpec& spec,
                                                      const Routing& routing,
                                                      const std::vector<Switch*>& switches) {
  if (spec.link_layer == LinkLayer::Infiniband) return check_ib_credits(spec, routing);
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
      const auto [kmin, kmax] = ecn_thresholds(ecn);
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
