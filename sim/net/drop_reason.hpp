#pragma once
// Why a packet left the network without being delivered. The names are the keys of the run's
// `drops` table (JSON and text output), so they are a contract: add reasons, do not rename them.
#include <cstdint>

namespace syncsim::net {

enum class DropReason : uint8_t {
  BufferFull,
  NoRoute,
  LosslessHeadroomExceeded,
  LinkLoss,
  PfcWatchdog,
  NicRxOverflow,
  LinkDown,  // on a link that went down, or routed to one before routing converged
  Count
};

inline constexpr const char* drop_reason_name(DropReason r) {
  switch (r) {
    case DropReason::BufferFull:
      return "buffer_full";
    case DropReason::NoRoute:
      return "no_route";
    case DropReason::LosslessHeadroomExceeded:
      return "lossless_headroom_exceeded";
    case DropReason::LinkLoss:
      return "link_loss";
    case DropReason::PfcWatchdog:
      return "pfc_watchdog";
    case DropReason::NicRxOverflow:
      return "nic_rx_overflow";
    case DropReason::LinkDown:
      return "link_down";
    case DropReason::Count:
      break;
  }
  return "unknown";
}

}  // namespace syncsim::net
