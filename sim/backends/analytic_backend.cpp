#include "sim/backends/analytic_backend.hpp"

#include <algorithm>

#include "sim/backends/path_time.hpp"
#include "sim/core/check.hpp"

namespace syncsim {

AnalyticBackend::AnalyticBackend(Simulation& sim, const net::NetworkSpec& spec)
    : TransferBackend(sim, spec), routing_(spec) {}

Time AnalyticBackend::path_time(const std::vector<net::PortId>& route, Bytes size) const {
  return idle_path_time(routing_, route.data(), route.size(), size);
}

void AnalyticBackend::begin(TransferId id, net::NodeId src, net::NodeId dst,
                            const TransferRequest& r) {
  scratch_route_.clear();
  const bool routed = routing_.route(src, dst, routing_.flow_hash(src, dst, id), scratch_route_);
  SIM_CHECK(routed, "no route between the transfer's NICs");
  const Time t = path_time(scratch_route_, r.size);
  const int64_t mtu = routing_.path_mtu(scratch_route_.data(), scratch_route_.size()).count();
  const auto packets = static_cast<uint64_t>((r.size.count() + mtu - 1) / mtu);
  counters_.packet_hops += packets * scratch_route_.size();
  counters_.bytes_injected += r.size.count();
  counters_.bytes_delivered += r.size.count();
  simulation().queue().schedule_fn(simulation().now() + t, [this, id] { complete(id); });
}

}  // namespace syncsim
