#include "run/estimate_traffic.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <vector>

#include "run/runner.hpp"
#include "sim/net/fabric_partition.hpp"
#include "sim/net/network.hpp"
#include "sim/net/pfc.hpp"
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

std::optional<double> traffic_link_bytes(const Scenario& scenario, uint32_t gpus,
                                         const LosslessResends& resends) {
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
           topo::links_between_gpus(scenario.fabric, m.src_gpu, m.dst_gpu) * resends.of(m.priority);
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
      scenario.chakra || !scenario.jobs.empty()) {
    return 1.0;
  }
  // No lookahead where normal link jitter can cut a link between leaves to zero delay
  // (fabric_partition.hpp).
  const net::ImpairmentParams& jitter = scenario.network.impairments;
  if (jitter.least_delay(scenario.fabric.links.fabric) <= Time::zero()) return 1.0;
  if (scenario.fabric.kind == topo::TopologyKind::FatTree &&
      jitter.least_delay(scenario.fabric.links.core) <= Time::zero()) {
    return 1.0;
  }
  // Leaves with hosts: the routing table holds one row per attachment leaf and switch.
  const uint64_t leaves = size.switches > 0 ? size.routing_entries / size.switches : 0;
  const double partitions =
      static_cast<double>(std::min<uint64_t>(leaves, net::kMaxFabricPartitions));
  if (partitions < 2) return 1.0;
  return std::max(1.0,
                  std::min(static_cast<double>(threads), partitions) * kPartitionThreadEfficiency);
}

LosslessResends lossless_drop_resends(const Scenario& scenario, double gpus, Estimate& e) {
  const net::PfcParams& pfc = scenario.network.pfc;
  if (scenario.fidelity != Fidelity::Packet ||
      scenario.network.link_layer != net::LinkLayer::Roce || !pfc.enabled || pfc.headroom_auto ||
      pfc.lossless_mask == 0) {
    return {};
  }
  // Workloads' collectives run on priority 0; traffic entries name theirs. The lossless traffic's
  // messages, bytes and the most of them converging on one GPU (its incast's fan-in).
  const auto lossless = [&](uint8_t priority) {
    return ((pfc.lossless_mask >> priority) & 1U) != 0;
  };
  double messages = 0;
  double bytes = 0;
  double fan_in = 0;
  for (const models::TrafficSpec& t : scenario.traffic) {
    if (t.pattern != models::TrafficPattern::Explicit) {
      if (!lossless(t.priority)) continue;
      const double n = traffic_messages(t, gpus);
      messages += n;
      bytes += n * static_cast<double>(t.size.count());
      fan_in = std::max(fan_in, t.pattern == models::TrafficPattern::Incast     ? t.senders
                                : t.pattern == models::TrafficPattern::AllToAll ? kResendFanInCap
                                                                                : 1.0);
      continue;
    }
    std::map<uint32_t, double> into;
    for (const models::MessageSpec& m : t.messages) {
      if (!lossless(m.priority)) continue;
      messages += 1;
      bytes += static_cast<double>(m.size.count());
      fan_in = std::max(fan_in, into[m.dst_gpu] += 1);
    }
  }
  if (messages == 0) return {};
  const topo::LinkClasses links = scenario_link_classes(scenario);
  std::vector<const net::LinkParams*> classes{&links.host, &links.fabric};
  if (scenario.fabric.kind == topo::TopologyKind::FatTree) classes.push_back(&links.core);
  std::string short_on;
  for (const net::LinkParams* link : classes) {
    const int64_t need = net::required_headroom(*link, pfc.response_time);
    if (pfc.headroom.count() >= need) continue;
    short_on +=
        (short_on.empty() ? "" : " and ") + link->name + " links (" + std::to_string(need) + " B)";
  }
  if (short_on.empty()) return {};
  LosslessResends r;
  r.priorities = pfc.lossless_mask;
  r.sends = lossless_sends(bytes / messages, fan_in);
  char sends[32];
  std::snprintf(sends, sizeof sends, "%.0f", r.sends);
  e.caveats.push_back("fabric.switch.pfc.headroom: " + std::to_string(pfc.headroom.count()) +
                      " B is below what " + short_on +
                      " need: lossless packets will be dropped and their queue pairs resend from "
                      "the loss; the estimate counts each lossless message sent " +
                      sends +
                      " times, a rule fitted on incasts that the run may miss by 2-3x "
                      "(docs/scale.md)");
  return r;
}

void add_packet_memory(const Scenario& scenario, const topo::FabricSize& size, double sent,
                       double listed_flows, bool json_output, Estimate& e) {
  if (scenario.fidelity == Fidelity::Packet) {
    // Packets live in the pools from when a NIC sends them until they are delivered: at the peak,
    // those waiting in switch buffers (a NIC holds one at a time). Without congestion control the
    // senders inject at line rate and collisions queue a share of all that was sent: at the peak
    // about all of the injected packets on permutation-8k and all-to-all-burst-16k (1 GiB
    // buffers, no drops), 0.3 on ring-next-leaf-128, none on ring-shift-8gpu (massif and peak
    // RSS, `ci` build). Counted as a third of what is sent, at most what the switches' buffers
    // hold: within 1.5x of the peak RSS on all of them. Each costs its pool slot (32 B), its slot
    // in a FIFO and on the free list, and the outbox copy where it crosses partitions: about 40 B.
    const double mtu = std::max(1.0, static_cast<double>(scenario.fabric.links.host.mtu.count()));
    const double buffers = static_cast<double>(size.switches) *
                           static_cast<double>(scenario.fabric.switch_params.buffer.count());
    e.memory_parts.emplace_back("packets", std::min(sent, buffers) / 3.0 / mtu * 40.0);
  }
  if (json_output && scenario.fidelity == Fidelity::Packet) {
    // `--json`: the document lists every flow (`flow_rates.flows`, with its path), about 1.2 KB a
    // flow as nlohmann::json objects (roce-vs-ib: peak RSS 25 MiB as text, 41 MiB with --json,
    // 13,448 flows); built after the run, added here as an upper bound.
    e.memory_parts.emplace_back("json output", listed_flows * 1200.0);
  }
}

}  // namespace syncsim::app
