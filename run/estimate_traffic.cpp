#include "run/estimate_traffic.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <vector>

#include "run/runner.hpp"
#include "sim/net/fabric_partition.hpp"
#include "sim/net/network.hpp"
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

namespace {
// 2 threads on the 2-core VM (docs/performance.md, "Partitioned packet runs"): ring-next-leaf-1024
// 1.3-1.65x, permutation-8k 2.05x, all-to-all-burst-16k 1.89x.
constexpr double kPartitionThreadEfficiency = 0.85;
}  // namespace

double packet_thread_speedup(const Scenario& scenario, const topo::FabricSize& size,
                             uint32_t threads) {
  if (threads <= 1 || scenario.fidelity != Fidelity::Packet || scenario.workload ||
      scenario.chakra || !scenario.jobs.empty() || scenario.observe || !scenario.faults.empty()) {
    return 1.0;
  }
  // The mechanisms the fabric would run, without building it.
  net::NetworkSpec mechanisms;
  set_network_behaviour(scenario, mechanisms);
  mechanisms.load_balancing = scenario.fabric.load_balancing;
  if (scenario.fabric.sharp.enabled) mechanisms.sharp_engines.emplace_back();
  if (!net::partition_refusal(mechanisms).empty()) return 1.0;
  // Leaves with hosts: the routing table holds one row per attachment leaf and switch.
  const uint64_t leaves = size.switches > 0 ? size.routing_entries / size.switches : 0;
  const double partitions =
      static_cast<double>(std::min<uint64_t>(leaves, net::kMaxFabricPartitions));
  if (partitions < 2) return 1.0;
  return std::max(1.0,
                  std::min(static_cast<double>(threads), partitions) * kPartitionThreadEfficiency);
}

}  // namespace syncsim::app
