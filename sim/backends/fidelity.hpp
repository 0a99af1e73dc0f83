#pragma once
#include <cstdint>

namespace syncsim {

enum class Fidelity : uint8_t {
  Packet,    // every packet through ports, links, switches and NICs
  Analytic,  // per-path latency + bytes / bottleneck bandwidth, no contention
};

}  // namespace syncsim
