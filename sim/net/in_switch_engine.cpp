#include "sim/net/in_switch_engine.hpp"

#include "sim/net/egress_port.hpp"

namespace syncsim::net {

bool in_switch_engine_may_write(const NetContext& ctx, const FlowRecord& f) {
  if (f.parked || f.route_hops < 2) return true;
  const EgressPort& out = ctx.egress(ctx.routes[f.route_begin + 1]);
  // Two full packets of the engine's: one serializing, one ready to start the moment it ends. The
  // engine's packet on its own (zero-delay, gpus x NVLink rate) link can add one more.
  return out.internal_bytes() < 2 * out.mtu_wire();
}

}  // namespace syncsim::net
