#pragma once
// Enhanced Transmission Selection (IEEE 802.1Qaz) between the traffic classes of one egress port:
// strict classes first (higher class first), then deficit weighted round robin (DWRR) over the
// weighted classes, then classes with no weight (what the weighted ones leave, higher first).
// Work-conserving: a class that is empty or paused is skipped and its share goes to the others; it
// keeps no credit for the time it could not send (classic DRR resets an idle class's deficit, so a
// class that was paused cannot burst past its weight when it resumes).
//
// Pure and allocation-free: pick() reads which classes may send and their head packets' sizes and
// updates a few fixed arrays; the port owns the FIFOs.
#include <array>
#include <bit>
#include <cstdint>

#include "sim/core/field_error.hpp"
#include "sim/net/packet.hpp"

namespace syncsim::net {

// Per-class ETS settings of a port. With `enabled` false every class is strict (the plain
// higher-class-first scheduler).
struct EtsParams {
  // The default is what NVIDIA's switches ship in RoCE mode (Cumulus Linux `nv set qos roce`,
  // lossless and lossy alike; Onyx `roce lossless` shows the same TCs): "Port ETS: traffic class 6
  // (CNP) - Strict; traffic class 3 (RoCE) - WRR 50%; traffic class 0 (Other traffic) - WRR 50%"
  // (docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/Layer-1-and-Switch-Ports/
  // Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE, "Default RoCE Configuration"). Here CNPs
  // travel in the highest class (dcqcn_pacing.hpp), which the port always serves strictly.
  bool enabled = true;
  std::array<uint8_t, kMaxPriorities> weight_percent{50, 0, 0, 50, 0, 0, 0, 0};
  uint8_t strict_mask = 0;  // bit c: class c is strict (the CNP class is strict regardless)

  // Range rules (ets_scheduler.cpp): the weights sum to 100 (percent of the port); no class both
  // strict and weighted.
  FieldErrors check() const;
};

class EtsScheduler {
 public:
  // The DWRR quantum per percent of weight. Any positive value gives the weighted shares over many
  // rounds (a deficit carries what a turn did not spend); 1 KiB per percent makes a 50 % class's
  // turn ~12 packets of a 4 KiB MTU, ~1 us at 400 Gb/s, short next to the RTTs DCQCN and PFC act
  // on.
  static constexpr uint32_t kQuantumPerPercent = 1024;

  EtsScheduler() = default;
  // `classes`: the port's traffic classes; `always_strict`: the class CNPs travel in.
  EtsScheduler(const EtsParams& params, uint32_t classes, uint32_t always_strict);

  // The class to serve next among `ready` (bit c: class c has a packet and is not paused), given
  // the wire size of each class's head packet; -1 when `ready` is empty. Serving the returned class
  // is assumed (its deficit is charged).
  int pick(uint32_t ready, const std::array<uint32_t, kMaxPriorities>& head_wire_bytes) {
    if (ready == 0) return -1;
    if (const uint32_t strict = ready & strict_mask_; strict != 0) {
      return static_cast<int>(std::bit_width(strict)) - 1;  // the highest strict class
    }
    // The usual case, inline: one weighted class ready, in its turn, its deficit covering its head
    // packet, and no idle class with credit to drop. What pick_weighted does then, in short.
    const uint32_t weighted = ready & weighted_mask_;
    if (weighted != 0 && (weighted & (weighted - 1)) == 0 && (banked_ & ~weighted) == 0) {
      const auto only = static_cast<uint32_t>(std::countr_zero(weighted));
      if (only == current_ && !turn_fresh_ && deficit_[only] >= head_wire_bytes[only]) {
        deficit_[only] -= head_wire_bytes[only];
        return static_cast<int>(only);
      }
    }
    return pick_weighted(ready, head_wire_bytes);
  }

  uint32_t strict_mask() const { return strict_mask_; }
  uint32_t weighted_mask() const { return weighted_mask_; }

 private:
  // pick() among classes none of which is strict.
  int pick_weighted(uint32_t ready, const std::array<uint32_t, kMaxPriorities>& head_wire_bytes);
  // What every pick reads first and together (an egress port keeps this object on one of its hot
  // cache lines): the masks, whose turn it is, and the deficits. A deficit never exceeds a head
  // packet plus a quantum (at most 100 x 1 KiB), so 32 bits hold it.
  uint8_t strict_mask_ = (1U << kMaxPriorities) - 1;  // default: plain strict priority
  uint8_t weighted_mask_ = 0;                         // classes with a positive weight
  uint8_t banked_ = 0;                                // bit c: deficit_[c] may be above zero
  uint8_t current_ = 0;                               // the weighted class whose turn it is
  bool turn_fresh_ = true;  // current_'s quantum for this turn is not yet added
  uint8_t classes_ = kMaxPriorities;
  std::array<uint32_t, kMaxPriorities> deficit_{};
  std::array<uint32_t, kMaxPriorities> quantum_{};
};

}  // namespace syncsim::net
