#pragma once
// Timed faults as the backends apply them: plain data, resolved from a scenario's `faults:` by
// run/ (docs/faults.md). Each is a primitive change at one instant; a switch going down is every
// one of its cables going down, a flap a down and an up.
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::net {

enum class NetFaultKind : uint8_t {
  LinkDown,       // the cables stop carrying packets (both directions)
  LinkUp,         // ... carry them again, at their full rate
  LinkRate,       // the cables run at `fraction` of their rate (a degraded link)
  PfcStormStart,  // NIC `nic` starts holding its switch's port paused on `priority`
  PfcStormEnd,    // ... and releases it
};

struct NetFault {
  Time at = Time::zero();
  NetFaultKind kind = NetFaultKind::LinkDown;
  std::vector<uint32_t> links{};  // cables (indices into NetworkSpec::links)
  double fraction = 1.0;          // LinkRate: in (0, 1]
  NodeId nic = kNoNode;           // PfcStorm*
  uint8_t priority = 0;           // PfcStorm*
};

// How routing reacts: it keeps routing onto a cable that went down (and those packets are lost)
// until `convergence` later, then the ECMP groups shrink and flows re-hash (routing.hpp). A cable
// that comes back up is used again after the same delay.
struct FaultParams {
  Time convergence = Time::zero();
};

}  // namespace syncsim::net
