#pragma once
// How switches spread a flow's packets over the shortest paths (`fabric.load_balancing`), plain
// data for NetworkSpec; the mechanism is load_balancing.hpp. docs/load-balancing.md describes each
// mode.
#include <cstdint>

#include "sim/core/field_error.hpp"
#include "sim/core/units.hpp"

namespace syncsim::net {

enum class LoadBalancing : uint8_t {
  // One path per flow, hashed from its 5-tuple (RoCE v2: the UDP source port from the queue pair)
  // and precomputed when the flow starts: what every earlier result used.
  Ecmp,
  // Every data packet picks its next hop at every switch independently, by a hash of (flow hash,
  // the packet's number within its flow, switch): oblivious spraying as UEC's entropy-per-packet
  // spraying does.
  PacketSpray,
  // A flow keeps its ECMP path until it has sent nothing for `flowlet_gap`; its next packet starts
  // a new flowlet, which hashes (flow hash, flowlet number) at every switch (CONGA, LetFlow).
  Flowlet,
  // At every switch, the candidate with the fewest bytes queued at its egress (ties: the ECMP
  // candidate first, then in port order from it), as InfiniBand adaptive routing and NVIDIA
  // Spectrum-X choose a port by its load.
  Adaptive,
};

inline constexpr const char* load_balancing_name(LoadBalancing m) {
  switch (m) {
    case LoadBalancing::Ecmp:
      return "ecmp";
    case LoadBalancing::PacketSpray:
      return "packet_spray";
    case LoadBalancing::Flowlet:
      return "flowlet";
    case LoadBalancing::Adaptive:
      return "adaptive";
  }
  return "unknown";
}

struct LoadBalancingParams {
  LoadBalancing mode = LoadBalancing::Ecmp;
  // Flowlet inactivity gap. CONGA's hardware used 500 us (Alizadeh et al., "CONGA: Distributed
  // Congestion-Aware Load Balancing for Datacenters", SIGCOMM 2014, section 5); LetFlow evaluates
  // 50-500 us (Vanini et al., "Let It Flow: Resilient Asymmetric Load Balancing with Flowlet
  // Switching", NSDI 2017). Time::max(): never a new flowlet (ECMP, bit for bit).
  Time flowlet_gap = Time::us(500);

  // Range rule: a positive flowlet gap.
  FieldErrors check() const;
};

}  // namespace syncsim::net
