// Range rules of the InfiniBand parameters (infiniband_params.hpp).
#include "sim/net/infiniband_params.hpp"

#include <bit>
#include <string>
#include <utility>

namespace syncsim::net {

FieldErrors IbCongestionControlParams::check() const {
  FieldErrors errors;
  if (threshold.count() <= 0) {
    errors.push_back({"threshold", "expected a queue threshold > 0", bytes_text(threshold)});
  }
  if (ccti_timer <= Time::zero()) {
    errors.push_back({"ccti_timer", "expected a timer > 0", time_text(ccti_timer)});
  }
  if (ccti_increase < 1) {
    errors.push_back({"ccti_increase", "expected an increase >= 1", std::to_string(ccti_increase)});
  }
  if (ccti_limit > 16383) {
    errors.push_back({"ccti_limit",
                      "expected a table index limit <= 16383 (the annex's table holds 16384 "
                      "entries)",
                      std::to_string(ccti_limit)});
  }
  if (ccti_min > ccti_limit) {
    errors.push_back({"ccti_min",
                      "expected ccti_min <= ccti_limit (" + std::to_string(ccti_limit) + ")",
                      std::to_string(ccti_min)});
  }
  if (cct_step < Time::zero()) {
    errors.push_back({"cct_step", "expected a table step >= 0", time_text(cct_step)});
  }
  return errors;
}

FieldErrors InfinibandParams::check() const {
  FieldErrors errors;
  for (std::size_t sl = 0; sl < sl_to_vl.size(); ++sl) {
    if (sl_to_vl[sl] >= kMaxPriorities) {
      errors.push_back({"sl_to_vl",
                        "expected a VL in 0.." + std::to_string(kMaxPriorities - 1) + " for SL " +
                            std::to_string(sl),
                        std::to_string(sl_to_vl[sl])});
    }
  }
  if (!vl_buffer_auto && vl_buffer.count() < 64) {
    errors.push_back(
        {"vl_buffer", "expected at least one 64-byte credit block per VL", bytes_text(vl_buffer)});
  }
  for (FieldError e : congestion_control.check()) {
    e.field = "congestion_control." + e.field;
    errors.push_back(std::move(e));
  }
  return errors;
}

uint32_t InfinibandParams::vls_in_use(uint32_t priorities) const {
  uint32_t mask = 0;
  for (uint32_t sl = 0; sl < priorities && sl < kMaxPriorities; ++sl) mask |= 1U << sl_to_vl[sl];
  return static_cast<uint32_t>(std::popcount(mask));
}

}  // namespace syncsim::net
