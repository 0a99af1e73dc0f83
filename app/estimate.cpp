#include "app/estimate.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "models/collective_cost.hpp"
#include "models/step_model.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app {

namespace {

// Measured on the reference scenarios (Release, x86-64; see the README's scale table).
constexpr double kProcessBase = 8e6;           // binary, allocator, YAML, spdlog
constexpr double kBytesPerNode = 160;          // NodeSpec with its name, node_ports vector
constexpr double kBytesPerLink = 120;          // LinkSpec + two directed ports (PortInfo, ids)
constexpr double kBytesPerRoutingEntry = 1;    // uint8 hop distance
constexpr double kFlowBytesPerPort = 64;       // flows_on_ vector, capacity, scratch
constexpr double kPacketBytesPerPort = 3000;   // egress queues per priority, MMU counters, link ring
constexpr double kAnalyticBytesPerPort = 16;
constexpr double kBytesPerPlanStep = 64;       // PlanStep 32 B, dependency CSR, runner state
constexpr double kBytesPerTransfer = 60;       // TransferRecord, callback slot, flow state
constexpr double kBytesPerMessage = 40;        // MessageSpec in the injector
constexpr double kBytesPerRank = 80;           // per-rank step state (multipliers, times)
// Wall time per unit of work (one loaded core; an idle core is ~2x faster).
constexpr double kFlowSecondsPerTransfer = 12e-6;    // DDP tree all-reduce: 1k ranks 10.8 us
constexpr double kAnalyticSecondsPerTransfer = 2e-6;
constexpr double kPacketSecondsPerHop = 0.5e-6;      // ring-next-leaf-1024: 0.26 us idle, 2x slack
constexpr double kSecondsPerFabricEntity = 2e-6;     // building the fabric and routing tables

double ceil_div(double a, double b) { return b <= 0 ? a : std::ceil(a / b); }

// Transfers of one all-reduce of `bytes` over `n` ranks, as the plan builders lay them out.
double allreduce_transfers(models::CollectiveAlgo algo, double n, double bytes, double chunk,
                           double channels, double gpus_per_host) {
  if (n <= 1) return 0;
  switch (algo) {
    case models::CollectiveAlgo::Tree:
      // Two trees, reduce then broadcast along n-1 edges, chunked.
      return 2.0 * 2.0 * (n - 1) * ceil_div(bytes / 2.0, chunk);
    case models::CollectiveAlgo::HalvingDoubling:
      return 2.0 * std::ceil(std::log2(n)) * n;
    case models::CollectiveAlgo::Hierarchical: {
      const double g = std::max(1.0, gpus_per_host);
      const double nodes = std::max(1.0, n / g);
      const double intra = 2.0 * (g - 1) * n;
      const double per_step = bytes / (g * nodes * channels);
      return intra + channels * g * 2.0 * (nodes - 1) * nodes * ceil_div(per_step, chunk);
    }
    case models::CollectiveAlgo::Ring:
    case models::CollectiveAlgo::Pairwise:
      break;
  }
  const double per_step = bytes / (channels * n);
  return channels * 2.0 * (n - 1) * n * ceil_div(per_step, chunk);
}

double traffic_messages(const models::TrafficSpec& t, double gpus) {
  switch (t.pattern) {
    case models::TrafficPattern::Explicit: return static_cast<double>(t.messages.size());
    case models::TrafficPattern::Incast: return t.senders;
    case models::TrafficPattern::AllToAll: return gpus * (gpus - 1);
    default: return gpus;
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

std::string gib(double bytes) {
  std::ostringstream out;
  out.precision(bytes >= 10.0 * (1 << 30) ? 0 : 2);
  out << std::fixed << bytes / static_cast<double>(1 << 30) << " GiB";
  return out.str();
}

}  // namespace

Estimate estimate_run(const Scenario& scenario) {
  const topo::FabricSize size = topo::fabric_size(scenario.fabric);
  Estimate e;
  const auto nodes = static_cast<double>(size.nodes);
  const auto links = static_cast<double>(size.links);
  const double ports = 2.0 * links;
  const auto gpus = static_cast<double>(size.gpus);
  e.memory_parts.emplace_back("process", kProcessBase);
  e.memory_parts.emplace_back("fabric", nodes * kBytesPerNode + links * kBytesPerLink);
  e.memory_parts.emplace_back("routing", static_cast<double>(size.routing_entries) * kBytesPerRoutingEntry);
  const double per_port = scenario.fidelity == Fidelity::Packet  ? kPacketBytesPerPort
                          : scenario.fidelity == Fidelity::Flow ? kFlowBytesPerPort
                                                                : kAnalyticBytesPerPort;
  e.memory_parts.emplace_back("backend", ports * per_port);

  // Background traffic.
  double messages = 0;
  double message_bytes = 0;
  for (const auto& t : scenario.traffic) {
    messages += traffic_messages(t, gpus);
    message_bytes += traffic_bytes(t, gpus);
  }
  e.transfers += messages;
  e.memory_parts.emplace_back("messages", messages * (kBytesPerMessage + kBytesPerTransfer));

  // The training step: one plan per distinct bucket size, all kept; records of the largest run.
  double step_bytes_moved = 0;
  if (scenario.workload) {
    const models::StepConfig& c = scenario.workload->step;
    const double n = scenario.workload->data_parallel == 0 ? gpus : scenario.workload->data_parallel;
    const models::ProtocolTiming timing =
        models::protocol_timing(c.algorithm, models::NcclProtocol::Simple, scenario.collective);
    const auto chunk = static_cast<double>(c.chunk_bytes > 0 ? c.chunk_bytes : timing.chunk_bytes);
    std::map<int64_t, int> sizes;
    const auto buckets = models::ddp_buckets(c.model, c.ddp);
    for (const auto& b : buckets) ++sizes[b.size.count()];
    const bool reuse = scenario.workload->reuse_bucket_timings.value_or(messages == 0);
    double plan_steps = 0;
    double largest = 0;
    for (const auto& [bytes, count] : sizes) {
      const double t = allreduce_transfers(c.algorithm, n, static_cast<double>(bytes), chunk,
                                           std::max<uint32_t>(1, c.channels), scenario.fabric.host.gpus);
      plan_steps += 1.5 * t;  // transfers and the reductions that follow most of them
      largest = std::max(largest, t);
      e.transfers += reuse ? t : t * count;
      step_bytes_moved += 2.0 * static_cast<double>(bytes) * (reuse ? 1 : count);
    }
    step_bytes_moved *= n;
    e.memory_parts.emplace_back("plans", plan_steps * kBytesPerPlanStep);
    e.memory_parts.emplace_back("transfers", largest * kBytesPerTransfer);
    e.memory_parts.emplace_back("ranks", n * kBytesPerRank + static_cast<double>(buckets.size()) * 64);
  }

  for (const auto& [name, bytes] : e.memory_parts) e.memory_bytes += bytes;

  // Time: building the fabric, then the work of the fidelity.
  e.wall_s = (nodes + links + static_cast<double>(size.routing_entries) / 64) * kSecondsPerFabricEntity;
  switch (scenario.fidelity) {
    case Fidelity::Packet: {
      // Every payload MTU crosses ~4 links (NIC, leaf, spine, leaf) on average.
      const double mtu = static_cast<double>(scenario.fabric.links.host.mtu.count());
      e.packet_hops = (message_bytes + step_bytes_moved) / std::max(1.0, mtu) * 4.0;
      e.wall_s += e.packet_hops * kPacketSecondsPerHop;
      break;
    }
    case Fidelity::Flow: e.wall_s += e.transfers * kFlowSecondsPerTransfer; break;
    case Fidelity::Analytic: e.wall_s += e.transfers * kAnalyticSecondsPerTransfer; break;
  }
  return e;
}

std::optional<double> available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double value = 0;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemAvailable:") return value * 1024.0;
  }
  return std::nullopt;
}

double peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) * 1024.0;  // Linux reports KiB
}

nlohmann::json to_json(const Estimate& e) {
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& [name, bytes] : e.memory_parts) parts[name] = bytes;
  return {{"memory_bytes", e.memory_bytes},
          {"wall_s", e.wall_s},
          {"transfers", e.transfers},
          {"packet_hops", e.packet_hops},
          {"memory_parts", parts}};
}

std::string to_text(const Estimate& e) {
  std::ostringstream out;
  out << "estimate: memory " << gib(e.memory_bytes) << " (";
  bool first = true;
  for (const auto& [name, bytes] : e.memory_parts) {
    if (bytes < 1e6) continue;
    out << (first ? "" : ", ") << name << " " << gib(bytes);
    first = false;
  }
  out.precision(3);
  out << "), wall " << e.wall_s << " s, " << e.transfers << " transfers";
  if (e.packet_hops > 0) out << ", " << e.packet_hops << " packet hops";
  out << "\n";
  return out.str();
}

std::optional<std::string> refusal(const Estimate& e, std::optional<double> available) {
  if (!available || e.memory_bytes <= *available) return std::nullopt;
  return "estimated memory " + gib(e.memory_bytes) + " exceeds the " + gib(*available) +
         " available (MemAvailable in /proc/meminfo); refusing to start (--force runs it anyway, "
         "--verbose shows the estimate)";
}

}  // namespace syncsim::app
