#pragma once
// InfiniBand credit-based link-level flow control (IBTA vol. 1, ch. 7.9 "Flow control"): each
// receiving port advertises its receive buffer per virtual lane as credits counted in 64-byte
// blocks; the sending port starts a packet on a VL only while it holds enough credits for the whole
// packet (ceil(wire bytes / 64) blocks), and the receiver hands the credits back once the packet
// has left its buffer. So a lossless VL never drops and never needs PAUSE: a full buffer simply
// stops its upstream sender.
//
// Credit return. IB carries credits in flow-control packets (FCPs: the receiver's Flow Control
// Credit Limit per VL, sent when buffer frees up and at least every 65,536 symbol times), which a
// port interleaves between data packets ahead of them. They are 6 bytes against 4 KiB data
// packets, so here they are not put on the wire: a freed packet's credits reach the sender as an
// event one link propagation delay after the packet left the receiver's buffer (a switch: when it
// finished leaving the egress port; a NIC: on arrival, as its HCA drains at line rate, or when its
// receive buffer drains with `rx_pfc` on). The cost this leaves out is 0.15 % of the reverse
// link at most; the delay is what matters, and it is kept. A packet that a link impairment loses
// gives its credits back the same way (IB's FCCL/FCTBS exchange resynchronises the counts).
//
// Service levels and VLs: a packet's SL is its priority; SL2VL (InfinibandParams::sl_to_vl) maps
// it to a VL, and credits are per VL. Egress FIFOs stay per SL, so SLs sharing a VL share its
// credits but keep their own queues. VL arbitration is the port's ETS scheduler read as IB's
// VLArbitration tables (docs/infiniband.md).
#include <array>
#include <cstdint>

#include "sim/net/infiniband_params.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/packet.hpp"
#include "sim/net/routing.hpp"

namespace syncsim::net {

// IB credits are 64-byte blocks (IBTA vol. 1, 7.9.4: one credit = 64 bytes of receive buffer).
inline constexpr int64_t kIbCreditBytes = 64;
inline int64_t ib_credit_blocks(int64_t wire_bytes) {
  return (wire_bytes + kIbCreditBytes - 1) / kIbCreditBytes;
}

// The sending side of one port: credits held per VL.
struct IbCreditState {
  bool enabled = false;
  std::array<uint8_t, kMaxPriorities> vl_of{};   // SL -> VL
  std::array<int64_t, kMaxPriorities> blocks{};  // credits held per VL
  int64_t advertised = 0;                        // blocks the receiver advertises per VL
  int64_t mtu_blocks = 0;                        // blocks of a full-MTU packet on this link
  uint64_t stalls = 0;  // times a packet waited for credits (counted when first found blocked)

  bool can_send(uint8_t sl, uint32_t wire_bytes) const {
    return blocks[vl_of[sl]] >= ib_credit_blocks(wire_bytes);
  }
  // SLs whose VL cannot take a full-MTU packet now (a NIC's scheduler skips their flows).
  uint8_t blocked_mask(uint32_t priorities) const {
    uint32_t mask = 0;
    for (uint32_t sl = 0; sl < priorities; ++sl) {
      if (blocks[vl_of[sl]] < mtu_blocks) mask |= 1U << sl;
    }
    return static_cast<uint8_t>(mask);
  }
};

// Whether the link of port `p` runs InfiniBand flow control: a link of the fabric (either end a
// switch other than a host's NVSwitch) when the link layer is InfiniBand. NVLink stays as it is.
bool ib_port(const NetworkSpec& spec, const Routing& routing, PortId p);

// The receive buffer, in bytes per VL, that the receiving end of port `p` advertises (`vl_buffer`,
// or auto: the receiving switch's buffer over its ports and the VLs in use; a NIC advertises what
// its switch's port does).
int64_t ib_advertised_bytes(const NetworkSpec& spec, const Routing& routing, PortId p);

}  // namespace syncsim::net
