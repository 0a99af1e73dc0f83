#include "sim/backends/path_time.hpp"

#include <algorithm>

namespace syncsim {

Time idle_path_time(const net::Routing& routing, const net::PortId* route, std::size_t hops,
                    Bytes size) {
  const int64_t mtu = routing.path_mtu(route, hops).count();
  const int64_t packets = (size.count() + mtu - 1) / mtu;
  const int64_t first = std::min(mtu, size.count());
  const int64_t last = size.count() - (packets - 1) * mtu;

  Time propagation = Time::zero();
  // after[h] = time for the last packet to cross the hops after h; built from the back.
  Time after_sum = Time::zero();
  for (std::size_t h = 0; h < hops; ++h) {
    const net::LinkParams& l = routing.link_of(route[h]);
    propagation += l.delay;
    after_sum += l.bandwidth.tx_time(Bytes{last} + l.header);
  }
  Time worst = Time::zero();
  Time before = Time::zero();
  for (std::size_t h = 0; h < hops; ++h) {
    const net::LinkParams& l = routing.link_of(route[h]);
    const Time tx_last = l.bandwidth.tx_time(Bytes{last} + l.header);
    after_sum -= tx_last;
    const Time all = l.bandwidth.tx_time(Bytes{mtu} + l.header) * (packets - 1) + tx_last;
    worst = std::max(worst, before + all + after_sum);
    before += l.bandwidth.tx_time(Bytes{first} + l.header);
  }
  return propagation + worst;
}

}  // namespace syncsim
