#pragma once
// A switch's shared packet buffer, as pure accounting: no events, no packets, just counters, so it can
// be unit-tested alone. Admission charges a packet to its (ingress port, priority); release returns the
// charge when the packet leaves on its egress port. PFC (XOFF/XON thresholds and headroom per ingress
// port and priority) extends this object; today a full buffer means tail drop.
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim::net {

enum class DropReason : uint8_t { BufferFull, NoRoute, Count };
inline constexpr const char* drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::BufferFull: return "buffer_full";
    case DropReason::NoRoute: return "no_route";
    case DropReason::Count: break;
  }
  return "unknown";
}

enum class Admission : uint8_t { Admitted, DroppedBufferFull };

class SharedBufferMmu {
 public:
  SharedBufferMmu(Bytes buffer, uint32_t ports, uint32_t priorities);

  Admission admit(uint32_t ingress_port, uint8_t priority, Bytes size);
  void release(uint32_t ingress_port, uint8_t priority, Bytes size);

  Bytes used() const { return Bytes{used_}; }
  Bytes peak() const { return Bytes{peak_}; }
  Bytes capacity() const { return Bytes{capacity_}; }
  Bytes ingress_bytes(uint32_t port, uint8_t priority) const {
    return Bytes{ingress_[port * priorities_ + priority]};
  }

 private:
  int64_t capacity_;
  int64_t used_ = 0;
  int64_t peak_ = 0;
  uint32_t priorities_;
  std::vector<int64_t> ingress_;  // bytes held per (ingress port, priority)
};

}  // namespace syncsim::net
