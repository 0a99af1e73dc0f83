// Range rules of the fabric parameter structs (network_spec.hpp), next to their fields so every
// producer of a NetworkSpec (scenario files, tests, tools) is held to the same rules. The structs
// of the mechanisms' own headers keep theirs beside them (dcqcn.cpp, ets_scheduler.cpp,
// link_impairment.cpp, transport.cpp).
#include "sim/net/network_spec.hpp"

#include <string>

namespace syncsim::net {

FieldErrors LinkParams::check() const {
  FieldErrors errors;
  if (bandwidth.bits_per_second() <= 0) {
    errors.push_back({"bandwidth", "expected a bandwidth > 0, got " + rate_text(bandwidth)});
  }
  if (delay < Time::zero()) {
    errors.push_back({"delay", "expected a delay >= 0, got " + time_text(delay)});
  }
  if (mtu.count() <= 0) {
    errors.push_back({"mtu", "expected an MTU > 0 bytes, got " + std::to_string(mtu.count())});
  }
  if (header.count() < 0) {
    errors.push_back(
        {"header", "expected a header size >= 0 bytes, got " + std::to_string(header.count())});
  }
  return errors;
}

FieldErrors LinkParams::check_real_rate() const {
  FieldErrors errors;
  const int64_t bps = bandwidth.bits_per_second();
  if (bps < kMinBps || bps > kMaxBps) {
    errors.push_back({"bandwidth",
                      "expected a link rate in 1Mbps..100Tbps (the range of real links, and what "
                      "keeps simulated time within its int64 picoseconds)",
                      rate_text(bandwidth)});
  }
  return errors;
}

FieldErrors PfcParams::check() const {
  FieldErrors errors;
  if (!dynamic_threshold && static_xoff.count() <= 0) {
    errors.push_back(
        {"static_xoff", "expected a positive XOFF threshold, got " + bytes_text(static_xoff)});
  }
  if (dynamic_threshold && !(alpha > 0.0 && alpha <= 16.0)) {
    errors.push_back(
        {"alpha", "expected 0 < dynamic_alpha <= 16 (HPCC uses 0.125)", number_text(alpha)});
  }
  if (xon_offset.count() <= 0) {
    errors.push_back({"xon_offset", "expected xon_offset > 0 (XON must sit below XOFF), got " +
                                        bytes_text(xon_offset)});
  } else if (!dynamic_threshold && xon_offset.count() > static_xoff.count()) {
    errors.push_back({"xon_offset", "expected xon_offset <= the static XOFF threshold (" +
                                        bytes_text(static_xoff) +
                                        ") so that 0 <= XON < XOFF, got " +
                                        bytes_text(xon_offset)});
  }
  if (response_time < Time::zero()) {
    errors.push_back({"response_time", "expected a non-negative time", time_text(response_time)});
  }
  if (pause_quanta > 65535) {
    errors.push_back(
        {"pause_quanta", "expected 0..65535 (a 16-bit field)", std::to_string(pause_quanta)});
  }
  if (deadlock_detection_time < Time::zero()) {
    errors.push_back({"deadlock_detection_time", "expected a non-negative time",
                      time_text(deadlock_detection_time)});
  }
  if (watchdog_time <= Time::zero()) {
    errors.push_back({"watchdog_time", "expected a positive time", time_text(watchdog_time)});
  }
  return errors;
}

FieldErrors EcnParams::check() const {
  FieldErrors errors;
  if (!kmin_auto && !kmax_auto && kmin.count() > kmax.count()) {
    errors.push_back({"kmax", "expected kmax at or above kmin (" + std::to_string(kmin.count()) +
                                  " B), got " + std::to_string(kmax.count()) + " B"});
  }
  if (!(pmax > 0.0 && pmax <= 1.0)) {
    errors.push_back({"pmax", "expected 0 < pmax <= 1", number_text(pmax)});
  }
  return errors;
}

FieldErrors NicParams::check() const {
  FieldErrors errors;
  for (FieldError& e : dcqcn.check()) {
    e.field = "dcqcn." + e.field;
    errors.push_back(std::move(e));
  }
  if (rx_drain_rate.bits_per_second() <= 0) {
    errors.push_back({"rx_drain_rate", "expected a positive rate", rate_text(rx_drain_rate)});
  }
  if (!(rx_xon < rx_xoff && rx_xoff <= rx_buffer)) {
    errors.push_back({"rx_xoff", "expected xon < xoff <= buffer"});
  }
  return errors;
}

FieldErrors SwitchParams::check() const {
  FieldErrors errors;
  if (priorities == 0 || priorities > kMaxPriorities) {
    errors.push_back({"priorities", "expected 1 to " + std::to_string(kMaxPriorities) +
                                        " priorities, got " + std::to_string(priorities)});
  }
  if (buffer.count() <= 0) {
    errors.push_back(
        {"buffer", "expected a buffer > 0 bytes, got " + std::to_string(buffer.count())});
  }
  return errors;
}

FieldErrors FlowCcCorrection::check() const {
  FieldErrors errors;
  if (!(contended_efficiency > 0.0 && contended_efficiency <= 1.0)) {
    errors.push_back({"contended_efficiency",
                      "expected an efficiency in (0, 1] (1 = no correction)",
                      number_text(contended_efficiency)});
  }
  return errors;
}

}  // namespace syncsim::net
