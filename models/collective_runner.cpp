#include "models/collective_runner.hpp"

#include "sim/core/huge_pages.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace syncsim::models {

Time reduction_time(int64_t bytes, const CollectiveRunOptions& options) {
  if (options.hbm_bytes_per_s <= 0.0 || bytes <= 0) return Time::zero();
  return Time::from_seconds(3.0 * static_cast<double>(bytes) / options.hbm_bytes_per_s);
}

CollectiveRunner::CollectiveRunner(TransferBackend& backend, const CollectivePlan& plan,
                                   std::vector<uint32_t> rank_to_gpu, CollectiveRunOptions options)
    : backend_(backend), plan_(plan), gpu_(std::move(rank_to_gpu)), options_(options) {
  if (gpu_.size() < plan_.ranks) {
    throw std::invalid_argument("rank_to_gpu maps " + std::to_string(gpu_.size()) +
                                " ranks, the plan has " + std::to_string(plan_.ranks));
  }
  if (plan_.engines > 0) {
    // Engines after the GPU ranks: first the hosts' NVLS engines (engine e is the NVSwitch of the
    // host of its first GPU rank), then the fabric's SHARP engines (fabric_engines).
    const net::NetworkSpec& spec = backend_.spec();
    gpu_.resize(plan_.ranks);
    const auto host_engines = static_cast<uint32_t>(plan_.engines - plan_.fabric_engines.size());
    for (uint32_t e = 0; e < host_engines; ++e) {
      const uint32_t first = static_cast<uint32_t>(uint64_t{e} * plan_.ranks / host_engines);
      const uint32_t host = spec.gpus.at(gpu_[first]).host;
      if (host >= spec.nvls_engines.size()) {
        throw std::invalid_argument(
            "nvls needs NVLink SHARP (an NVSwitch that reduces: h100, h200, b200, gb200 hosts "
            "of more than one GPU); this fabric's hosts have none");
      }
      gpu_.push_back(spec.nvls_endpoint(host));
    }
    for (const uint32_t k : plan_.fabric_engines) {
      if (k >= spec.sharp_engines.size()) {
        throw std::invalid_argument(
            "collnet needs SHARP switches (fabric.infiniband.sharp.enabled); this fabric has " +
            std::to_string(spec.sharp_engines.size()) + " SHARP engines, the plan names engine " +
            std::to_string(k));
      }
      gpu_.push_back(spec.sharp_endpoint(k));
    }
  }
  // PXN only for plans whose inter-host hops are rail-aligned by construction (rings enter and
  // leave each host on their channel's rail) or already same-rail. The tree plan is a binary tree
  // over ranks, not NCCL's per-node trees with one NIC per tree channel: its inter-host edges join
  // GPUs on different rails, and the proxy rule would send up to three of a host's tree edges
  // through one NIC (busiest NIC 6 half-buffers instead of 4 at 32..4096 ranks of 8-GPU hosts,
  // ~1.45x slower all-reduces), a NIC choice NCCL's topology search never makes. Trees use each
  // GPU's own NIC (test_tree_pxn.cpp).
  if (options_.pxn && plan_.algo != CollectiveAlgo::Tree) {
    const auto& gpus = backend_.spec().gpus;
    uint32_t hosts = 0;
    for (const auto& a : gpus) {
      hosts = std::max(hosts, a.host + 1);
      proxy_stride_ = std::max(proxy_stride_, a.local_index + 1);
    }
    proxy_.assign(static_cast<std::size_t>(hosts) * proxy_stride_, UINT32_MAX);
    for (uint32_t i = 0; i < gpus.size(); ++i) {
      proxy_[static_cast<std::size_t>(gpus[i].host) * proxy_stride_ + gpus[i].local_index] = i;
    }
  }
  if (options_.qps_per_connection > 256) {
    throw std::invalid_argument("at most 256 queue pairs per connection, got " +
                                std::to_string(options_.qps_per_connection));
  }
  if (options_.qps_per_connection > 1) next_qp_.assign(plan_.connections, 0);
  if (options_.communicator >= (1U << 16)) {
    throw std::invalid_argument("communicator ids are below 65536, got " +
                                std::to_string(options_.communicator));
  }
  uint32_t channels = 0;  // the plan's, for the queue-pair tags and the channel copy caps
  for (const PlanStep& s : plan_.steps) {
    if (s.kind == PlanStep::Kind::Transfer) channels = std::max<uint32_t>(channels, s.channel + 1u);
  }
  if (uint64_t{channels} * std::max(1u, options_.qps_per_connection) > (1U << 16)) {
    throw std::invalid_argument("channels x queue pairs per connection must be at most 65536");
  }
  if (!(options_.channel_copy_bytes_per_s >= 0.0)) {
    throw std::invalid_argument("channel copy rate must be >= 0 bytes/s");
  }
  if (options_.channel_copy_bytes_per_s > 0.0) {
    copy_channels_ = channels;
    copy_until_.assign(static_cast<std::size_t>(plan_.ranks) * copy_channels_, Time::zero());
  }
  if (plan_.connection_depth > 1) {
    paced_until_.assign(plan_.connections, Time::zero());
    const net::NetworkSpec& spec = backend_.spec();
    egress_.assign(spec.nodes.size(), nullptr);
    for (const net::LinkSpec& l : spec.links) {
      for (net::NodeId end : {l.a, l.b}) {
        if (spec.nodes[end].kind == net::NodeKind::Nic)
          egress_[end] = &spec.link_classes[l.link_class];
      }
    }
    // A SHARP engine's stream leaves its switch through a port, not through the engine's own
    // (switch-wide) link: pace it at the switch's slowest port, so that a tree's rounds follow
    // one another on each hop as they do on the real switch's ports.
    // One pass over the links, and only for plans that use the engines.
    if (!plan_.fabric_engines.empty()) {
      std::vector<const net::LinkParams*> slowest(spec.nodes.size(), nullptr);
      for (const net::LinkSpec& l : spec.links) {
        const net::LinkParams& c = spec.link_classes[l.link_class];
        for (const auto& [end, other] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
          if (spec.nodes[other].kind == net::NodeKind::Nic &&
              spec.nodes[other].host == net::kNoHost)
            continue;  // the engine's own link
          if (slowest[end] == nullptr || c.bandwidth < slowest[end]->bandwidth) slowest[end] = &c;
        }
      }
      for (std::size_t k = 0; k < spec.sharp_engines.size(); ++k) {
        const net::LinkParams* port = slowest[spec.sharp_engine_switch[k]];
        if (port != nullptr) egress_[spec.sharp_engines[k].nic] = port;
      }
    }
  }
  const std::size_t n = plan_.steps.size();
  if (plan_.dep_offsets.size() != n + 1) {
    throw std::invalid_argument("plan dependency arrays do not match its steps");
  }
  if (n >= kSameConnection) {
    throw std::invalid_argument("plan of " + std::to_string(n) +
                                " steps: at most 2^31 - 1 supported");
  }
  notify_slots_ = backend_.fidelity() == Fidelity::Packet;
  reserve_huge(steps_, n);
  reserve_huge(dep_offsets_, n + 1);
  steps_.assign(n, StepState{0, 0});
  dep_offsets_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i) {
    for (uint32_t d : plan_.deps(i)) {
      if (d >= i) throw std::invalid_argument("plan step depends on a later step");
      ++dep_offsets_[d + 1];
    }
    steps_[i].waiting = static_cast<uint32_t>(plan_.deps(i).size());
  }
  for (std::size_t i = 0; i < n; ++i) dep_offsets_[i + 1] += dep_offsets_[i];
  reserve_huge(dependents_, dep_offsets_[n]);
  dependents_.assign(dep_offsets_[n], 0);
  // dep_offsets_[d] serves as step d's fill cursor, ending at the start of d + 1's list; shifting
  // by one restores the offsets (no second array of n cursors).
  // Tagging the dependency on the previous transfer of the same connection here keeps finish()
  // from reading every dependency's step (random reads over a plan of millions of steps).
  for (std::size_t i = 0; i < n; ++i) {
    const PlanStep& s = plan_.steps[i];
    for (uint32_t d : plan_.deps(i)) {
      const PlanStep& p = plan_.steps[d];
      const bool same_connection = s.kind == PlanStep::Kind::Transfer &&
                                   p.kind == PlanStep::Kind::Transfer && p.src == s.src &&
                                   p.dst == s.dst && p.channel == s.channel;
      dependents_[dep_offsets_[d]++] =
          static_cast<uint32_t>(i) | (same_connection ? kSameConnection : 0u);
    }
  }
  for (std::size_t i = n; i > 0; --i) dep_offsets_[i] = dep_offsets_[i - 1];
  dep_offsets_[0] = 0;
}

void CollectiveRunner::start(std::function<void(const CollectiveResult&)> on_done) {
  if (started_) throw std::logic_error("a CollectiveRunner runs once");
  started_ = true;
  on_done_ = std::move(on_done);
  Simulation& sim = backend_.simulation();
  result_.start = sim.now();
  result_.finish = sim.now();
  if (plan_.steps.empty()) {
    sim.queue().schedule_fn(sim.now(), [this] {
      if (on_done_) on_done_(result_);
    });
    return;
  }
  backend_.reserve_transfers(plan_.transfer_count());
  if (backend_.starts_ahead()) {
    // On partitions, what a completion starts must lie past the window it completed in: the
    // network's windows were sized from a reaction every collective of the run keeps
    // (NetworkSpec::Execution::reaction). A plan that reacts sooner is a caller's mistake.
    const Time window = backend_.execution().window;
    const Time reaction = least_reaction(plan_, gpu_, options_, backend_.spec());
    if (reaction < window) {
      throw std::logic_error("a collective whose transfers start " +
                             std::to_string(reaction.seconds() * 1e9) +
                             " ns after what they wait for runs on partitions whose windows last " +
                             std::to_string(window.seconds() * 1e9) + " ns");
    }
  }
  open_connections();
  auto roots = [this] {
    for (uint32_t i = 0; i < plan_.steps.size(); ++i) {
      if (steps_[i].waiting == 0) issue(i);
    }
  };
  if (options_.launch_latency > Time::zero()) {
    sim.queue().schedule_fn(sim.now() + options_.launch_latency, roots);
  } else {
    roots();
  }
}

void CollectiveRunner::issue(uint32_t step) {
  const PlanStep& s = plan_.steps[step];
  Simulation& sim = backend_.simulation();
  if (s.kind == PlanStep::Kind::Reduce) {
    ++result_.reductions;
    // A switch engine (NVLS) adds at line rate in the switch: no GPU time.
    const Time t = s.src >= plan_.ranks ? Time::zero() : reduction_time(s.bytes, options_);
    sim.queue().schedule(sim.now() + t, this, kReduced, step);
    return;
  }
  ++result_.transfers;
  result_.bytes_sent += s.bytes;
  // The latency runs from the last of its dependencies' finish
  // (CollectiveRunOptions::step_latency), overlapping the transfers in flight on the same
  // connection while their slots are free, as NCCL posts the next chunk while one is in flight;
  // `ready` holds a freed slot's notice less that latency (finish()).
  const Time ready = std::max(result_.start + options_.launch_latency, steps_[step].ready());
  Time at = std::max(sim.now(), ready + latency_of(s));
  Time* paced_until = nullptr;  // the connection's pacing, set below from the final start
  Time pace = Time::zero();
  if (!egress_.empty()) {
    // Pacing (see paced_until_): after the connection's previous transfer has left the sender.
    const net::NetworkSpec& spec = backend_.spec();
    const net::GpuAttachment& a = spec.endpoint(gpu_[s.src]);
    const net::GpuAttachment& b = spec.endpoint(gpu_[s.dst]);
    const net::NodeId port = net::same_host(a, b) ? a.nvlink_port : a.nic;
    if (s.source_step >= paced_until_.size()) {
      throw std::invalid_argument("plan transfer names connection " +
                                  std::to_string(s.source_step) + " of " +
                                  std::to_string(paced_until_.size()));
    }
    Time& paced = paced_until_[s.source_step];
    at = std::max(at, paced);
    if (const net::LinkParams* l = port == net::kNoNode ? nullptr : egress_[port]) {
      paced_until = &paced;
      const int64_t wire = wire_bytes(s.bytes, gpu_[s.src], gpu_[s.dst]);
      const int64_t mtu = std::max<int64_t>(1, l->mtu.count());
      const int64_t packets = (wire + mtu - 1) / mtu;
      pace = l->bandwidth.tx_time(Bytes{wire + packets * l->header.count()});
    }
  }
  if (!copy_until_.empty() && s.src < plan_.ranks && s.dst < plan_.ranks) {
    // The sender's CTA on this channel copies its transfers one after another.
    Time& copied = copy_until_[static_cast<std::size_t>(s.src) * copy_channels_ + s.channel];
    at = std::max(at, copied);
    copied =
        at + Time::from_seconds(static_cast<double>(s.bytes) / options_.channel_copy_bytes_per_s);
    // Free once issued: the earliest this transfer can finish.
    steps_[step].ready_ps = copied.picoseconds();
  } else if (!copy_until_.empty()) {
    steps_[step].ready_ps = 0;
  }
  if (paced_until != nullptr) *paced_until = at + pace;
  if (at > sim.now() && !backend_.starts_ahead()) {
    sim.queue().schedule(at, this, kBegin, step);
  } else {
    // Now, or handed over now to start at `at` (a partitioned packet network).
    begin_transfer(step, at);
  }
}

void CollectiveRunner::on_event(uint32_t kind, uint64_t arg) {
  const auto step = static_cast<uint32_t>(arg);
  if (kind == kBegin) {
    begin_transfer(step, backend_.simulation().now());
  } else {
    finish(step);  // kReduced, kCopied
  }
}

uint32_t CollectiveRunner::sending_gpu(const PlanStep& t) const {
  uint32_t src = gpu_[t.src];
  const uint32_t dst = gpu_[t.dst];
  if (!proxy_.empty() && src < backend_.spec().gpus.size() && dst < backend_.spec().gpus.size()) {
    const auto& gpus = backend_.spec().gpus;
    if (gpus[src].host != gpus[dst].host) {
      const uint32_t proxy =
          proxy_[static_cast<std::size_t>(gpus[src].host) * proxy_stride_ + gpus[dst].local_index];
      if (proxy != UINT32_MAX) src = proxy;
    }
  }
  return src;
}

void CollectiveRunner::open_connections() {
  // NCCL connects a communicator's channels to their peers before the first message (its transport
  // setup, ncclTransportP2pSetup in src/transport.cc, at communicator init); here every
  // connection's queue pairs are opened in the plan's order, each at its first transfer, so their
  // numbers (and ECMP paths) do not depend on which transfer starts first at run time.
  if (options_.qps_per_connection == 0) return;
  std::vector<char> opened(plan_.connections, 0);
  for (const PlanStep& t : plan_.steps) {
    if (t.kind != PlanStep::Kind::Transfer) continue;
    if (t.source_step < opened.size()) {
      if (opened[t.source_step] != 0) continue;
      opened[t.source_step] = 1;
    }
    const uint32_t src = sending_gpu(t);
    const uint32_t dst = gpu_[t.dst];
    const int64_t wire = wire_bytes(t.bytes, gpu_[t.src], dst);
    for (uint32_t q = 0; q < options_.qps_per_connection; ++q) {
      const uint32_t channel_qp =
          options_.qps_per_connection == 1
              ? t.channel
              : static_cast<uint32_t>(t.channel) * options_.qps_per_connection + q;
      backend_.open_queue_pair(TransferRequest{src, dst, Bytes{wire}, options_.priority,
                                               (options_.communicator << 16) | channel_qp});
    }
  }
}

void CollectiveRunner::begin_transfer(uint32_t step, Time at) {
  const PlanStep& t = plan_.steps[step];
  const uint32_t src = sending_gpu(t);
  const uint32_t dst = gpu_[t.dst];
  const int64_t wire = wire_bytes(t.bytes, gpu_[t.src], dst);
  // The connection's queue pair: communicator, channel x QP within it (the backend adds the
  // NICs).
  uint32_t connection = kNoConnection;
  if (options_.qps_per_connection == 1) {
    connection = (options_.communicator << 16) | t.channel;
  } else if (options_.qps_per_connection > 1) {
    uint32_t& next = next_qp_[t.source_step];
    connection = (options_.communicator << 16) |
                 (static_cast<uint32_t>(t.channel) * options_.qps_per_connection + next);
    next = (next + 1) % options_.qps_per_connection;
  }
  backend_.start(TransferRequest{src, dst, Bytes{wire}, options_.priority, connection, at},
                 [this, step](TransferId, const TransferRecord&) { delivered(step); });
}

Time CollectiveRunner::latency_of(const PlanStep& s) const {
  // Between two SHARP engines the switches pass the data on in hardware: no software step.
  const bool engine_hop = s.src >= plan_.ranks && s.dst >= plan_.ranks;
  if (engine_hop) return Time::zero();
  if (options_.net_step_latency) {
    const net::NetworkSpec& spec = backend_.spec();
    if (!net::same_host(spec.endpoint(gpu_[s.src]), spec.endpoint(gpu_[s.dst]))) {
      return *options_.net_step_latency;
    }
  }
  return options_.step_latency;
}

int64_t CollectiveRunner::wire_bytes(int64_t payload, uint32_t a, uint32_t b) const {
  double factor = options_.wire_factor;
  if (options_.intra_host_wire_factor) {
    const net::NetworkSpec& spec = backend_.spec();
    if (net::same_host(spec.endpoint(a), spec.endpoint(b)))
      factor = *options_.intra_host_wire_factor;
  }
  if (factor == 1.0) return payload;
  return static_cast<int64_t>(std::ceil(static_cast<double>(payload) * factor));
}

void CollectiveRunner::delivered(uint32_t step) {
  const Time now = backend_.simulation().now();
  if (!copy_until_.empty() && steps_[step].ready() > now) {
    backend_.simulation().queue().schedule(steps_[step].ready(), this, kCopied, step);
  } else {
    finish(step);
  }
}

void CollectiveRunner::finish(uint32_t step) {
  const Time now = backend_.simulation().now();
  ++finished_;
  if (now > result_.finish) result_.finish = now;
  for (uint32_t k = dep_offsets_[step]; k < dep_offsets_[step + 1]; ++k) {
    const uint32_t entry = dependents_[k];
    const uint32_t next = entry & ~kSameConnection;
    if ((entry & kSameConnection) != 0) {
      // At packet level the slot is free at the sender once the receiver's notice is back (the
      // fewest links between them; notify_slots_). Kept in its `ready` less the step's latency,
      // which issue() adds back, so that the later of the two binds. Also after an empty transfer:
      // a partitioned run relies on every start lying a reaction past what it waited for.
      if (notify_slots_) {
        const PlanStep& t = plan_.steps[next];
        const Time free_at = now + backend_.least_propagation(gpu_[t.src], gpu_[t.dst]);
        const Time counted_from = free_at - latency_of(t);
        if (counted_from > steps_[next].ready()) steps_[next].ready_ps = counted_from.picoseconds();
      }
    } else if (now > steps_[next].ready()) {
      steps_[next].ready_ps = now.picoseconds();
    }
    if (--steps_[next].waiting == 0) issue(next);
  }
  if (finished_ == plan_.steps.size() && on_done_) on_done_(result_);
}

Time least_reaction(const CollectivePlan& plan, const std::vector<uint32_t>& rank_to_gpu,
                    const CollectiveRunOptions& options, const net::NetworkSpec& spec) {
  // The engines' endpoints as CollectiveRunner maps them: what matters here is only whether a
  // transfer joins two engines (no latency) and, else, whether its ends share a host.
  Time least = Time::max();
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    if (s.kind != PlanStep::Kind::Transfer || plan.deps(i).empty()) continue;
    const bool engine_hop = s.src >= plan.ranks && s.dst >= plan.ranks;
    Time latency = engine_hop ? Time::zero() : options.step_latency;
    if (!engine_hop && options.net_step_latency) {
      // An engine end counts as between hosts unless the other end is a GPU of its host: the
      // runner's own test reads the endpoints, which for engines are switch ports; the smaller of
      // the two latencies is the safe bound there.
      if (s.src >= plan.ranks || s.dst >= plan.ranks) {
        latency = std::min(options.step_latency, *options.net_step_latency);
      } else if (!net::same_host(spec.endpoint(rank_to_gpu.at(s.src)),
                                 spec.endpoint(rank_to_gpu.at(s.dst)))) {
        latency = *options.net_step_latency;
      }
    }
    least = std::min(least, latency);
    if (least == Time::zero()) break;
  }
  if (least > Time::zero() && least < Time::max()) least = std::min(least, least_slot_notice(spec));
  return least;
}

Time least_slot_notice(const net::NetworkSpec& spec) {
  // A freed slot's notice crosses two links at least (TransferBackend::least_propagation): the two
  // shortest of the endpoints' own links bound it from below.
  Time shortest = Time::max();
  for (const net::LinkSpec& l : spec.links) {
    const bool edge = spec.nodes[l.a].kind != net::NodeKind::Switch ||
                      spec.nodes[l.b].kind != net::NodeKind::Switch;
    if (edge) shortest = std::min(shortest, spec.link_classes[l.link_class].delay);
  }
  return shortest < Time::max() ? shortest + shortest : Time::max();
}

CollectiveResult run_collective(TransferBackend& backend, const CollectivePlan& plan,
                                const std::vector<uint32_t>& rank_to_gpu,
                                const CollectiveRunOptions& options) {
  CollectiveRunner runner(backend, plan, rank_to_gpu, options);
  runner.start();
  backend.simulation().queue().run();
  if (!runner.done()) throw std::logic_error("collective did not complete");
  return runner.result();
}

}  // namespace syncsim::models
