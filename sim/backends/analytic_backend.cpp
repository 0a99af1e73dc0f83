#include "sim/backends/analytic_backend.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace syncsim {

AnalyticBackend::AnalyticBackend(Simulation& sim, const net::NetworkSpec& spec)
    : TransferBackend(sim, spec), routing_(spec) {}

Time AnalyticBackend::path_time(const std::vector<net::PortId>& route, Bytes size) const {
  const int64_t mtu = routing_.path_mtu(route.data(), route.size()).count();
  const int64_t packets = (size.count() + mtu - 1) / mtu;
  const int64_t first = std::min(mtu, size.count());
  const int64_t last = size.count() - (packets - 1) * mtu;

  Time propagation = Time::zero();
  for (net::PortId p : route) propagation += routing_.link_of(p).delay;

  // prefix[h] = time for the first packet to cross hops before h; suffix from the last packet.
  const std::size_t hops = route.size();
  std::vector<Time> tx_first(hops), tx_last(hops), tx_all(hops);
  for (std::size_t h = 0; h < hops; ++h) {
    const net::LinkParams& l = routing_.link_of(route[h]);
    tx_first[h] = l.bandwidth.tx_time(Bytes{first} + l.header);
    tx_last[h] = l.bandwidth.tx_time(Bytes{last} + l.header);
    tx_all[h] = l.bandwidth.tx_time(Bytes{mtu} + l.header) * (packets - 1) + tx_last[h];
  }
  Time worst = Time::zero();
  Time before = Time::zero();
  for (std::size_t h = 0; h < hops; ++h) {
    Time after = Time::zero();
    for (std::size_t j = h + 1; j < hops; ++j) after += tx_last[j];
    worst = std::max(worst, before + tx_all[h] + after);
    before += tx_first[h];
  }
  return propagation + worst;
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
