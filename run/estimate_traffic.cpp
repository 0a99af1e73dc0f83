#include "run/estimate_traffic.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <vector>

#include "topologies/path_length.hpp"

namespace syncsim::app {

double traffic_messages(const models::TrafficSpec& t, double gpus) {
  switch (t.pattern) {
    case models::TrafficPattern::Explicit:
      return static_cast<double>(t.messages.size());
    case models::TrafficPattern::Incast:
      return t.senders;
    case models::TrafficPattern::AllToAll:
      return gpus * (gpus - 1);
    default:
      return gpus;
  }
}

double traffic_bytes(const models::TrafficSpec& t, double gpus) {
  if (t.pattern != models::TrafficPattern::Explicit) {
    return traffic_messages(t, gpus) * static_cast<double>(t.size.count());
  }
  double sum = 0;
  for (const auto& m : t.messages) sum += static_cast<double>(m.size.count());
  return sum;
}

std::optional<double> traffic_link_bytes(const Scenario& scenario, uint32_t gpus) {
  std::vector<uint32_t> host_of_rank(gpus);
  const uint32_t per_host = std::max<uint32_t>(1, scenario.fabric.host.gpus);
  for (uint32_t g = 0; g < gpus; ++g) host_of_rank[g] = g / per_host;
  std::vector<models::MessageSpec> messages;
  try {
    messages = models::expand_traffic(scenario.traffic, host_of_rank, scenario.seed);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  double sum = 0;
  for (const models::MessageSpec& m : messages) {
    sum += static_cast<double>(m.size.count()) *
           topo::links_between_gpus(scenario.fabric, m.src_gpu, m.dst_gpu);
  }
  return sum;
}

double ring_links(const topo::FabricParams& fabric, double ranks) {
  if (ranks < 2) return 0;
  const auto n = static_cast<uint64_t>(ranks);
  double sum = 0;
  for (uint64_t r = 0; r < n; ++r) sum += topo::links_between_gpus(fabric, r, (r + 1) % n);
  return sum / static_cast<double>(n);
}

}  // namespace syncsim::app
