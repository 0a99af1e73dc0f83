#pragma once
// How evenly a run spread its bytes over a tier of the fabric: per egress port payload bytes
// (TransferBackend::port_bytes) summarized per link class above the hosts (leaf <-> spine
// "fabric", spine <-> core "core"). max / mean over every port of the tier, idle ones included:
// 1.0 is a perfect spread (what per-packet spraying would give); ECMP hashing a few long-lived
// connections onto the same uplinks gives more. The busiest tier is the one with the largest max.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/net/network_spec.hpp"

namespace syncsim {

struct TierLoad {
  std::string tier;          // the link class name ("fabric", "core")
  uint32_t ports = 0;        // egress ports of the tier (two per cable)
  int64_t max_bytes = 0;     // the most loaded port's bytes
  double mean_bytes = 0;     // mean over the tier's ports
  double max_over_mean = 0;  // max_bytes / mean_bytes (0 when the tier carried nothing)
};

// One entry per switch-to-switch link class that carried bytes, in link-class order. Host links
// (NIC <-> leaf) and NVLink are left out: their load is set by the collective, not by routing.
std::vector<TierLoad> tier_loads(const net::NetworkSpec& spec,
                                 const std::vector<int64_t>& port_bytes);
// The entry with the largest max_bytes, if any tier carried bytes.
std::optional<TierLoad> busiest_tier(const std::vector<TierLoad>& tiers);

}  // namespace syncsim
