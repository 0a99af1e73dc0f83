#pragma once
// DCQCN at the NICs, around the pure rate controller of dcqcn.hpp:
//   - reaction point (source NIC): per-queue-pair pacing at the controller's current rate (a QP
//     may start its next packet at next_send_at), the rate-increase timer, and the reaction to
//     CNPs;
//   - notification point (destination NIC): an ECN-marked data packet makes it send a CNP back to
//     the source queue pair, at most one per cnp_interval, on the reverse route at the highest
//     priority.
// The state belongs to the queue pair, not to the message: a flow started on a persistent QP (the
// same connection, as NCCL keeps one per channel and peer for the whole job) finds the rate,
// alpha and timers the QP's previous messages left; a flow without one gets a QP of its own.
// While a QP has no flow sending, its rate timer is not scheduled: the expiries it missed are
// applied when its next flow starts (or stop once it is back at line rate), so an idle QP costs no
// events. The NICs share one DcqcnPacing; it exists only when DCQCN is on. Its rate timers are
// events of the source NIC (Nic::kRateTimer, argument the QP index).
//
// In a windowed run (partition_windows.hpp) the reaction point works in the source NIC's partition
// and the notification point in the destination NIC's; each writes only its own side's state (the
// last CNP time is kept apart from the rest of the QP), and the CNPs' reverse routes are laid out
// when the flow starts, since the route arena may not grow from inside a partition.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/stable_vector.hpp"
#include "sim/net/dcqcn.hpp"
#include "sim/net/net_context.hpp"
#include "sim/net/nic_pacing.hpp"

namespace syncsim::net {

class Nic;

struct DcqcnQpState {
  DcqcnRateController rc;               // reaction point at the source NIC
  const DcqcnParams* params = nullptr;  // the source NIC's; null: its DCQCN is off (never paced)
  int64_t next_send_ps = 0;             // pacing: the QP may start its next packet from here
  int64_t last_send_ps = INT64_MIN;     // when the QP's last packet started (INT64_MIN: none)
  uint32_t last_wire_bytes = 0;         // and its wire size: a rate change re-spaces that gap
  CancelToken rate_timer;               // pending while a flow of the QP is sending and it is paced
  int64_t timer_due_ps = INT64_MIN;     // when the next timer expiry is (or was) due
  bool timer_armed = false;             // rate_timer has an event pending
  uint32_t sending_flows = 0;           // flows of the QP with bytes left to send
  NodeId src = kNoNode;                 // the source NIC (owner of the rate timer)
  bool persistent = false;              // outlives its flows (else made for one flow)
};

// What DCQCN did to one flow (one message): CNPs sent for it by its destination, rate cuts they
// caused at its queue pair, and the lowest rate those cuts (or the QP's state when the flow
// started, for a persistent QP) put it at. Cuts caused by another flow of a shared QP are that
// flow's.
struct DcqcnFlowStats {
  uint32_t cnps = 0;
  uint32_t rate_cuts = 0;
  double min_rate_bps = 0;
};

class DcqcnPacing final : public NicPacing {
 public:
  // `params_of`: each NIC's DCQCN parameters by NodeId, null where DCQCN is off (its flows are
  // never paced and it sends no CNPs). `cnp_priority`: the class CNPs travel in (the highest).
  // `nics`: by NodeId, null for switches.
  DcqcnPacing(const NetContext& ctx, std::vector<const DcqcnParams*> params_of,
              uint8_t cnp_priority, const std::vector<Nic*>& nics)
      : ctx_(ctx), params_of_(std::move(params_of)), cnp_priority_(cnp_priority), nics_(nics) {}
  // A new flow (ids arrive in order) on a NIC of line rate `line_rate`. `persistent_qp`: the
  // caller's queue-pair number when the flow is a message on a persistent QP (flows naming the
  // same number share its state), else a fresh QP is made for it.
  void add_flow(FlowId id, Bandwidth line_rate, bool persistent, uint32_t persistent_qp) override;
  // A windowed run: the context of each node's partition, by NodeId (unset: the one given at
  // construction for all).
  void set_node_contexts(const std::vector<const NetContext*>* by_node) { node_ctx_ = by_node; }
  const DcqcnQpState& qp_of(FlowId id) const { return qps_[qp_of_flow_[id]]; }
  int64_t next_send_ps(FlowId id) const override { return qps_[qp_of_flow_[id]].next_send_ps; }
  double rate_bps(FlowId id) const override { return qp_of(id).rc.rate_bps(); }
  std::size_t queue_pairs() const { return qps_.size(); }
  const DcqcnFlowStats& flow_stats(FlowId id) const { return flow_stats_[id]; }

  // Source NIC sent `wire_bytes` (payload `payload`) of flow `id` now: pacing and byte counter.
  void on_sent(FlowId id, uint32_t wire_bytes, uint32_t payload) override;
  // Destination NIC received an ECN-marked data packet of flow `id`: maybe send a CNP.
  void notify(FlowId id) override;
  // The flow's data route changed (network_faults.hpp): its CNPs take the reverse of the new one.
  void rerouted(FlowId id) { cnp_route_of_flow_[id] = UINT32_MAX; }
  // Source NIC received a CNP for flow `id` (it acts on the flow's QP, even if the flow is done).
  void on_cnp(FlowId id) override;
  // The rate-increase timer of QP `qp` fired (Nic::kRateTimer).
  void on_rate_timer(uint32_t qp) override;

 private:
  // The QP's rate changed: the gap after its last packet is re-timed at the new rate (like HPCC's
  // ns-3 ChangeRate), so a flow cut to a few Mb/s is not stuck for milliseconds after it recovers.
  void repace(uint32_t qp);
  void arm_timer(uint32_t qp, int64_t due_ps);
  // Applies the timer expiries a QP without sending flows missed up to now.
  void catch_up(uint32_t qp);
  // The context where node `node` works (its partition's in a windowed run).
  const NetContext& ctx_of(NodeId node) const {
    return node_ctx_ == nullptr ? ctx_ : *(*node_ctx_)[node];
  }

  const NetContext& ctx_;
  const std::vector<const NetContext*>* node_ctx_ = nullptr;
  std::vector<const DcqcnParams*> params_of_;  // by NodeId
  uint8_t cnp_priority_;
  const std::vector<Nic*>& nics_;
  StableVector<DcqcnQpState> qps_;  // stable: the rate timers' tokens must not move
  // Notification point, by QP: when its last CNP was sent (INT64_MIN: none); the destination's
  // state, apart from the source's.
  StableVector<int64_t> last_cnp_ps_;
  std::vector<uint32_t> qp_of_flow_;
  std::vector<uint32_t> cnp_route_of_flow_;  // the reverse route (dst -> src), built on first CNP
  std::vector<DcqcnFlowStats> flow_stats_;   // by flow id
  std::unordered_map<uint32_t, uint32_t> persistent_;  // caller's QP number -> index in qps_
};

}  // namespace syncsim::net
