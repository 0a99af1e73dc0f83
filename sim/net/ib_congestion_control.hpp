#pragma once
// InfiniBand congestion control at the NICs (IBTA vol. 1, annex A10; parameters and their sources:
// IbCongestionControlParams in infiniband_params.hpp):
//   - switch (EgressPort's marker, configured by Network): a data packet leaving a port/VL whose
//     queue is above `threshold` gets its FECN bit (the ECN CE bit here);
//   - destination HCA (notify): every FECN-marked data packet is answered with a BECN, a 64 B
//     congestion notification on the exact reverse path at the highest priority (IB may also
//     piggyback BECN on an ACK; with ACKs off the wire here, it is always explicit);
//   - source HCA (on_cnp): CCTI += ccti_increase (at most ccti_limit) per BECN; a timer lowers CCTI
//     by one every ccti_timer while it is above ccti_min; the flow waits CCT[CCTI] after the end of
//     each packet before it starts the next (the injection rate delay).
// State is per flow (one queue pair per message here; a persistent queue pair's messages do not
// share their CCTI). One timer event per flow while its CCTI is above ccti_min (Nic::kRateTimer,
// argument the flow id).
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/stable_vector.hpp"
#include "sim/net/infiniband_params.hpp"
#include "sim/net/net_context.hpp"
#include "sim/net/nic_pacing.hpp"

namespace syncsim::net {

class Nic;

// The pure CCTI state of one flow: BECNs raise it, the timer lowers it; the table gives the delay.
class IbCcti {
 public:
  IbCcti() = default;
  explicit IbCcti(const IbCongestionControlParams& params)
      : params_(&params), ccti_(params.ccti_min) {}
  uint32_t index() const { return ccti_; }
  // A BECN arrived: CCTI += ccti_increase, at most ccti_limit.
  void on_becn() {
    ccti_ = ccti_ + params_->ccti_increase > params_->ccti_limit ? params_->ccti_limit
                                                                 : ccti_ + params_->ccti_increase;
  }
  // The CCTI timer expired: CCTI -= 1, not below ccti_min. False when already there.
  bool on_timer() {
    if (ccti_ <= params_->ccti_min) return false;
    --ccti_;
    return true;
  }
  bool above_min() const { return params_ != nullptr && ccti_ > params_->ccti_min; }
  // CCT[CCTI]: the injection delay after each packet (a linear table).
  Time delay() const {
    return params_ == nullptr ? Time::zero() : Time::ps(params_->cct_step.picoseconds() * ccti_);
  }

 private:
  const IbCongestionControlParams* params_ = nullptr;
  uint32_t ccti_ = 0;
};

class IbCongestionControl final : public NicPacing {
 public:
  // `becn_priority`: the class BECNs travel in (the highest). `nics`: by NodeId, null for switches.
  IbCongestionControl(const NetContext& ctx, const IbCongestionControlParams& params,
                      uint8_t becn_priority, const std::vector<Nic*>& nics)
      : ctx_(ctx), params_(params), becn_priority_(becn_priority), nics_(nics) {}

  void add_flow(FlowId id, Bandwidth line_rate, bool persistent, uint32_t queue_pair) override;
  // A windowed run (partition_windows.hpp): the context of each node's partition, by NodeId. The
  // source's side then works in its NIC's partition, BECNs are sent from the destination's, and
  // their routes are laid out when the flow starts.
  void set_node_contexts(const std::vector<const NetContext*>* by_node) { node_ctx_ = by_node; }
  int64_t next_send_ps(FlowId id) const override { return flows_[id].next_send_ps; }
  void on_sent(FlowId id, uint32_t wire_bytes, uint32_t payload) override;
  void notify(FlowId id) override;
  void on_cnp(FlowId id) override;
  void on_rate_timer(uint32_t flow) override;
  // The rate the injection delay leaves a flow of full packets: line x tx / (tx + delay).
  double rate_bps(FlowId id) const override;

  uint32_t ccti(FlowId id) const { return flows_[id].cc.index(); }
  uint32_t max_ccti(FlowId id) const { return flows_[id].max_ccti; }

 private:
  struct FlowState {
    IbCcti cc;
    Bandwidth line_rate = Bandwidth::gbps(1);
    int64_t next_send_ps = 0;
    int64_t last_end_ps = INT64_MIN;   // when the flow's last packet finished serializing
    uint32_t becn_route = UINT32_MAX;  // the reverse route (dst -> src), built on first BECN
    uint32_t max_ccti = 0;
    uint32_t last_wire_bytes = 0;
    CancelToken timer;
    bool timer_armed = false;
  };
  void arm_timer(FlowId id);
  const NetContext& ctx_of(NodeId node) const {
    return node_ctx_ == nullptr ? ctx_ : *(*node_ctx_)[node];
  }
  // The delay changed: the gap after the flow's last packet is re-timed.
  void repace(FlowId id);

  const NetContext& ctx_;
  const std::vector<const NetContext*>* node_ctx_ = nullptr;
  const IbCongestionControlParams& params_;
  uint8_t becn_priority_;
  const std::vector<Nic*>& nics_;
  StableVector<FlowState> flows_;  // by flow id; stable: the timers' tokens must not move
};

}  // namespace syncsim::net
