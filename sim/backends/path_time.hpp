#pragma once
#include <cstddef>

#include "sim/core/units.hpp"
#include "sim/net/routing.hpp"

namespace syncsim {

// Completion time of `size` bytes sent alone over an idle route: the exact store-and-forward
// pipeline of its packets over a tandem of links (max-plus),
//   T = sum_h delay_h + max_h [ sum_{j<h} tx_j(first) + sum_k tx_h(packet k) + sum_{j>h} tx_j(last)
//   ]
// Packets are the route's path MTU; each hop adds its link's header bytes.
Time idle_path_time(const net::Routing& routing, const net::PortId* route, std::size_t hops,
                    Bytes size);

}  // namespace syncsim
