#pragma once
// How busy each tier of the fabric was: per link class ("host", "nvlink", "fabric", "core"; see
// sim/net/network_spec.hpp) the payload bytes the run routed over its egress ports
// (TransferBackend::port_bytes, counted when a transfer starts) against what the ports could carry
// over the run's simulated time. Payload only, so a port sending back-to-back full-MTU packets
// reads mtu / (mtu + header) below 1 (about 0.98 at 4096 B + 64 B); a transfer cut short by the
// end of the run counts whole. The report page (run/report_page.hpp) colours the tiers by it.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/net/network_spec.hpp"

namespace syncsim::app {

struct LinkTierUse {
  std::string tier;          // the link class name
  uint32_t links = 0;        // full-duplex cables of the class (two egress ports each)
  double bandwidth_bps = 0;  // per port, each direction
  int64_t bytes = 0;         // payload bytes over every port of the class
  int64_t max_port_bytes = 0;
  // bytes x 8 / (bandwidth x ports x window) and the busiest port's own; 0 when window is 0.
  double mean_utilisation = 0;
  double max_utilisation = 0;
};

// One entry per link class that has links, in link-class order. `port_bytes` is indexed by egress
// port (2i: link i a -> b, 2i+1: b -> a); empty gives zero bytes everywhere.
std::vector<LinkTierUse> link_tier_use(const net::NetworkSpec& spec,
                                       const std::vector<int64_t>& port_bytes, double window_s);

}  // namespace syncsim::app
