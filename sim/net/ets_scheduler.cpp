#include "sim/net/ets_scheduler.hpp"

#include <bit>
#include <string>

#include "sim/core/check.hpp"

namespace syncsim::net {

FieldErrors EtsParams::check() const {
  FieldErrors errors;
  uint32_t sum = 0;
  for (const uint8_t percent : weight_percent) sum += percent;
  if (sum != 100) {
    errors.push_back({"weight_percent", "expected weights (percent of the port) that sum to 100",
                      std::to_string(sum)});
  }
  for (uint32_t c = 0; c < kMaxPriorities; ++c) {
    if (((static_cast<uint32_t>(strict_mask) >> c) & 1U) != 0 && weight_percent[c] != 0) {
      errors.push_back({"strict_mask", "expected each class either strict or weighted, got class " +
                                           std::to_string(c) + " in both"});
      break;
    }
  }
  return errors;
}

EtsScheduler::EtsScheduler(const EtsParams& params, uint32_t classes, uint32_t always_strict)
    : classes_(static_cast<uint8_t>(classes)) {
  SIM_CHECK(classes >= 1 && classes <= kMaxPriorities, "traffic class count out of range");
  const uint32_t all = (1U << classes) - 1;
  if (!params.enabled) {
    strict_mask_ = static_cast<uint8_t>(all);
    return;
  }
  uint32_t strict = params.strict_mask & all;
  if (always_strict < classes) strict |= 1U << always_strict;
  uint32_t weighted = 0;
  for (uint32_t c = 0; c < classes; ++c) {
    if (((strict >> c) & 1U) != 0 || params.weight_percent[c] == 0) continue;
    weighted |= 1U << c;
    quantum_[c] = params.weight_percent[c] * kQuantumPerPercent;
  }
  strict_mask_ = static_cast<uint8_t>(strict);
  weighted_mask_ = static_cast<uint8_t>(weighted);
}

int EtsScheduler::pick_weighted(uint32_t ready,
                                const std::array<uint32_t, kMaxPriorities>& head_wire_bytes) {
  const uint32_t weighted = ready & weighted_mask_;
  if (weighted == 0) {
    // Only classes without a weight: what the weighted ones leave, higher class first.
    return static_cast<int>(std::bit_width(ready)) - 1;
  }
  // An idle or paused weighted class banks no credit.
  for (uint32_t idle = banked_ & ~weighted; idle != 0; idle &= idle - 1) {
    deficit_[static_cast<uint32_t>(std::countr_zero(idle))] = 0;
  }
  banked_ = static_cast<uint8_t>(banked_ & weighted);
  // (weighted & (weighted - 1)) == 0: one bit set (weighted is not 0). Not std::has_single_bit,
  // which without -mpopcnt calls libgcc's popcount on every pick.
  if ((weighted & (weighted - 1)) == 0) {
    // One weighted class ready (the usual case): what the loop below does, without walking the
    // other classes. It reaches the class with a fresh turn unless the turn is already its own,
    // and goes round again, one fresh quantum each time, until the deficit covers the head packet.
    const auto only = static_cast<uint32_t>(std::countr_zero(weighted));
    if (current_ != only) {
      current_ = static_cast<uint8_t>(only);
      turn_fresh_ = true;
    }
    if (turn_fresh_) {
      deficit_[only] += quantum_[only];
      turn_fresh_ = false;
    }
    const uint32_t head = head_wire_bytes[only];
    if (deficit_[only] < head) {
      deficit_[only] +=
          (head - deficit_[only] + quantum_[only] - 1) / quantum_[only] * quantum_[only];
    }
    deficit_[only] -= head;
    banked_ = static_cast<uint8_t>(banked_ | (1U << only));
    return static_cast<int>(only);
  }
  // Terminates: every pass over the classes adds a positive quantum to each ready weighted class.
  for (;;) {
    if (((weighted >> current_) & 1U) != 0) {
      if (turn_fresh_) {
        deficit_[current_] += quantum_[current_];
        banked_ = static_cast<uint8_t>(banked_ | (1U << current_));
        turn_fresh_ = false;
      }
      const uint32_t head = head_wire_bytes[current_];
      if (deficit_[current_] >= head) {
        deficit_[current_] -= head;
        return static_cast<int>(current_);
      }
    }
    current_ = static_cast<uint8_t>(current_ + 1 == classes_ ? 0 : current_ + 1);
    turn_fresh_ = true;
  }
}

}  // namespace syncsim::net
