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

AdmitResult SharedBufferMmu::admit(uint32_t ingress_port, uint8_t priority, Bytes size,
                                   Bytes leaving) {
  const int64_t bytes = size.count();
  Counter& c = counters_[index(ingress_port, priority)];
  AdmitResult r;
  if (!lossless(priority)) {
    if (shared_used_ - leaving.count() + bytes > shared_capacity_) {
      r.admission = Admission::DroppedBufferFull;
      return r;
    }
    shared_used_ += bytes;
    c.shared += bytes;
  } else {
    // Below XOFF (and with room in the shared part) a packet is charged to the shared part; once a
    // PAUSE is outstanding, or the packet would cross XOFF, it lands in this pair's headroom.
    const bool to_shared =
        !c.xoff && c.shared + bytes <= xoff_threshold() && shared_used_ + bytes <= shared_capacity_;
    if (to_shared) {
      shared_used_ += bytes;
      c.shared += bytes;
    } else if (c.headroom + bytes <= pfc_.headroom[ingress_port]) {
      c.headroom += bytes;
    } else {
      r.admission = Admission::DroppedHeadroomExceeded;
    }
    if (!c.xoff &&
        (c.headroom > 0 || c.shared >= xoff_threshold() || r.admission != Admission::Admitted)) {
      c.xoff = true;
      r.pfc = PfcSignal::Pause;
    }
    if (r.admission != Admission::Admitted) return r;
  }
  used_ += bytes;
  if (used_ > peak_) peak_ = used_;
  return r;
}

PfcSignal SharedBufferMmu::release(uint32_t ingress_port, uint8_t priority, Bytes size) {
  const int64_t bytes = size.count();
  Counter& c = counters_[index(ingress_port, priority)];
  SIM_CHECK(c.shared + c.headroom >= bytes && used_ >= bytes,
            "switch buffer released more bytes than it admitted");
  used_ -= bytes;
  if (c.headroom == 0) {
    c.shared -= bytes;
    shared_used_ -= bytes;
    if (!c.xoff) return PfcSignal::None;
  } else {
    // Headroom drains first: bytes are fungible within one (port, priority).
    const int64_t from_headroom = c.headroom < bytes ? c.headroom : bytes;
    c.headroom -= from_headroom;
    c.shared -= bytes - from_headroom;
    shared_used_ -= bytes - from_headroom;
  }
  if (c.xoff && c.headroom == 0 &&
      (c.shared == 0 || c.shared + pfc_.xon_offset <= xoff_threshold())) {
    c.xoff = false;
    return PfcSignal::Resume;
  }
  return PfcSignal::None;
}

}  // namespace syncsim::net
