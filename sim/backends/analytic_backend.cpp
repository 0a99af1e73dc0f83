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
  const QueuePair qp = queue_pair(id, src, dst, r);  // its number: the ECMP hash's UDP source port
  QueuePairPath* cached = nullptr;
  if (qp.persistent) {
    const uint32_t index = persistent_index(qp.number);
    if (index >= qp_paths_.size()) {
      qp_paths_.resize(std::max<std::size_t>(index + 1, 2 * qp_paths_.size()));
    }
    cached = &qp_paths_[index];
  }
  // Routing is fixed at this fidelity: one epoch for the whole run.
  std::span<const net::PortId> route = cached != nullptr
                                           ? qp_routes_.find(persistent_index(qp.number), 1)
                                           : std::span<const net::PortId>{};
  Time* busy = nullptr;
  if (!route.empty()) {
    busy = cached->busy_until;
  } else {
    scratch_route_.clear();
    const bool routed =
        routing_.route(src, dst, routing_.flow_hash(src, dst, qp.number), scratch_route_);
    SIM_CHECK(routed, "no route between the transfer's NICs");
    busy = &pair_busy_until_[(static_cast<uint64_t>(src) << 32) | dst];
    if (cached != nullptr) {
      cached->busy_until = busy;
      qp_routes_.keep(persistent_index(qp.number), scratch_route_, 1);
    }
    route = scratch_route_;
  }
  const std::size_t hops = route.size();
  add_route_bytes(route.data(), hops, r.size);
  RouteTiming timing;
  if (cached != nullptr && cached->timing.bytes == r.size.count()) {
    timing = cached->timing;
  } else {
    timing = route_timing(route.data(), hops, r.size);
    if (cached != nullptr) cached->timing = timing;
  }
  const Time now = simulation().now();
  Time finish = now + timing.path;
  // FIFO behind the pair's transfer in flight: its packets leave the bottleneck after the earlier
  // transfer's, so the last one exits no earlier than the earlier finish plus this transfer's
  // bottleneck serialization (exact when both last packets have the same size).
  if (*busy > now) finish = std::max(finish, *busy + timing.bottleneck);
  *busy = finish;
  counters_.packet_hops += timing.packets * hops;
  counters_.bytes_injected += r.size.count();
  counters_.bytes_delivered += r.size.count();
  simulation().queue().schedule(finish, this, 0, id);
}

AnalyticBackend::RouteTiming AnalyticBackend::route_timing(const net::PortId* route,
                                                           std::size_t hops, Bytes size) const {
  RouteTiming t;
  t.bytes = size.count();
  t.path = idle_path_time(routing_, route, hops, size);
  const int64_t mtu = routing_.path_mtu(route, hops).count();
  t.packets = static_cast<uint64_t>((size.count() + mtu - 1) / mtu);
  const int64_t last = size.count() - static_cast<int64_t>(t.packets - 1) * mtu;
  for (std::size_t h = 0; h < hops; ++h) {
    const net::LinkParams& l = routing_.link_of(route[h]);
    t.bottleneck = std::max(t.bottleneck, l.bandwidth.tx_time(Bytes{mtu} + l.header) *
                                                  static_cast<int64_t>(t.packets - 1) +
                                              l.bandwidth.tx_time(Bytes{last} + l.header));
  }
  return t;
}

void AnalyticBackend::on_event(uint32_t /*kind*/, uint64_t arg) {
  complete(static_cast<TransferId>(arg));
}

}  // namespace syncsim
