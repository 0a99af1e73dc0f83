#pragma once
// DCQCN at the NICs, around the pure rate controller of dcqcn.hpp:
//   - reaction point (source NIC): per-flow pacing at the controller's current rate (a flow may
//   start
//     its next packet at next_send_at), the rate-increase timer, and the reaction to CNPs;
//   - notification point (destination NIC): an ECN-marked data packet makes it send a CNP back to
//   the
//     source queue pair, at most one per cnp_interval, on the reverse route at the highest
//     priority.
// The NICs share one DcqcnPacing (the state is per flow, indexed by FlowId); it exists only when
// DCQCN is on. Its rate timers are events of the source NIC (Nic::kRateTimer).
#include <cstdint>
#include <deque>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/net/dcqcn.hpp"
#include "sim/net/net_context.hpp"

namespace syncsim::net {

class Nic;

struct DcqcnFlowState {
  DcqcnRateController rc;                 // reaction point at the source NIC
  int64_t next_send_ps = 0;               // pacing: the flow may start its next packet from here
  int64_t last_send_ps = INT64_MIN;       // when the flow's last packet started (INT64_MIN: none)
  uint32_t last_wire_bytes = 0;           // and its wire size: a rate change re-spaces that gap
  CancelToken rate_timer;                 // a cut restarts the timer; the flow's last byte sent
                                          // cancels it, so no event outlives the flow
  int64_t last_cnp_ps = INT64_MIN;        // notification point: last CNP sent for this flow
  uint32_t cnp_route_begin = UINT32_MAX;  // the reverse route (dst -> src), built on first CNP
};

class DcqcnPacing {
 public:
  // `cnp_priority`: the class CNPs travel in (the highest). `nics`: by NodeId, null for switches.
  DcqcnPacing(const NetContext& ctx, const DcqcnParams& params, uint8_t cnp_priority,
              const std::vector<Nic*>& nics)
      : ctx_(ctx), params_(params), cnp_priority_(cnp_priority), nics_(nics) {}
  // A new flow (ids arrive in order) starting at line rate `line_rate`.
  void add_flow(FlowId id, Bandwidth line_rate);
  const DcqcnFlowState& flow(FlowId id) const { return flows_[id]; }
  int64_t next_send_ps(FlowId id) const { return flows_[id].next_send_ps; }

  // Source NIC sent `wire_bytes` (payload `payload`) of flow `id` now: pacing and byte counter.
  void on_sent(FlowId id, uint32_t wire_bytes, uint32_t payload);
  // Destination NIC received an ECN-marked data packet of flow `id`: maybe send a CNP.
  void notify(FlowId id);
  // Source NIC received a CNP for flow `id`.
  void on_cnp(FlowId id);
  // The flow's rate-increase timer fired (Nic::kRateTimer).
  void on_rate_timer(FlowId id);

 private:
  // The flow's rate changed: the gap after its last packet is re-timed at the new rate (like HPCC's
  // ns-3 ChangeRate), so a flow cut to a few Mb/s is not stuck for milliseconds after it recovers.
  void repace(FlowId id);

  const NetContext& ctx_;
  const DcqcnParams& params_;
  uint8_t cnp_priority_;
  const std::vector<Nic*>& nics_;
  std::deque<DcqcnFlowState> flows_;  // a deque: the rate timers' tokens must not move
};

}  // namespace syncsim::net
