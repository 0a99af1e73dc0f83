#pragma once
#include <cstdint>

namespace syncsim {

enum class Fidelity : uint8_t {
  Packet,    // every packet through ports, links, switches and NICs
  Analytic,  // per-path latency + bytes / bottleneck bandwidth, no contention
  Flow,      // fluid flows sharing links max-min fairly, plus per-path pipeline latency
};

}  // namespace syncsim
