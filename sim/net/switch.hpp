#pragma once
// A store-and-forward switch: buffer admission on its shared buffer (shared_buffer_mmu.hpp), the
// next hop from the packet's precomputed route (or, under per-packet load balancing, chosen on
// arrival: load_balancing.hpp), and PFC frames to its upstream neighbours
// (pfc.hpp).
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/net/link.hpp"
#include "sim/net/net_context.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/shared_buffer_mmu.hpp"

namespace syncsim::net {

class Switch final : public Node {
 public:
  // `ports`: local port index -> egress PortId. `pause_quanta`: PfcParams::pause_quanta.
  Switch(const NetContext& ctx, NodeId id, const SwitchParams& params,
         const std::vector<PortId>& ports, MmuPfcConfig pfc, uint32_t pause_quanta);
  void receive(PacketRef packet, uint32_t in_port) override;
  // Sends a PFC PAUSE (xoff) or RESUME for `priority` out of local port `port`, to the upstream
  // node (pfc.cpp).
  void send_pfc(uint32_t port, uint8_t priority, bool xoff);
  SharedBufferMmu& mmu() { return mmu_; }
  const SharedBufferMmu& mmu() const { return mmu_; }
  NodeId id() const { return id_; }
  // InfiniBand (ib_credits.cpp): the switch's links run credit-based flow control, so a packet
  // that leaves its buffer (or is discarded) returns its credits to the node it came from.
  void enable_ib() { ib_ = true; }
  void return_ib_credits(uint32_t in_port, uint8_t sl, int64_t wire_bytes);
  // The local port of an engine inside this switch (in_switch_engine.hpp): its packets are still
  // charged to the buffer, but it is never sent PAUSE (or RESUME) and never dropped for headroom:
  // the engine holds itself back per destination instead (at most two packets per GPU port).
  void set_internal_port(uint32_t port) {
    internal_port_ = port;
    mmu_.unbounded_headroom(port);
  }
  // Wire overhead of each ingress port's link: a packet is charged payload + ingress header.
  void set_ingress_headers(std::vector<uint32_t> headers) { ingress_header_ = std::move(headers); }

 private:
  // The egress port of an admitted packet (its hop already advanced).
  PortId next_hop(const Packet& p) const;

  const NetContext& ctx_;
  NodeId id_;
  SharedBufferMmu mmu_;
  const std::vector<PortId>& ports_;
  std::vector<uint32_t> ingress_header_;
  uint32_t pause_quanta_;
  uint32_t internal_port_ = UINT32_MAX;  // none
  bool ib_ = false;
};

}  // namespace syncsim::net
