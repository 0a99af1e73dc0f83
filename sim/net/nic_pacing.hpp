#pragma once
// What a NIC-side congestion control does for the NICs and the reliable transports: pace each
// flow (next_send_ps), hear of each packet sent, turn a congestion-marked arrival at the
// destination into a notification back to the source (notify), react to that notification at the
// source (on_cnp) and run its timers (Nic::kRateTimer). DCQCN on RoCE (dcqcn_pacing.hpp) and
// InfiniBand congestion control (ib_congestion_control.hpp) implement it; the NICs hold one.
#include <cstdint>

#include "sim/core/units.hpp"
#include "sim/net/packet.hpp"

namespace syncsim::net {

class NicPacing {
 public:
  virtual ~NicPacing() = default;
  // A new flow (ids arrive in order) on a NIC of line rate `line_rate`. `persistent`: the flow is a
  // message on the caller's queue pair `queue_pair`, which outlives it.
  virtual void add_flow(FlowId id, Bandwidth line_rate, bool persistent, uint32_t queue_pair) = 0;
  // The flow may start its next packet from this time (picoseconds).
  virtual int64_t next_send_ps(FlowId id) const = 0;
  // Source NIC sent `wire_bytes` (payload `payload`) of flow `id` now.
  virtual void on_sent(FlowId id, uint32_t wire_bytes, uint32_t payload) = 0;
  // Destination NIC received a congestion-marked (ECN CE / FECN) data packet of flow `id`.
  virtual void notify(FlowId id) = 0;
  // Source NIC received the notification (CNP / BECN) for flow `id`.
  virtual void on_cnp(FlowId id) = 0;
  // The timer with argument `arg` fired (Nic::kRateTimer).
  virtual void on_rate_timer(uint32_t arg) = 0;
  // The flow's current sending rate (bits per second).
  virtual double rate_bps(FlowId id) const = 0;
};

}  // namespace syncsim::net
