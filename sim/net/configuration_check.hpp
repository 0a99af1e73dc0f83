#pragma once
// Checks of a fabric's PFC/ECN configuration that are legal but likely wrong, as typed findings:
// the kind and the numbers and link class involved. sim/ knows nothing of scenario files, so the
// wording and the YAML paths are the scenario layer's (scenario/configuration_warnings.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "sim/net/network_spec.hpp"
#include "sim/net/routing.hpp"

namespace syncsim::net {

class Switch;

enum class ConfigurationFindingKind : uint8_t {
  // The lossless headroom reserved on every port takes a whole switch buffer: nothing is shared.
  NoSharedBuffer,
  // An explicit headroom below what MTU (both ends) and cable delay require on a link class:
  // lossless packets will be dropped (lossless_headroom_exceeded).
  HeadroomTooSmall,
  // ECN Kmin/Kmax above the PFC XOFF threshold on a link class: PFC pauses before ECN can act.
  EcnAboveXoff,
  // InfiniBand: a VL's credits on a link class hold less than one full-MTU packet (raised to one
  // packet so that anything moves at all).
  IbCreditsBelowMtu,
  // InfiniBand: a VL's credits on a link class cover less than the credit round trip (one MTU
  // packet plus the cable both ways at the link rate): one flow cannot fill the link.
  IbCreditsBelowBdp,
};

struct ConfigurationFinding {
  ConfigurationFindingKind kind = ConfigurationFindingKind::NoSharedBuffer;
  std::string link_class{};    // HeadroomTooSmall, EcnAboveXoff: the link class concerned
  int64_t headroom_bytes = 0;  // HeadroomTooSmall: configured
  int64_t required_bytes = 0;  // HeadroomTooSmall: required
  int64_t kmin_bytes = 0;      // EcnAboveXoff
  int64_t kmax_bytes = 0;
  int64_t xoff_bytes = 0;     // EcnAboveXoff: the XOFF threshold (its bound when dynamic)
  bool xoff_dynamic = false;  // EcnAboveXoff: XOFF is dynamic, xoff_bytes is its upper bound
  int64_t credit_bytes = 0;   // IbCredits*: the smallest per-VL buffer advertised on the class
  double rate_cap_gbps = 0;   // IbCreditsBelowBdp: what one VL can carry on the class
};

// Runs the checks on a built fabric (`switches` by NodeId, null for NICs): PFC/ECN on RoCE, credits
// on InfiniBand; empty on RoCE without PFC.
std::vector<ConfigurationFinding> check_configuration(const NetworkSpec& spec,
                                                      const Routing& routing,
                                                      const std::vector<Switch*>& switches);

}  // namespace syncsim::net
