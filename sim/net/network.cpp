#include "sim/net/network.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/net/dcqcn_pacing.hpp"
#include "sim/net/ecn.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/go_back_n.hpp"
#include "sim/net/ib_congestion_control.hpp"
#include "sim/net/ib_credits.hpp"
#include "sim/net/link_impairment.hpp"
#include "sim/net/load_balancing.hpp"
#include "sim/net/network_faults.hpp"
#include "sim/net/nic.hpp"
#include "sim/net/nvlink_credits.hpp"
#include "sim/net/pfc.hpp"
#include "sim/net/switch.hpp"
#include "sim/net/tcp.hpp"

namespace syncsim::net {

Network::Network(Simulation& sim, const NetworkSpec& spec)
    : sim_(sim), spec_(spec), routing_(spec), ctx_{sim.queue(),  pool_,      counters_, routing_,
                                                   route_arena_, port_ptrs_, flows_,    nullptr} {
  const std::size_t n = spec.nodes.size();
  // InfiniBand (ib_credits.hpp): credits make every VL of the fabric lossless; PFC, ECN and DCQCN
  // are Ethernet's and stay off (NVLink islands keep their own lossless model).
  const bool ib = spec.link_layer == LinkLayer::Infiniband;
  PfcParams pfc = spec.pfc;
  if (ib) pfc.enabled = false;
  const uint8_t lossless_mask = ib ? uint8_t{0xFF} : pfc.enabled ? pfc.lossless_mask : uint8_t{0};
  ctx_.lossless_mask = lossless_mask;
  ctx_.hand_over = spec.execution.hand_over;
  ctx_.send_queues = &send_queues_;
  const uint32_t priorities = spec.switch_params.priorities;
  nodes_.reserve(n);
  switches_.assign(n, nullptr);
  nics_.assign(n, nullptr);
  if (spec.load_balancing.mode != LoadBalancing::Ecmp) {
    balancer_ = std::make_unique<LoadBalancer>(ctx_, spec.load_balancing);
    ctx_.balancer = balancer_.get();
  }
  if (ib && spec.infiniband.congestion_control.enabled) {
    ib_cc_ = std::make_unique<IbCongestionControl>(ctx_, spec.infiniband.congestion_control,
                                                   static_cast<uint8_t>(priorities - 1), nics_);
  } else if (!ib && spec.any_dcqcn()) {
    // Each NIC's own DCQCN parameters; null where its DCQCN is off (reaction and notification).
    std::vector<const DcqcnParams*> dcqcn_of(n, nullptr);
    for (NodeId id = 0; id < n; ++id) {
      const DcqcnParams& d = spec.nic_params(id).dcqcn;
      if (spec.nodes[id].kind != NodeKind::Switch && d.enabled) dcqcn_of[id] = &d;
    }
    dcqcn_ = std::make_unique<DcqcnPacing>(ctx_, std::move(dcqcn_of),
                                           static_cast<uint8_t>(priorities - 1), nics_);
  }
  // One reliable transport for the fabric: TCP, or go-back-N for RoCE on lossy classes and for
  // RC recovery on lossless ones.
  const TransportParams& t = spec.transport;
  if (t.kind == TransportKind::Tcp) {
    transport_ = std::make_unique<Tcp>(ctx_, nics_, pacing(), t.tcp);
  } else if (t.gbn.enabled || (t.gbn.lossless && (pfc.enabled || ib))) {
    auto gbn = std::make_unique<GoBackN>(ctx_, nics_, pacing(), t.gbn, lossless_mask);
    ctx_.loss_listener = gbn.get();
    transport_ = std::move(gbn);
  }
  node_ctx_.assign(n, &ctx_);
  // Every mechanism runs partitioned: what acts across the fabric other than by packets on links
  // is split by side and posted between partitions (PFC's deadlock detector, go-back-N's RC
  // recovery, DCQCN, InfiniBand's credits and congestion control); TCP's ACKs are packets and a
  // connection's window is its sender's; per-packet load balancing sets a packet's entropy at its
  // sender NIC and a switch reads only its own queues; link loss and jitter draw from each link's
  // own streams in its sender's partition; in-switch engines join their switch's partition. Only a
  // fabric without two leaves or without lookahead stays one queue (fabric_partition.hpp).
  if (spec.execution.partitioned) {
    const FabricPartition plan = partition_fabric(spec);
    if (spec.execution.reaction <= Time::zero()) {
      partition_refusal_ =
          "what a completion starts may start at once (a step latency of zero), so no window can "
          "run ahead of it";
    } else if (plan.count > 1) {
      build_partitions(plan);
    } else {
      partition_refusal_ = plan.why_one;
    }
  }
  for (NodeId id = 0; id < n; ++id) {
    if (spec.nodes[id].kind == NodeKind::Switch) {
      // NVLink is credit-based and lossless by itself: PFC and ECN are for the Ethernet switches.
      const bool ethernet = spec.nodes[id].role != SwitchRole::NvSwitch;
      SwitchParams params = spec.switch_params;
      if (!ethernet) params.buffer = nvswitch_buffer(spec, routing_, id);
      auto sw = std::make_unique<Switch>(ctx_of(id), id, params, routing_.ports_of(id),
                                         switch_pfc_config(pfc, routing_, id, ethernet),
                                         pfc.pause_quanta);
      std::vector<uint32_t> headers;
      for (PortId p : routing_.ports_of(id)) {
        headers.push_back(static_cast<uint32_t>(routing_.link_of(p).header.count()));
      }
      sw->set_ingress_headers(std::move(headers));
      // InfiniBand links and NVLink (nvlink_credits.hpp) run credits.
      if (ib || !ethernet) sw->enable_ib();
      switches_[id] = sw.get();
      nodes_.push_back(std::move(sw));
    } else {
      auto nic = std::make_unique<Nic>(ctx_of(id), id, spec.nic_params(id), priorities,
                                       pfc.lossless_mask, pacing(), transport_.get());
      const PortId nic_port = routing_.ports_of(id).front();
      if ((ib && ib_port(spec, routing_, nic_port)) ||
          nvlink_credit_port(spec, routing_, nic_port)) {
        nic->enable_ib();
      }
      nics_[id] = nic.get();
      nodes_.push_back(std::move(nic));
    }
  }
  const auto& ports = routing_.ports();
  ports_.reserve(ports.size());
  port_ptrs_.reserve(ports.size());
  for (PortId p = 0; p < ports.size(); ++p) {
    const PortInfo& info = ports[p];
    ports_.push_back(std::make_unique<EgressPort>(
        ctx_of(info.owner), routing_.link_of(p), priorities, nodes_[info.peer].get(),
        info.peer_local_index, switches_[info.owner], nics_[info.owner]));
    port_ptrs_.push_back(ports_.back().get());
    if (!partitions_.empty()) {
      const uint32_t from = partition_of_[info.owner];
      const uint32_t to = partition_of_[info.peer];
      if (from != to) {
        Link& far_end =
            partitions_[to]->far_ends.emplace_back(*partition_ctx_[to], routing_.link_of(p).delay,
                                                   nodes_[info.peer].get(), info.peer_local_index);
        ports_.back()->link().set_remote(&partitions_[from]->outbox[to], &far_end);
      }
    }
    if (spec.port_counters) ports_.back()->enable_counters();
    const bool ethernet_switch =
        switches_[info.owner] != nullptr && spec.nodes[info.owner].role != SwitchRole::NvSwitch;
    if (ib_port(spec, routing_, p)) {
      ports_.back()->enable_ib_credits(spec.infiniband, ib_advertised_bytes(spec, routing_, p));
      if (ethernet_switch) ports_.back()->enable_ib_credit_release();
    } else if (nvlink_credit_port(spec, routing_, p)) {
      // One credit pool per NVLink, shared by the classes.
      ports_.back()->enable_link_credits({}, nvlink_credit_bytes(routing_.link_of(p)));
    }
    // An NVSwitch hands back the credits of every packet that leaves it, whatever its way out
    // (the engine's inputs hold none: Switch::return_ib_credits skips them).
    if (switches_[info.owner] != nullptr && spec.nodes[info.owner].role == SwitchRole::NvSwitch) {
      ports_.back()->enable_ib_credit_release();
    }
    const EcnParams& ecn = spec.ecn;
    if (ib && ethernet_switch && ib_cc_) {
      // FECN: every data packet leaving with more than the threshold queued (itself included) is
      // marked (step marking: RED with Kmax one byte above Kmin and Pmax 1).
      const int64_t threshold = spec.infiniband.congestion_control.threshold.count();
      ports_.back()->enable_ecn(EcnMarker(threshold, threshold + 1, 1.0), false,
                                sim.rng(RngStreamKind::Ecn, p));
    } else if (!ib && ecn.enabled && ethernet_switch) {
      const auto [kmin, kmax] = ecn_thresholds(ecn);
      ports_.back()->enable_ecn(EcnMarker(kmin, kmax, ecn.pmax), ecn.mark_on_enqueue,
                                sim.rng(RngStreamKind::Ecn, p));
    }
    if (ethernet_switch) {
      // The highest class carries CNPs (DcqcnPacing above): always strict, as switches ship it.
      ports_.back()->set_ets(EtsScheduler(spec.ets, priorities, priorities - 1));
    }
    if (pfc.enabled && pfc.watchdog && ethernet_switch) {
      ports_.back()->enable_watchdog(pfc.watchdog_time, pfc.watchdog_drop);
    }
  }
  // In-switch engines write into their switch's ports from inside it (in_switch_engine.hpp): NVLink
  // SHARP's in each NVSwitch, and InfiniBand SHARP's aggregation engine in each fabric switch.
  std::vector<NodeId> engines;
  engines.reserve(spec.nvls_engines.size() + spec.sharp_engines.size());
  for (const GpuAttachment& engine : spec.nvls_engines) engines.push_back(engine.nvlink_port);
  for (const GpuAttachment& engine : spec.sharp_engines) engines.push_back(engine.nic);
  for (const NodeId node : engines) {
    nics_[node]->set_in_switch_engine();
    const PortId engine_port = routing_.ports_of(node).front();
    switches_[ports[engine_port].peer]->set_internal_port(ports[engine_port].peer_local_index);
    for (PortId q : routing_.ports_of(ports[engine_port].peer)) {
      if (ports[q].peer != node) {
        ports_[q]->set_internal_writer(ports_[engine_port].get(),
                                       ports[engine_port].peer_local_index);
      }
    }
  }
  if (pfc.enabled && pfc.deadlock_detection_time > Time::zero()) {
    deadlock_ = std::make_unique<DeadlockDetector>(ctx_, switches_, priorities,
                                                   pfc.deadlock_detection_time);
    ctx_.pause_listener = deadlock_.get();
    // A windowed run: each partition notes its pauses, and the detector takes them in after each
    // window (its checks run between windows, on the whole fabric).
    for (std::size_t i = 0; i < partition_ctx_.size(); ++i) {
      partition_ctx_[i]->pause_listener = deadlock_->partition_tally(*partition_ctx_[i]);
    }
    if (!partitions_.empty()) deadlock_->set_node_contexts(&node_ctx_);
  }
  if (spec.impairments.active()) {
    const uint8_t lossless = !spec.impairments.loss_on_lossless ? lossless_mask : uint8_t{0};
    for (PortId p = 0; p < ports_.size(); ++p) {
      if (auto impairment =
              LinkImpairment::make(spec.impairments, routing_.link_of(p), lossless, sim, p)) {
        ports_[p]->link().set_impairment(std::move(impairment));
      }
    }
  }
  findings_ = check_configuration(spec, routing_, switches_);
  if (!partitions_.empty()) {
    // Windows as long as the links allow, and no longer than the reaction of whatever starts flows
    // from completions (they are told after the window).
    windows_ = std::make_unique<PartitionWindows>(
        sim.queue(), partitions_, std::min(partition_lookahead_, spec.execution.reaction), flows_,
        spec.execution.threads, spec.execution.min_window_events_per_thread);
    // A caller that starts flows from completions a reaction later sets them up ahead
    // (start_flow's start_at), so no event of the simulation's queue acts on the partitions at its
    // own time (its reductions, copies and completions only lead to flows set up ahead) and the
    // windows need not stop at them. Faults do: schedule_faults turns this off.
    starts_ahead_ = spec.execution.reaction < Time::max();
    windows_->set_bounded_by_global(!starts_ahead_);
    if (deadlock_) windows_->set_window_listener(deadlock_.get());
  }
}

Network::~Network() = default;

void Network::pause_windows_after(Time t) const {
  if (!windows_) return;
  windows_->set_window_limit(t == Time::max() ? INT64_MAX : t.picoseconds() + 1);
}

void Network::build_partitions(const FabricPartition& plan) {
  partition_of_ = plan.of_node;
  partition_lookahead_ = plan.lookahead;
  for (uint32_t i = 0; i < plan.count; ++i) {
    partitions_.push_back(std::make_unique<Partition>(plan.count));
    Partition& p = *partitions_.back();
    auto ctx = std::make_unique<NetContext>(NetContext{p.queue, p.pool, p.counters, routing_,
                                                       route_arena_, port_ptrs_, flows_, nullptr});
    ctx->lossless_mask = ctx_.lossless_mask;
    ctx->hand_over = ctx_.hand_over;
    ctx->send_queues = ctx_.send_queues;
    ctx->loss_listener = ctx_.loss_listener;
    ctx->balancer = ctx_.balancer;
    ctx->deferred_completions = &p.completions;
    ctx->outboxes = &p.outbox;
    ctx->partition = i;
    ctx->lookahead = plan.lookahead;
    partition_ctx_.push_back(std::move(ctx));
  }
  for (NodeId id = 0; id < node_ctx_.size(); ++id) {
    node_ctx_[id] = partition_ctx_[partition_of_[id]].get();
  }
  if (transport_) transport_->set_node_contexts(&node_ctx_);
  if (dcqcn_) dcqcn_->set_node_contexts(&node_ctx_);
  if (ib_cc_) ib_cc_->set_node_contexts(&node_ctx_);
}

NetworkCounters Network::counters() const {
  NetworkCounters total = counters_;
  for (const auto& p : partitions_) add_counters(total, p->counters);
  return total;
}

std::size_t Network::packets_in_flight() const {
  std::size_t live = pool_.live();
  for (const auto& p : partitions_) live += p->pool.live();
  return live;
}

std::size_t Network::packet_pool_capacity() const {
  std::size_t capacity = pool_.capacity();
  for (const auto& p : partitions_) capacity += p->pool.capacity();
  return capacity;
}

uint64_t Network::partition_events() const { return windows_ ? windows_->events() : 0; }
uint64_t Network::partition_windows() const { return windows_ ? windows_->windows() : 0; }
unsigned Network::partition_threads() const { return windows_ ? windows_->threads() : 1; }
uint64_t Network::partition_threaded_windows() const {
  return windows_ ? windows_->threaded_windows() : 0;
}
std::vector<ThreadLoad> Network::partition_thread_loads() const {
  return windows_ ? windows_->load().loads() : std::vector<ThreadLoad>{};
}

Time Network::partition_window() const {
  return windows_ ? std::min(partition_lookahead_, spec_.execution.reaction) : Time::zero();
}

bool Network::needs_transport(const FlowRecord& f) const {
  if (transport_ == nullptr) return false;
  // NVLink is credit-based and lossless: messages inside a host keep the plain model.
  const NodeId attachment = spec_.attachment_of_nic[f.src];
  if (attachment != kNoNode && spec_.nodes[attachment].role == SwitchRole::NvSwitch) return false;
  if (spec_.transport.kind == TransportKind::Tcp) return true;
  // RoCE on a PFC-protected class: RC recovery of the rare loss (its ACKs stay off the wire).
  const bool lossless =
      spec_.link_layer == LinkLayer::Infiniband ||
      (spec_.pfc.enabled &&
       ((static_cast<uint32_t>(spec_.pfc.lossless_mask) >> f.priority) & 1U) != 0);
  return lossless ? spec_.transport.gbn.lossless : spec_.transport.gbn.enabled;
}

FlowId Network::start_flow(NodeId src, NodeId dst, Bytes size, uint8_t priority,
                           uint32_t queue_pair, bool persistent_qp, Time start_at) {
  SIM_CHECK(size.count() > 0, "a flow must carry at least one byte");
  SIM_CHECK(nics_[src] != nullptr && nics_[dst] != nullptr, "flows run between NICs");
  SIM_CHECK(priority < spec_.switch_params.priorities, "flow priority above the class count");
  if (start_at > sim_.now())
    return start_flow_ahead(src, dst, size, priority, queue_pair, persistent_qp, start_at);
  if (windows_) {
    // Every partition's clock to now, and a window from now for what starts here.
    windows_->bring_to_now();
    windows_->wake();
  }
  FlowRecord f;
  f.src = src;
  f.dst = dst;
  f.size_bytes = size.count();
  f.start = sim_.now();
  f.priority = priority;
  f.queue_pair = queue_pair;
  f.persistent_qp = persistent_qp;
  f.route_begin = static_cast<uint32_t>(route_arena_.size());
  const uint64_t hash = routing_.flow_hash(src, dst, queue_pair);
  const NetworkSpec::RouteOverride* override_route = nullptr;
  for (const auto& o : spec_.route_overrides) {
    if (o.src == src && o.dst == dst) override_route = &o;
  }
  f.hash = hash;
  f.pinned_route = override_route != nullptr;
  const bool routed = override_route != nullptr
                          ? routing_.route_via(src, dst, override_route->via, hash, route_arena_)
                          : routing_.route(src, dst, hash, route_arena_);
  if (!routed) {
    // Only a fault can leave two NICs without a route: the flow waits, parked at its source NIC's
    // port, for a routing convergence that finds one (network_faults.hpp).
    SIM_CHECK(faults_ != nullptr, "no route between the flow's NICs");
    route_arena_.resize(f.route_begin);
    route_arena_.push_back(routing_.ports_of(src)[0]);
    f.parked = true;
    ++counters_.flows_unroutable;
  }
  f.route_hops = static_cast<uint16_t>(route_arena_.size() - f.route_begin);
  f.mtu_bytes = static_cast<uint32_t>(
      routing_.path_mtu(route_arena_.data() + f.route_begin, f.route_hops).count());
  const FlowId id = flows_.add(f);
  // A message on a persistent queue pair waits behind the earlier ones still sending (in order, as
  // the QP's send queue); its transport state below starts unlisted.
  bool head = true;
  if (persistent_qp) {
    const int64_t mtu = f.mtu_bytes;
    head = send_queues_.post(send_queues_.open(src, dst, priority, queue_pair), id,
                             static_cast<uint64_t>((f.size_bytes + mtu - 1) / mtu), flows_);
  }
  EgressPort& first = *ports_[route_arena_[f.route_begin]];
  if (NicPacing* cc = pacing()) cc->add_flow(id, first.bandwidth(), persistent_qp, queue_pair);
  if (needs_transport(f)) transport_->add_flow(id);
  ++counters_.flows_started;
  if (f.parked) {
    if (flows_[id].transport_state != kNoTransportState) transport_->park(id);
    return id;
  }
  if (!head) return id;  // listed when its predecessor sends its last new packet (Nic::pull)
  nics_[src]->add_flow(id);
  first.kick();
  return id;
}

FlowId Network::start_flow_ahead(NodeId src, NodeId dst, Bytes size, uint8_t priority,
                                 uint32_t queue_pair, bool persistent_qp, Time start_at) {
  SIM_CHECK(starts_ahead_, "a flow that starts later on a network that starts flows only now");
  // Between windows, on the simulation's thread: nothing below is read by a partition before the
  // flow's first packet, which its NIC sends no sooner than start_at.
  FlowRecord f;
  f.src = src;
  f.dst = dst;
  f.size_bytes = size.count();
  f.start = start_at;
  f.priority = priority;
  f.queue_pair = queue_pair;
  f.persistent_qp = persistent_qp;
  f.route_begin = static_cast<uint32_t>(route_arena_.size());
  f.hash = routing_.flow_hash(src, dst, queue_pair);
  for (const auto& o : spec_.route_overrides) {
    if (o.src == src && o.dst == dst) f.pinned_route = true;
  }
  SIM_CHECK(!f.pinned_route, "route overrides are not started ahead");
  SIM_CHECK(routing_.route(src, dst, f.hash, route_arena_), "no route between the flow's NICs");
  f.route_hops = static_cast<uint16_t>(route_arena_.size() - f.route_begin);
  f.mtu_bytes = static_cast<uint32_t>(
      routing_.path_mtu(route_arena_.data() + f.route_begin, f.route_hops).count());
  const FlowId id = flows_.add(f);
  const uint32_t queue =
      persistent_qp ? send_queues_.open(src, dst, priority, queue_pair) : kNoSendQueue;
  EgressPort& first = *ports_[route_arena_[f.route_begin]];
  if (NicPacing* cc = pacing()) cc->add_flow(id, first.bandwidth(), persistent_qp, queue_pair);
  if (needs_transport(f)) transport_->add_flow(id);
  ++counters_.flows_started;
  nics_[src]->start_at(start_at, id, queue);
  windows_->wake_at(start_at.picoseconds());
  return id;
}

double Network::flow_rate_bps(FlowId id) const {
  const FlowRecord& r = flows_[id];
  if (r.sent_bytes >= r.size_bytes) return 0;
  if (const NicPacing* cc = pacing()) return cc->rate_bps(id);
  return static_cast<double>(port(flow_first_port(id)).bandwidth().bits_per_second());
}

NicPacing* Network::pacing() const {
  if (dcqcn_) return dcqcn_.get();
  return ib_cc_.get();
}

const DcqcnFlowStats* Network::dcqcn_flow_stats(FlowId id) const {
  return dcqcn_ ? &dcqcn_->flow_stats(id) : nullptr;
}

}  // namespace syncsim::net
