#pragma once
// A store-and-forward switch: buffer admission on its shared buffer (shared_buffer_mmu.hpp), the
// next hop from the packet's precomputed route (or, under per-packet load balancing, chosen on
// arrival: load_balancing.hpp), and PFC frames to its upstream neighbours
// (pfc.hpp).
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/check.hpp"
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
  // A packet handed to its link as it starts (an egress port with nothing behind it,
  // egress_port.hpp) leaves the buffer when its last bit does. Its port keeps that release pending
  // and applies it at its next start or once it has left (at most one per port); until then the
  // buffer counts its bytes as held. A release whose (ingress port, priority) has no PAUSE
  // outstanding never signals PFC, so nothing needs to run at that time, and the sums do not depend
  // on the order releases come in; where a decision reads the buffer and the pending bytes could
  // change it (admission near the buffer's end, a lossless pair near or past XOFF), the due ones
  // are applied first (settle_releases). A lossless packet is handed over only while its pair has
  // no PAUSE outstanding; when one goes out, the pair's releases still pending are pinned
  // (pin_releases): each runs as an event at its time, where it may RESUME, as a transmission end
  // would.
  //
  // The tie rule: a lossy packet arriving at the instant another one's last bit leaves finds that
  // one's room free, whether it was handed over or its transmission end has yet to run at that
  // instant (admission near the buffer's end asks the ports, EgressPort::leaving_bytes_at). A
  // lossless decision sees the handed-over ones' releases of the instant (pinned ones in event
  // order) and the others' in event order.
  void note_release_pending(int delta) {
    pending_releases_ += delta;
    releases_waited_ = true;
  }
  // The most bytes its buffer held. Not kept where releases waited (a switch whose ports handed
  // packets over at their start): there the buffer counts bytes after they left until the next
  // decision that reads them, which would inflate it.
  Bytes buffer_peak() const {
    SIM_CHECK(!releases_waited_, "no buffer peak is kept where releases waited");
    return mmu_.peak();
  }
  void settle_releases();
  // A PAUSE goes out for (in_port, priority): its handed-over releases still pending run as events
  // from now on (EgressPort::pin_release).
  void pin_releases(uint32_t in_port, uint8_t priority);
  // The buffer in use (all of it, and its shared part) at `at`, pending releases due by then
  // subtracted (what a time series samples).
  Bytes used_at(Time at) const { return mmu_.used() - due_release_bytes(at); }
  Bytes shared_used_at(Time at) const { return mmu_.shared_used() - due_release_bytes(at); }
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
  Bytes due_release_bytes(Time at) const;
  // What lossy packets in service here release at this very instant once their ends run.
  Bytes bytes_leaving_now() const;

  const NetContext& ctx_;
  NodeId id_;
  SharedBufferMmu mmu_;
  const std::vector<PortId>& ports_;
  std::vector<uint32_t> ingress_header_;
  uint32_t pause_quanta_;
  uint32_t internal_port_ = UINT32_MAX;  // none
  bool ib_ = false;
  int pending_releases_ = 0;  // ports holding a release (note_release_pending)
  bool releases_waited_ = false;
};

}  // namespace syncsim::net
