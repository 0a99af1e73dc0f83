// NVLink credit-based flow control: which links run it and how much each end advertises.
// Mechanism and sizing: nvlink_credits.hpp.
#include "sim/net/nvlink_credits.hpp"

#include <algorithm>
#include <cmath>

#include "sim/net/ib_credits.hpp"

namespace syncsim::net {

namespace {

bool nvswitch(const NetworkSpec& spec, NodeId n) {
  return spec.nodes[n].kind == NodeKind::Switch && spec.nodes[n].role == SwitchRole::NvSwitch;
}

bool nvls_engine(const NetworkSpec& spec, NodeId n) {
  return std::any_of(spec.nvls_engines.begin(), spec.nvls_engines.end(),
                     [n](const GpuAttachment& e) { return e.nvlink_port == n; });
}

int64_t mtu_wire_bytes(const LinkParams& link) { return link.mtu.count() + link.header.count(); }

}  // namespace

bool nvlink_credit_port(const NetworkSpec& spec, const Routing& routing, PortId p) {
  const PortInfo& info = routing.ports()[p];
  if (!nvswitch(spec, info.owner) && !nvswitch(spec, info.peer)) return false;
  return !nvls_engine(spec, info.owner) && !nvls_engine(spec, info.peer);
}

int64_t nvlink_credit_bytes(const LinkParams& link) {
  const double bytes_per_ps = static_cast<double>(link.bandwidth.bits_per_second()) / 8e12;
  const auto cable = static_cast<int64_t>(
      std::ceil(2.0 * bytes_per_ps * static_cast<double>(link.delay.picoseconds())));
  const int64_t loop = 2 * mtu_wire_bytes(link) + cable;
  // Whole 64-byte credits.
  return ib_credit_blocks(4 * loop) * kIbCreditBytes;
}

Bytes nvswitch_buffer(const NetworkSpec& spec, const Routing& routing, NodeId sw) {
  const std::vector<PortId>& ports = routing.ports_of(sw);
  int64_t bytes = 0;
  int64_t engine_mtu_wire = 0;
  for (PortId p : ports) {
    // What arrives on local port p: the peer's port towards this switch (the other direction of
    // the same link: routing.hpp numbers them 2i and 2i + 1).
    const PortId in = p ^ 1U;
    if (nvlink_credit_port(spec, routing, in)) {
      bytes += nvlink_credit_bytes(routing.link_of(in));
    } else {
      engine_mtu_wire = std::max(engine_mtu_wire, mtu_wire_bytes(routing.link_of(in)));
    }
  }
  // The engine holds at most two packets at each port (in_switch_engine.cpp), plus the one its
  // link is delivering, which may land at any of them.
  if (engine_mtu_wire > 0) {
    bytes += 3 * engine_mtu_wire * static_cast<int64_t>(ports.size());
  }
  return Bytes{std::max<int64_t>(bytes, 1)};
}

}  // namespace syncsim::net
