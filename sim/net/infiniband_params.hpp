#pragma once
// InfiniBand link layer parameters (NetworkSpec::link_layer == Infiniband): service level to
// virtual lane mapping, the receive buffer each port advertises per VL as link-level credits
// (ib_credits.hpp) and IB congestion control (ib_congestion_control.hpp). The mechanisms and what
// differs from RoCE's PFC: docs/infiniband.md.
#include <array>
#include <cstdint>

#include "sim/core/field_error.hpp"
#include "sim/core/units.hpp"
#include "sim/net/packet.hpp"

namespace syncsim::net {

// The fabric's link layer. Roce: Ethernet switches with PFC/ECN/DCQCN as configured. Infiniband:
// every fabric link is lossless by credit-based flow control per virtual lane; PFC, ECN and DCQCN
// are not used (IB congestion control replaces the last two).
enum class LinkLayer : uint8_t { Roce, Infiniband };

// IB congestion control (IBTA vol. 1, annex A10 "Congestion Control"): a switch marks FECN on
// packets leaving a port/VL whose queue is above `threshold`; the destination HCA answers each
// marked packet with a BECN (here a 64 B congestion notification packet on the reverse path, at
// the highest priority, as a CNP); the source raises the queue pair's Congestion Control Table
// Index (CCTI) by `ccti_increase` per BECN up to `ccti_limit`, lowers it by one every
// `ccti_timer`, and waits the table entry CCT[CCTI] between the end of one packet and the start of
// the next (the injection rate delay).
//
// Defaults. The annex defines the fields but no values, and OpenSM ships congestion control off
// with every setting zero (opensm.conf: congestion_control FALSE, cc_* 0); NVIDIA's current HCAs on
// InfiniBand run their own programmable CC algorithms configured through UFM (NVIDIA UFM Enterprise
// user manual, "Appendix - OpenSM configuration files for congestion control"). So the defaults
// below are an illustrative tuning of the annex's mechanism, in the style of Gran et al.
// ("First experiences with congestion control in InfiniBand hardware", IPDPS 2010; "Exploring the
// scope of the InfiniBand congestion control mechanism", IPDPS 2012): mark every packet above a
// few MTUs of queue, +1 per BECN, a linear table. Set them for the fabric you model.
struct IbCongestionControlParams {
  bool enabled = false;
  // Switch side (SwitchCongestionSetting / SwitchPortCongestionSetting). The annex's Threshold is
  // a 4-bit relative level whose byte value each switch chooses; here it is bytes of the port/VL
  // queue (8 x 4 KiB MTU packets).
  // Every packet leaving above it is marked (the annex's Marking_Rate 0; a positive Marking_Rate,
  // marking one packet in so many, is not modelled).
  Bytes threshold = Bytes{32 * 1024};
  // HCA side (CACongestionSetting). CCTI_Timer counts 1.024 us units in the annex; here a time:
  // 10 units, several times the gap between the BECNs one flow of a 16:1 incast at 400 Gb/s gets
  // (every 16th packet of the bottleneck, 16 x 82 ns = 1.3 us), so that CCTI can climb at all; a
  // timer shorter than that gap undoes every increase before the next one.
  Time ccti_timer = Time::ns(10240);
  uint32_t ccti_increase = 1;
  uint32_t ccti_min = 0;
  // Congestion Control Table: CCT[i] = i x cct_step of injection delay for i in 0..ccti_limit
  // (a linear table). At 400 Gb/s a 4 KiB packet takes 82 ns, so CCTI 8 halves a flow's rate and
  // CCTI 127 cuts it to about 6 %.
  uint32_t ccti_limit = 127;
  Time cct_step = Time::ns(10);

  // Range rules: threshold > 0, ccti_timer > 0, 1 <= ccti_increase, ccti_min <= ccti_limit <=
  // 16383 (the annex's table holds up to 16384 entries), cct_step >= 0.
  FieldErrors check() const;
};

struct InfinibandParams {
  // SL2VL: the VL each service level (= the packet's priority) travels in. Identity by default,
  // as OpenSM's QoS-off mapping is per-port configurable and this keeps classes apart.
  std::array<uint8_t, kMaxPriorities> sl_to_vl{0, 1, 2, 3, 4, 5, 6, 7};
  // Receive buffer each port advertises per VL (its credits, in 64-byte blocks). Auto: a switch
  // splits its buffer evenly over its ports and the VLs in use (the distinct VLs sl_to_vl maps the
  // classes to), and a NIC advertises what its switch port does.
  bool vl_buffer_auto = true;
  Bytes vl_buffer = Bytes{0};
  IbCongestionControlParams congestion_control;

  // Range rules: every VL < kMaxPriorities, an explicit vl_buffer of at least one 64-byte block,
  // congestion_control's (as "congestion_control.<field>").
  FieldErrors check() const;
  // How many distinct VLs the first `priorities` service levels use.
  uint32_t vls_in_use(uint32_t priorities) const;
};

}  // namespace syncsim::net
