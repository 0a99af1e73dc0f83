#include "sim/net/shared_buffer_mmu.hpp"

#include <utility>

#include "sim/core/check.hpp"

namespace syncsim::net {

SharedBufferMmu::SharedBufferMmu(Bytes buffer, uint32_t ports, uint32_t priorities,
                                 MmuPfcConfig pfc)
    : capacity_(buffer.count()),
      shared_capacity_(buffer.count()),
      priorities_(priorities),
      pfc_(std::move(pfc)),
      counters_(static_cast<std::size_t>(ports) * priorities) {
  if (pfc_.enabled) {
    SIM_CHECK(pfc_.headroom.size() == ports, "PFC headroom needs one entry per ingress port");
    int64_t reserved = 0;
    for (uint32_t prio = 0; prio < priorities; ++prio) {
      if (!lossless(static_cast<uint8_t>(prio))) continue;
      for (int64_t h : pfc_.headroom) reserved += h;
    }
    shared_capacity_ = capacity_ - reserved;
    if (shared_capacity_ < 0) shared_capacity_ = 0;
  }
}

}  // namespace syncsim::net
