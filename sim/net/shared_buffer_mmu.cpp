#include "sim/net/shared_buffer_mmu.hpp"

#include "sim/core/check.hpp"

namespace syncsim::net {

SharedBufferMmu::SharedBufferMmu(Bytes buffer, uint32_t ports, uint32_t priorities)
    : capacity_(buffer.count()),
      priorities_(priorities),
      ingress_(static_cast<std::size_t>(ports) * priorities, 0) {}

Admission SharedBufferMmu::admit(uint32_t ingress_port, uint8_t priority, Bytes size) {
  if (used_ + size.count() > capacity_) return Admission::DroppedBufferFull;
  used_ += size.count();
  if (used_ > peak_) peak_ = used_;
  ingress_[ingress_port * priorities_ + priority] += size.count();
  return Admission::Admitted;
}

void SharedBufferMmu::release(uint32_t ingress_port, uint8_t priority, Bytes size) {
  int64_t& held = ingress_[ingress_port * priorities_ + priority];
  SIM_CHECK(held >= size.count() && used_ >= size.count(),
            "switch buffer released more bytes than it admitted");
  held -= size.count();
  used_ -= size.count();
}

}  // namespace syncsim::net
