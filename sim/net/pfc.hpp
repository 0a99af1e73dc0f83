#pragma once
// Priority flow control (IEEE 802.1Qbb) outside the buffer accounting (shared_buffer_mmu.hpp holds
// the XOFF/XON thresholds and the headroom pool):
//   - PAUSE / RESUME frames: a switch whose ingress (port, priority) crosses XOFF sends PAUSE out
//   of
//     that port, at XON it sends RESUME (Switch::send_pfc); the peer's egress port stops starting
//     packets of that priority (EgressPort::set_paused). Frames travel as packets, ahead of data.
//   - Quanta: a PAUSE with quanta q > 0 holds for q x 512 bit times unless refreshed; the sender
//     re-sends it at half that time while still above XOFF. q = 0: the PAUSE holds until RESUME.
//   - Watchdog (per switch egress queue): paused continuously for the detection time, the queue
//     ignores PAUSE for one more detection time (the storm period) and, in drop mode, drops what it
//     holds and what arrives for it meanwhile (drop reason pfc_watchdog).
// The egress port's side of these lives in pfc.cpp (EgressPort's PFC methods), beside the frame
// generation of switches.
#include <array>
#include <cstdint>

#include "sim/core/event_queue.hpp"
#include "sim/core/units.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/packet.hpp"
#include "sim/net/routing.hpp"
#include "sim/net/shared_buffer_mmu.hpp"

namespace syncsim::net {

// How long a PAUSE of `quanta` holds a priority on a link of `bandwidth` (quanta x 512 bit times).
inline Time pause_hold_time(Bandwidth bandwidth, uint32_t quanta) {
  return bandwidth.tx_time(Bytes{static_cast<int64_t>(quanta) * 64});
}
// The sender of a PAUSE with quanta refreshes it at half the hold time.
inline Time pause_refresh_time(Bandwidth bandwidth, uint32_t quanta) {
  return bandwidth.tx_time(Bytes{static_cast<int64_t>(quanta) * 32});
}

// Lossless headroom an ingress port on `link` needs (references.md section 6), in bytes.
int64_t required_headroom(const LinkParams& link, Time response_time);

// The buffer accounting's PFC configuration for switch `sw` (headroom resolved per ingress port).
// NVLink is credit-based and lossless by itself: PFC is for the Ethernet switches only.
MmuPfcConfig switch_pfc_config(const PfcParams& pfc, const Routing& routing, NodeId sw,
                               bool ethernet);

// The receiving side of PFC at one egress port, besides the paused and storm bit masks the port
// keeps on its hot path.
struct PfcPortState {
  std::array<int64_t, kMaxPriorities> paused_since_ps{};
  int64_t paused_ps = 0;  // closed paused intervals, summed over priorities
  uint64_t pause_frames_received = 0;
  int64_t watchdog_ps = 0;  // 0: no watchdog
  bool watchdog_drop = true;
  std::array<int64_t, kMaxPriorities> storm_until_ps{};
  std::array<CancelToken, kMaxPriorities> watchdog_tokens{};
  std::array<CancelToken, kMaxPriorities> expiry_tokens{};   // PAUSE quanta expiry
  std::array<CancelToken, kMaxPriorities> refresh_tokens{};  // PAUSE refresh (sending side)
};

}  // namespace syncsim::net
