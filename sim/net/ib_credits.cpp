// InfiniBand credit-based flow control at the ports, the switches and the NICs. Mechanism and
// what it replaces: ib_credits.hpp.
#include "sim/net/ib_credits.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/nic.hpp"
#include "sim/net/switch.hpp"

namespace syncsim::net {

namespace {

bool fabric_switch(const NetworkSpec& spec, NodeId n) {
  return spec.nodes[n].kind == NodeKind::Switch && spec.nodes[n].role != SwitchRole::NvSwitch;
}

// The per-VL buffer a switch advertises on each of its ports.
int64_t switch_vl_bytes(const NetworkSpec& spec, const Routing& routing, NodeId sw) {
  const InfinibandParams& ib = spec.infiniband;
  if (!ib.vl_buffer_auto) return ib.vl_buffer.count();
  const auto ports = static_cast<int64_t>(std::max<std::size_t>(routing.ports_of(sw).size(), 1));
  const auto vls =
      static_cast<int64_t>(std::max<uint32_t>(ib.vls_in_use(spec.switch_params.priorities), 1));
  return spec.switch_params.buffer.count() / (ports * vls);
}

}  // namespace

bool ib_port(const NetworkSpec& spec, const Routing& routing, PortId p) {
  if (spec.link_layer != LinkLayer::Infiniband) return false;
  const PortInfo& info = routing.ports()[p];
  return fabric_switch(spec, info.owner) || fabric_switch(spec, info.peer);
}

int64_t ib_advertised_bytes(const NetworkSpec& spec, const Routing& routing, PortId p) {
  const PortInfo& info = routing.ports()[p];
  if (spec.nodes[info.peer].kind == NodeKind::Switch) {
    return switch_vl_bytes(spec, routing, info.peer);
  }
  // A NIC: what its switch advertises, or, with a modelled receive buffer, no more than that
  // buffer holds per VL (so it can never overflow).
  int64_t bytes = switch_vl_bytes(spec, routing, info.owner);
  const NicParams& nic = spec.nic_params(info.peer);
  if (nic.rx_pfc) {
    const auto vls =
        std::max<uint32_t>(spec.infiniband.vls_in_use(spec.switch_params.priorities), 1);
    bytes = std::min<int64_t>(bytes, nic.rx_buffer.count() / vls);
  }
  return bytes;
}

// ---------------------------------------------------------------- egress port: sending side

void EgressPort::enable_ib_credits(const InfinibandParams& ib, int64_t advertised_bytes) {
  enable_link_credits(ib.sl_to_vl, advertised_bytes);
}

void EgressPort::enable_link_credits(const std::array<uint8_t, kMaxPriorities>& vl_of,
                                     int64_t advertised_bytes) {
  ib_.enabled = true;
  credits_ = true;
  ib_.vl_of = vl_of;
  ib_.mtu_blocks = ib_credit_blocks(link_mtu_wire_);
  // A VL whose buffer cannot hold one full packet could never send: the configuration check
  // reports it (configuration_check.cpp) and the credits are raised to one packet.
  ib_.advertised = std::max(advertised_bytes / kIbCreditBytes, ib_.mtu_blocks);
  ib_.blocks.fill(ib_.advertised);
}

void EgressPort::take_ib_credits(const Packet& p) {
  int64_t& held = ib_.blocks[ib_.vl_of[p.priority]];
  held -= ib_credit_blocks(p.payload_bytes + header_.count());
  SIM_CHECK(held >= 0, "InfiniBand credits went negative: a packet started without credits");
}

void EgressPort::ib_credit_return(uint8_t sl, int64_t wire_bytes, const NetContext& from) {
  const uint64_t vl = ib_.vl_of[sl];
  const auto blocks = static_cast<uint64_t>(ib_credit_blocks(wire_bytes));
  // A link between two partitions is at least the lookahead long.
  from.post(ctx_, from.now() + link_.delay(), this, kCreditReturn, (vl << 32) | blocks);
}

void EgressPort::on_credit_return(uint64_t arg) {
  const auto vl = static_cast<uint8_t>(arg >> 32);
  int64_t& held = ib_.blocks[vl];
  held += static_cast<int64_t>(arg & 0xFFFFFFFFU);
  SIM_CHECK(held <= ib_.advertised, "InfiniBand credits above what the receiver advertised");
  kick();
}

// ---------------------------------------------------------------- receiving side

void Switch::return_ib_credits(uint32_t in_port, uint8_t sl, int64_t wire_bytes) {
  // The sender on this link is the peer's port in the other direction (routing.hpp: ports 2i and
  // 2i + 1 are the two directions of link i).
  EgressPort& upstream = ctx_.egress(ports_[in_port] ^ 1U);
  if (upstream.ib_credits().enabled) upstream.ib_credit_return(sl, wire_bytes, ctx_);
}

void Nic::return_ib_credits(const Packet& p) {
  EgressPort& upstream = ctx_.egress(port_ ^ 1U);
  upstream.ib_credit_return(p.priority, p.payload_bytes + upstream.header().count(), ctx_);
}

}  // namespace syncsim::net
