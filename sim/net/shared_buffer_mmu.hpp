#pragma once
// A switch's shared packet buffer, as pure accounting: no events, no packets, just counters, so it
// can be unit-tested alone. Admission charges a packet to its (ingress port, priority); release
// returns the charge when the packet leaves on its egress port.
//
// PFC (IEEE 802.1Qbb) lives here too, still as accounting: each lossless (ingress port, priority)
// has an XOFF threshold (static bytes, or dynamic: alpha x free shared buffer, as in Broadcom-style
// MMUs and HPCC's ns-3 switch), an XON point `xon_offset` below it, and a headroom pool reserved
// out of the buffer. admit() and release() return the PFC signal the switch must act on (send PAUSE
// / RESUME upstream on that ingress port and priority); the switch turns signals into packets, so
// this object stays event-free. Bytes that arrive after XOFF go to the headroom; a headroom
// overflow is a drop with reason lossless_headroom_exceeded (reported, never hidden). Lossy
// priorities tail-drop when the shared part is full.
#include <cstdint>
#include <vector>

#include "sim/core/check.hpp"
#include "sim/core/units.hpp"

namespace syncsim::net {

// Deferred: admit() was allowed to defer (see there) and nothing changed.
enum class Admission : uint8_t { Admitted, DroppedBufferFull, DroppedHeadroomExceeded, Deferred };
enum class PfcSignal : uint8_t { None, Pause, Resume };

struct AdmitResult {
  Admission admission = Admission::Admitted;
  PfcSignal pfc = PfcSignal::None;  // Pause: send XOFF upstream on this (ingress port, priority)
};

// PFC accounting parameters of one switch (already resolved: headroom in bytes per ingress port).
struct MmuPfcConfig {
  bool enabled = false;
  uint8_t lossless_mask = 0;  // bit p set: priority p is lossless
  bool dynamic = true;        // XOFF = alpha * (shared capacity - shared used)
  double alpha = 0.125;
  int64_t static_xoff = 0;        // bytes, when !dynamic
  int64_t xon_offset = 3 * 1024;  // RESUME when ingress bytes + xon_offset <= XOFF (or reach 0)
  std::vector<int64_t> headroom;  // per ingress port, bytes reserved per lossless priority
};

class SharedBufferMmu {
 public:
  SharedBufferMmu(Bytes buffer, uint32_t ports, uint32_t priorities, MmuPfcConfig pfc = {});

  // `leaving`: bytes of lossy packets whose last bit leaves the switch at this very instant but
  // whose release has not run yet; a lossy packet arriving at that instant finds their room free
  // (the switch's tie rule, switch.hpp). `may_defer` (the switch holds releases not applied yet):
  // a lossless packet that would not simply go to the shared part below XOFF changes nothing and
  // comes back Deferred, for the switch to apply its due releases and ask again. Releases only
  // lower the pair's count and raise the threshold, so a packet that goes below XOFF on the bytes
  // held now would also do so with them applied, and the sums after admission are the same.
  AdmitResult admit(uint32_t ingress_port, uint8_t priority, Bytes size, Bytes leaving = Bytes{0},
                    bool may_defer = false);
  PfcSignal release(uint32_t ingress_port, uint8_t priority, Bytes size);
  // Whether admitting `bytes` of a lossy priority could decide otherwise had some of the bytes
  // held been released (it reads only the room left; a lossless one: admit's may_defer).
  bool lossy_reads_pending_releases(int64_t bytes) const {
    return shared_used_ + bytes > shared_capacity_;
  }
  // A port whose sender bounds itself (an engine inside the switch, never paused): past XOFF its
  // packets are never dropped for headroom. The buffer's shared part keeps the reservation made
  // for it at construction.
  void unbounded_headroom(uint32_t ingress_port) {
    if (ingress_port < pfc_.headroom.size()) pfc_.headroom[ingress_port] = INT64_MAX / 2;
  }

  Bytes used() const { return Bytes{used_}; }
  // The most bytes held after an admission (Switch::buffer_peak: not where releases wait).
  Bytes peak() const { return Bytes{peak_}; }
  Bytes capacity() const { return Bytes{capacity_}; }
  // Capacity less the headroom reserved for lossless (port, priority) pairs.
  Bytes shared_capacity() const { return Bytes{shared_capacity_}; }
  Bytes shared_used() const { return Bytes{shared_used_}; }
  // Bytes held per (ingress port, priority), shared part plus headroom.
  Bytes ingress_bytes(uint32_t port, uint8_t priority) const {
    const Counter& c = counters_[index(port, priority)];
    return Bytes{c.shared + c.headroom};
  }
  Bytes headroom_used(uint32_t port, uint8_t priority) const {
    return Bytes{counters_[index(port, priority)].headroom};
  }
  bool xoff(uint32_t port, uint8_t priority) const { return counters_[index(port, priority)].xoff; }
  bool lossless(uint8_t priority) const {
    return pfc_.enabled && ((pfc_.lossless_mask >> priority) & 1U) != 0;
  }
  // The current XOFF threshold for the shared part of one (port, priority).
  int64_t xoff_threshold() const { return xoff_threshold_after(0); }
  // The threshold once `bytes` more are charged to the shared part.
  int64_t xoff_threshold_after(int64_t bytes) const {
    if (!pfc_.dynamic) return pfc_.static_xoff;
    const int64_t free_shared = shared_capacity_ - shared_used_ - bytes;
    return free_shared > 0 ? static_cast<int64_t>(pfc_.alpha * static_cast<double>(free_shared))
                           : 0;
  }

 private:
  std::size_t index(uint32_t port, uint8_t priority) const {
    return static_cast<std::size_t>(port) * priorities_ + priority;
  }

  int64_t capacity_;
  int64_t shared_capacity_;
  int64_t used_ = 0;
  int64_t shared_used_ = 0;
  int64_t peak_ = 0;
  uint32_t priorities_;
  MmuPfcConfig pfc_;
  // Per (ingress port, priority), together so that one packet touches one cache line.
  struct Counter {
    int64_t shared = 0;    // bytes held in the shared part
    int64_t headroom = 0;  // bytes held in this pair's headroom
    bool xoff = false;     // a PAUSE is outstanding
  };
  std::vector<Counter> counters_;
};

// Inline: every packet through a switch is admitted and released once.
inline AdmitResult SharedBufferMmu::admit(uint32_t ingress_port, uint8_t priority, Bytes size,
                                          Bytes leaving, bool may_defer) {
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
    // The usual case: still below XOFF with the packet charged (no PAUSE outstanding means no
    // headroom held), so no PAUSE either; the threshold is the one the check below would read.
    if (to_shared && c.shared + bytes < xoff_threshold_after(bytes)) [[likely]] {
      shared_used_ += bytes;
      c.shared += bytes;
      used_ += bytes;
      if (used_ > peak_) peak_ = used_;
      return r;
    }
    if (may_defer) {
      r.admission = Admission::Deferred;
      return r;
    }
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

inline PfcSignal SharedBufferMmu::release(uint32_t ingress_port, uint8_t priority, Bytes size) {
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
