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
  const uint32_t qp = queue_pair(id, src, dst, r).number;  // the ECMP hash's UDP source port
  const bool routed = routing_.route(src, dst, routing_.flow_hash(src, dst, qp), scratch_route_);
  SIM_CHECK(routed, "no route between the transfer's NICs");
  add_route_bytes(scratch_route_.data(), scratch_route_.size(), r.size);
  const Time now = simulation().now();
  Time finish = now + path_time(scratch_route_, r.size);
  const int64_t mtu = routing_.path_mtu(scratch_route_.data(), scratch_route_.size()).count();
  const auto packets = static_cast<uint64_t>((r.size.count() + mtu - 1) / mtu);
  // FIFO behind the pair's transfer in flight: its packets leave the bottleneck after the earlier
  // transfer's, so the last one exits no earlier than the earlier finish plus this transfer's
  // bottleneck serialization (exact when both last packets have the same size).
  Time& busy = pair_busy_until_[(static_cast<uint64_t>(src) << 32) | dst];
  if (busy > now) {
    const int64_t size = r.size.count();
    const int64_t last = size - static_cast<int64_t>(packets - 1) * mtu;
    Time bottleneck = Time::zero();
    for (const net::PortId port : scratch_route_) {
      const net::LinkParams& l = routing_.link_of(port);
      bottleneck = std::max(bottleneck, l.bandwidth.tx_time(Bytes{mtu} + l.header) *
                                                static_cast<int64_t>(packets - 1) +
                                            l.bandwidth.tx_time(Bytes{last} + l.header));
    }
    finish = std::max(finish, busy + bottleneck);
  }
  busy = finish;
  counters_.packet_hops += packets * scratch_route_.size();
  counters_.bytes_injected += r.size.count();
  counters_.bytes_delivered += r.size.count();
  simulation().queue().schedule(finish, this, 0, id);
}

void AnalyticBackend::on_event(uint32_t /*kind*/, uint64_t arg) {
  complete(static_cast<TransferId>(arg));
}

}  // namespace syncsim
