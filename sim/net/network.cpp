#include "sim/net/network.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/core/check.hpp"

namespace syncsim::net {

// ---------------------------------------------------------------- Link

void Link::transmit(PacketRef packet) {
  ++net_.counters_mut().packet_hops;
  Time arrival = net_.now() + delay_;
  if (impairment_ && !impair(packet, arrival)) return;
  const bool was_idle = in_flight_.empty();
  in_flight_.push(InFlight{arrival.picoseconds(), packet});
  if (was_idle) net_.queue().schedule(arrival, this, 0);
}

void Link::on_event(uint32_t /*kind*/, uint64_t /*arg*/) {
  const InFlight head = in_flight_.pop();
  if (!in_flight_.empty()) {
    net_.queue().schedule(Time::ps(in_flight_.front().arrival_ps), this, 0);
  }
  peer_->receive(head.packet, peer_in_port_);
}

// ---------------------------------------------------------------- EgressPort

EgressPort::EgressPort(Network& net, const LinkParams& link, uint32_t priorities, Node* peer,
                       uint32_t peer_in_port, Switch* owner, Nic* source)
    : net_(net),
      bandwidth_(link.bandwidth),
      header_(link.header),
      link_(net, link.delay, peer, peer_in_port),
      priorities_(priorities),
      owner_(owner),
      mmu_(owner != nullptr ? &owner->mmu() : nullptr),
      source_(source) {
  SIM_CHECK(priorities_ >= 1 && priorities_ <= kMaxPriorities, "priority count out of range");
  SIM_CHECK(bandwidth_.bits_per_second() > 0, "a link needs a positive bandwidth");
}

void EgressPort::enqueue(PacketRef packet) {
  const Packet& p = net_.packet(packet);
  SIM_CHECK(p.priority < priorities_, "packet priority above the port's class count");
  const int64_t wire = p.payload_bytes + header_.count();
  if (storm_mask_ != 0 && watchdog_drop_ && storm(p.priority)) {
    drop_buffered(packet);
    return;
  }
  if (ecn_enabled_ && ecn_on_enqueue_ && p.kind == PacketKind::Data && ecn_mark(p.priority)) {
    net_.packet(packet).ecn_ce = true;
  }
  queued_bytes_ += wire;
  prio_bytes_[p.priority] += wire;
  net_.note_queue_depth(queued_bytes_);
  queues_[p.priority].push(packet);
  if (in_service_ == kNoPacket) start_next();
}

void EgressPort::send_control(PacketRef packet) {
  queued_bytes_ += net_.packet(packet).payload_bytes + header_.count();
  control_.push(packet);
  if (in_service_ == kNoPacket) start_next();
}

bool EgressPort::ecn_mark(uint8_t priority) {
  if (!ecn_.mark(prio_bytes_[priority], ecn_rng_)) return false;
  ++net_.counters_mut().ecn_marks;
  return true;
}

void EgressPort::set_paused(uint8_t priority, bool paused, uint32_t quanta) {
  SIM_CHECK(priority < priorities_, "PFC frame for a priority above the port's class count");
  ++pause_frames_received_;
  const auto bit = static_cast<uint8_t>(1U << priority);
  const bool was = (paused_mask_ & bit) != 0;
  if (paused && quanta > 0 && !(storm_mask_ != 0 && storm(priority))) {
    // The pause lasts quanta x 512 bit times from now; a refresh restarts it.
    expiry_tokens_[priority].cancel_pending();
    const Time hold = bandwidth_.tx_time(Bytes{static_cast<int64_t>(quanta) * 64});
    net_.queue().schedule(net_.now() + hold, this, kPauseExpiry, priority, &expiry_tokens_[priority]);
  }
  if (paused && !was) {
    if (storm_mask_ != 0 && storm(priority)) return;  // the watchdog ignores PAUSE for now
    paused_mask_ = static_cast<uint8_t>(paused_mask_ | bit);
    paused_since_ps_[priority] = net_.now().picoseconds();
    if (owner_ != nullptr) {
      if (watchdog_ps_ > 0) {
        net_.queue().schedule(net_.now() + Time::ps(watchdog_ps_), this, kWatchdog, priority,
                              &watchdog_tokens_[priority]);
      }
      net_.note_pause();
    }
  } else if (!paused && was) {
    resume(priority);
  }
}

void EgressPort::arm_pause_refresh(uint32_t local_port, uint8_t priority, Time after) {
  refresh_tokens_[priority].cancel_pending();
  net_.queue().schedule(net_.now() + after, this, kPauseRefresh,
                        (static_cast<uint64_t>(local_port) << 8) | priority, &refresh_tokens_[priority]);
}

void EgressPort::resume(uint8_t priority) {
  const auto bit = static_cast<uint8_t>(1U << priority);
  paused_mask_ = static_cast<uint8_t>(paused_mask_ & ~bit);
  paused_ps_ += net_.now().picoseconds() - paused_since_ps_[priority];
  watchdog_tokens_[priority].cancel_pending();
  expiry_tokens_[priority].cancel_pending();
  if (owner_ != nullptr) net_.note_resume();
  kick();
}

Time EgressPort::paused_time(Time now) const {
  int64_t total = paused_ps_;
  for (uint32_t prio = 0; prio < priorities_; ++prio) {
    if (((paused_mask_ >> prio) & 1U) != 0) total += now.picoseconds() - paused_since_ps_[prio];
  }
  return Time::ps(total);
}

void EgressPort::start_next() {
  PacketRef next = kNoPacket;
  if (!control_.empty()) {
    next = control_.pop();
  } else {
    for (uint32_t prio = priorities_; prio-- > 0;) {
      if (!queues_[prio].empty() && ((static_cast<uint32_t>(paused_mask_) >> prio) & 1U) == 0) {
        next = queues_[prio].pop();
        Packet& p = net_.packet(next);
        // Dequeue marking sees the FIFO including the departing packet.
        if (ecn_enabled_ && !ecn_on_enqueue_ && p.kind == PacketKind::Data &&
            ecn_mark(static_cast<uint8_t>(prio))) {
          p.ecn_ce = true;
        }
        prio_bytes_[prio] -= p.payload_bytes + header_.count();
        break;
      }
    }
  }
  if (next == kNoPacket) {
    if (source_ == nullptr) return;
    next = source_->pull(paused_mask_);
    if (next == kNoPacket) return;
    queued_bytes_ += net_.packet(next).payload_bytes + header_.count();
  }
  in_service_ = next;
  const uint32_t wire = net_.packet(next).payload_bytes + static_cast<uint32_t>(header_.count());
  net_.queue().schedule(net_.now() + tx_time(wire), this, kTxDone);
}

bool EgressPort::storm(uint8_t priority) {
  const auto bit = static_cast<uint8_t>(1U << priority);
  if ((storm_mask_ & bit) == 0) return false;
  if (net_.now().picoseconds() < storm_until_ps_[priority]) return true;
  storm_mask_ = static_cast<uint8_t>(storm_mask_ & ~bit);
  return false;
}

void EgressPort::drop_buffered(PacketRef packet) {
  const Packet& p = net_.packet(packet);
  if (mmu_ != nullptr && p.buffered_bytes > 0 &&
      mmu_->release(p.ingress_port, p.priority, Bytes{p.buffered_bytes}) == PfcSignal::Resume) {
    owner_->send_pfc(p.ingress_port, p.priority, false);
  }
  net_.drop(packet, DropReason::PfcWatchdog);
}

void EgressPort::watchdog_fire(uint8_t priority) {
  // Paused continuously for the detection time (a RESUME cancels this event): a PFC storm or a
  // deadlock. Stop honouring PAUSE for one more detection time; in drop mode also flush the queue.
  const auto bit = static_cast<uint8_t>(1U << priority);
  if ((paused_mask_ & bit) == 0) return;
  const int64_t now = net_.now().picoseconds();
  paused_mask_ = static_cast<uint8_t>(paused_mask_ & ~bit);
  paused_ps_ += now - paused_since_ps_[priority];
  net_.note_resume();
  storm_mask_ = static_cast<uint8_t>(storm_mask_ | bit);
  storm_until_ps_[priority] = now + watchdog_ps_;
  if (watchdog_drop_) {
    while (!queues_[priority].empty()) {
      const PacketRef r = queues_[priority].pop();
      const int64_t wire = net_.packet(r).payload_bytes + header_.count();
      prio_bytes_[priority] -= wire;
      queued_bytes_ -= wire;
      drop_buffered(r);
    }
  }
  kick();
}

void EgressPort::on_event(uint32_t kind, uint64_t arg) {
  if (kind == kWatchdog) {
    watchdog_fire(static_cast<uint8_t>(arg));
    return;
  }
  if (kind == kPauseExpiry) {
    // Not refreshed in time: the pause lapses as if RESUMEd.
    const auto prio = static_cast<uint8_t>(arg);
    if (paused(prio)) resume(prio);
    return;
  }
  if (kind == kPauseRefresh) {
    const auto prio = static_cast<uint8_t>(arg & 0xFF);
    const auto local = static_cast<uint32_t>(arg >> 8);
    if (owner_->mmu().xoff(local, prio)) owner_->send_pfc(local, prio, true);
    return;
  }
  const PacketRef done = in_service_;
  in_service_ = kNoPacket;
  const Packet& p = net_.packet(done);
  queued_bytes_ -= p.payload_bytes + header_.count();
  SIM_CHECK(queued_bytes_ >= 0, "egress queue byte count went negative");
  if (mmu_ != nullptr && p.kind != PacketKind::Pause) {
    // A RESUME goes out of the ingress port the bytes were charged to.
    if (mmu_->release(p.ingress_port, p.priority, Bytes{p.buffered_bytes}) == PfcSignal::Resume) {
      owner_->send_pfc(p.ingress_port, p.priority, false);
    }
  }
  link_.transmit(done);
  // The RESUME above may have gone out of this very port (a route that turns back over its ingress
  // link) and started it already.
  if (in_service_ == kNoPacket) start_next();
}

// ---------------------------------------------------------------- Switch

Switch::Switch(Network& net, NodeId id, const SwitchParams& params,
               const std::vector<PortId>& ports, MmuPfcConfig pfc)
    : net_(net),
      id_(id),
      mmu_(params.buffer, static_cast<uint32_t>(ports.size()), params.priorities, std::move(pfc)),
      ports_(ports) {}

void Switch::send_pfc(uint32_t port, uint8_t priority, bool xoff) {
  EgressPort& out = net_.egress(ports_[port]);
  const PacketRef ref = net_.new_packet(0, 0, Network::control_frame_payload(out), priority,
                                        PacketKind::Pause, false, xoff);
  Packet& f = net_.packet(ref);
  const uint32_t quanta = net_.spec().pfc.pause_quanta;
  f.route_begin = xoff ? quanta : 0;
  if (quanta > 0) {
    if (xoff) {
      // Refresh at half the pause time while still above XOFF.
      out.arm_pause_refresh(port, priority, out.bandwidth().tx_time(Bytes{int64_t{quanta} * 32}));
    } else {
      out.cancel_pause_refresh(priority);
    }
  }
  NetworkCounters& c = net_.counters_mut();
  ++(xoff ? c.pause_frames : c.resume_frames);
  out.send_control(ref);
}

void Switch::receive(PacketRef packet, uint32_t in_port) {
  Packet& p = net_.packet(packet);
  if (p.kind == PacketKind::Pause) {
    net_.egress(ports_[in_port]).set_paused(p.priority, p.pfc_xoff, p.route_begin);
    net_.pool().release(packet);
    return;
  }
  const uint32_t wire_in = p.payload_bytes + ingress_header_[in_port];
  const AdmitResult r = mmu_.admit(in_port, p.priority, Bytes{wire_in});
  if (r.pfc == PfcSignal::Pause) send_pfc(in_port, p.priority, true);
  if (r.admission != Admission::Admitted) {
    net_.drop(packet, r.admission == Admission::DroppedHeadroomExceeded
                          ? DropReason::LosslessHeadroomExceeded
                          : DropReason::BufferFull);
    return;
  }
  // send_pfc() allocates the PAUSE frame and may grow the packet pool: `p` may dangle by now.
  Packet& admitted = net_.packet(packet);
  admitted.buffered_bytes = wire_in;
  admitted.ingress_port = static_cast<uint16_t>(in_port);
  ++admitted.hop;
  net_.egress(net_.route_hop(admitted)).enqueue(packet);
}

// ---------------------------------------------------------------- Nic

void Nic::add_flow(FlowId flow) { active_.push_back(flow); }

void Nic::account_injected(FlowId id, const Packet& p) {
  if (net_.dcqcn_enabled()) {
    const uint32_t wire = p.payload_bytes + static_cast<uint32_t>(
        net_.egress(net_.routing().ports_of(id_)[0]).header().count());
    net_.dcqcn_on_sent(id, wire, p.payload_bytes);
  }
  NetworkCounters& c = net_.counters_mut();
  ++c.packets_injected;
  c.bytes_injected += p.payload_bytes;
}

PacketRef Nic::pull(uint8_t paused_mask) {
  if (active_.empty()) return kNoPacket;
  if (next_ >= active_.size()) next_ = 0;
  const bool paced = net_.dcqcn_enabled();
  if (paced) {
    // Skip paused flows and flows whose pacing does not allow a packet yet, keeping the round-robin
    // position; if only pacing holds flows back, wake up at the earliest next_send_at.
    const int64_t now = net_.now().picoseconds();
    int64_t earliest = INT64_MAX;
    std::size_t tried = 0;
    for (;;) {
      const FlowId id = active_[next_];
      if (((static_cast<uint32_t>(paused_mask) >> net_.flow(id).priority) & 1U) == 0) {
        const int64_t at = net_.dcqcn_flow(id).next_send_ps;
        if (at <= now) break;
        earliest = std::min(earliest, at);
      }
      if (++tried == active_.size()) {
        if (earliest != INT64_MAX) wake_at(earliest);
        return kNoPacket;
      }
      if (++next_ == active_.size()) next_ = 0;
    }
  } else if (paused_mask != 0) {
    // Skip flows of paused priorities, keeping the round-robin position.
    std::size_t tried = 0;
    while (((static_cast<uint32_t>(paused_mask) >> net_.flow(active_[next_]).priority) & 1U) != 0) {
      if (++tried == active_.size()) return kNoPacket;
      if (++next_ == active_.size()) next_ = 0;
    }
  }
  const FlowId id = active_[next_];
  if (net_.flow(id).transport_state != kNoTransportState) return pull_reliable(id);
  FlowRecord& f = net_.flow_mut(id);
  const int64_t payload = std::min<int64_t>(f.mtu_bytes, f.size_bytes - f.sent_bytes);
  const PacketRef ref = net_.new_packet(id, f.route_begin, static_cast<uint32_t>(payload),
                                        f.priority, PacketKind::Data, false, false);
  f.sent_bytes += payload;
  account_injected(id, net_.packet(ref));
  if (f.sent_bytes == f.size_bytes) {
    // Erasing keeps the round-robin order of the remaining flows; next_ now names the successor.
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(next_));
  } else {
    ++next_;
  }
  return ref;
}

void Nic::receive(PacketRef packet, uint32_t in_port) {
  const Packet& p = net_.packet(packet);
  if (p.kind == PacketKind::Pause) {
    net_.egress(net_.routing().ports_of(id_)[in_port]).set_paused(p.priority, p.pfc_xoff, p.route_begin);
    net_.pool().release(packet);
    return;
  }
  if (p.kind == PacketKind::Cnp) {
    // DCQCN reaction point: the CNP names the flow it throttles.
    const FlowId flow = p.flow;
    net_.pool().release(packet);
    net_.dcqcn_on_cnp(flow);
    return;
  }
  if (p.kind == PacketKind::Ack || p.kind == PacketKind::Nak) {
    net_.transport_on_ack(packet);
    return;
  }
  SIM_CHECK(p.kind == PacketKind::Data, "unexpected control packet at a NIC");
  if (net_.spec().nic.rx_pfc) {
    rx_accept(packet);
    return;
  }
  consume(packet);
}

void Nic::consume(PacketRef packet) {
  const Packet& p = net_.packet(packet);
  if (net_.flow(p.flow).transport_state != kNoTransportState) {
    net_.transport_on_data(packet);
    return;
  }
  // DCQCN notification point: an ECN-marked data packet makes the destination send a CNP to the
  // source queue pair, at most once per cnp_interval.
  if (p.ecn_ce && net_.dcqcn_enabled()) net_.dcqcn_notify(p.flow);
  net_.deliver(packet);
}

void Nic::rx_accept(PacketRef packet) {
  const NicParams& cfg = net_.spec().nic;
  const EgressPort& port = net_.egress(net_.routing().ports_of(id_)[0]);
  const int64_t wire = net_.packet(packet).payload_bytes + port.header().count();
  if (rx_bytes_ + wire > cfg.rx_buffer.count()) {
    net_.drop(packet, DropReason::NicRxOverflow);
    return;
  }
  rx_.push(packet);
  rx_bytes_ += wire;
  NetworkCounters& c = net_.counters_mut();
  if (rx_bytes_ > c.max_nic_rx_bytes) c.max_nic_rx_bytes = rx_bytes_;
  if (!rx_paused_ && rx_bytes_ > cfg.rx_xoff.count()) rx_pfc(true);
  if (!rx_draining_) {
    rx_draining_ = true;
    net_.queue().schedule(net_.now() + cfg.rx_drain_rate.tx_time(Bytes{wire}), this, kRxDrain);
  }
}

void Nic::rx_drain() {
  const NicParams& cfg = net_.spec().nic;
  const EgressPort& port = net_.egress(net_.routing().ports_of(id_)[0]);
  const PacketRef done = rx_.pop();
  rx_bytes_ -= net_.packet(done).payload_bytes + port.header().count();
  consume(done);
  if (rx_paused_ && rx_bytes_ <= cfg.rx_xon.count()) rx_pfc(false);
  if (rx_.empty()) {
    rx_draining_ = false;
    return;
  }
  const int64_t wire = net_.packet(rx_.front()).payload_bytes + port.header().count();
  net_.queue().schedule(net_.now() + cfg.rx_drain_rate.tx_time(Bytes{wire}), this, kRxDrain);
}

void Nic::rx_pfc(bool xoff) {
  rx_paused_ = xoff;
  EgressPort& out = net_.egress(net_.routing().ports_of(id_)[0]);
  const uint32_t payload = Network::control_frame_payload(out);
  // One frame per lossless priority (a real PFC frame carries a per-class vector; the wire cost of
  // the extra frames is negligible).
  for (uint32_t prio = 0; prio < net_.spec().switch_params.priorities; ++prio) {
    if (((static_cast<uint32_t>(net_.spec().pfc.lossless_mask) >> prio) & 1U) == 0) continue;
    const PacketRef ref = net_.new_packet(0, 0, payload, static_cast<uint8_t>(prio),
                                          PacketKind::Pause, false, xoff);
    if (xoff) ++net_.counters_mut().nic_pause_frames;
    out.send_control(ref);
  }
}

void Nic::wake_at(int64_t at_ps) {
  // An earlier (or equal) pending wake-up covers this one: pull() reschedules when it runs.
  if (wake_at_ps_ <= at_ps) return;
  wake_token_.cancel_pending();
  wake_at_ps_ = at_ps;
  net_.queue().schedule(Time::ps(at_ps), this, kWake, 0, &wake_token_);
}

void Nic::on_event(uint32_t kind, uint64_t arg) {
  if (kind == kRateTimer) {
    net_.dcqcn_rate_timer(static_cast<FlowId>(arg));
    return;
  }
  if (kind == kRetransmitTimer) {
    net_.transport_timer(static_cast<FlowId>(arg));
    return;
  }
  if (kind == kRxDrain) {
    rx_drain();
    return;
  }
  wake_at_ps_ = INT64_MAX;
  net_.egress(net_.routing().ports_of(id_)[0]).kick();
}

// ---------------------------------------------------------------- Network

Network::Network(Simulation& sim, const NetworkSpec& spec)
    : sim_(sim), spec_(spec), routing_(spec), dcqcn_on_(spec.nic.dcqcn.enabled) {
  const std::size_t n = spec.nodes.size();
  nodes_.reserve(n);
  switches_.assign(n, nullptr);
  nics_.assign(n, nullptr);
  const PfcParams& pfc = spec.pfc;
  for (NodeId id = 0; id < n; ++id) {
    if (spec.nodes[id].kind == NodeKind::Switch) {
      // NVLink is credit-based and lossless by itself: PFC and ECN are for the Ethernet switches.
      const bool ethernet = spec.nodes[id].role != SwitchRole::NvSwitch;
      MmuPfcConfig cfg;
      cfg.enabled = pfc.enabled && ethernet;
      cfg.lossless_mask = pfc.lossless_mask;
      cfg.dynamic = pfc.dynamic_threshold;
      cfg.alpha = pfc.alpha;
      cfg.static_xoff = pfc.static_xoff.count();
      cfg.xon_offset = pfc.xon_offset.count();
      if (cfg.enabled) {
        for (PortId p : routing_.ports_of(id)) {
          cfg.headroom.push_back(pfc.headroom_auto
                                     ? required_headroom(routing_.link_of(p), pfc.response_time)
                                     : pfc.headroom.count());
        }
      }
      auto sw = std::make_unique<Switch>(*this, id, spec.switch_params, routing_.ports_of(id),
                                         std::move(cfg));
      std::vector<uint32_t> headers;
      for (PortId p : routing_.ports_of(id)) {
        headers.push_back(static_cast<uint32_t>(routing_.link_of(p).header.count()));
      }
      sw->set_ingress_headers(std::move(headers));
      switches_[id] = sw.get();
      nodes_.push_back(std::move(sw));
    } else {
      auto nic = std::make_unique<Nic>(*this, id);
      nics_[id] = nic.get();
      nodes_.push_back(std::move(nic));
    }
  }
  const auto& ports = routing_.ports();
  ports_.reserve(ports.size());
  for (PortId p = 0; p < ports.size(); ++p) {
    const PortInfo& info = ports[p];
    ports_.push_back(std::make_unique<EgressPort>(*this, routing_.link_of(p),
                                                  spec.switch_params.priorities,
                                                  nodes_[info.peer].get(), info.peer_local_index,
                                                  switches_[info.owner], nics_[info.owner]));
    const EcnParams& ecn = spec.ecn;
    if (ecn.enabled && switches_[info.owner] != nullptr &&
        spec.nodes[info.owner].role != SwitchRole::NvSwitch) {
      const auto [kmin, kmax] = ecn_thresholds(ecn, routing_.link_of(p).bandwidth);
      ports_.back()->enable_ecn(EcnMarker(kmin, kmax, ecn.pmax), ecn.mark_on_enqueue,
                                sim.rng(RngStreamKind::Ecn, p));
    }
    if (pfc.enabled && pfc.watchdog && switches_[info.owner] != nullptr &&
        spec.nodes[info.owner].role != SwitchRole::NvSwitch) {
      ports_.back()->enable_watchdog(pfc.watchdog_time, pfc.watchdog_drop);
    }
  }
  if (pfc.enabled && pfc.deadlock_detection_time > Time::zero()) {
    deadlock_ = std::make_unique<DeadlockDetector>(*this, pfc.deadlock_detection_time);
  }
  setup_impairments();
  check_configuration();
}

int64_t Network::required_headroom(const LinkParams& link, Time response_time) {
  // references.md section 6: MTU_R + MTU_S + cable both ways + sender response, plus the PAUSE frame
  // itself (it waits behind MTU_R, then takes its own wire time).
  const int64_t mtu_wire = link.mtu.count() + link.header.count();
  const double bytes_per_ps = static_cast<double>(link.bandwidth.bits_per_second()) / 8e12;
  const auto cable = static_cast<int64_t>(
      std::ceil(2.0 * bytes_per_ps * static_cast<double>(link.delay.picoseconds())));
  const auto response = static_cast<int64_t>(
      std::ceil(bytes_per_ps * static_cast<double>(response_time.picoseconds())));
  return 2 * mtu_wire + cable + response + kPauseFrameWireBytes;
}

std::pair<int64_t, int64_t> Network::ecn_thresholds(const EcnParams& ecn, Bandwidth bandwidth) {
  // HPCC's ns-3 defaults: Kmin 100 KB and Kmax 400 KB per 25 Gb/s of port speed.
  const double scale = static_cast<double>(bandwidth.bits_per_second()) / 25e9;
  const int64_t kmin =
      ecn.kmin_auto ? static_cast<int64_t>(std::llround(100'000.0 * scale)) : ecn.kmin.count();
  const int64_t kmax =
      ecn.kmax_auto ? static_cast<int64_t>(std::llround(400'000.0 * scale)) : ecn.kmax.count();
  return {kmin, kmax > kmin ? kmax : kmin + 1};
}

void Network::check_configuration() {
  const PfcParams& pfc = spec_.pfc;
  const EcnParams& ecn = spec_.ecn;
  if (!pfc.enabled) return;
  // One check per (switch-facing) link class; messages name the class.
  std::vector<uint32_t> seen_classes;
  int64_t min_shared = INT64_MAX;
  for (const Switch* sw : switches_) {
    if (sw == nullptr || spec_.nodes[sw->id()].role == SwitchRole::NvSwitch) continue;
    min_shared = std::min(min_shared, sw->mmu().shared_capacity().count());
    for (PortId p : routing_.ports_of(sw->id())) {
      const uint32_t cls = routing_.ports()[p].link_class;
      if (std::find(seen_classes.begin(), seen_classes.end(), cls) == seen_classes.end()) {
        seen_classes.push_back(cls);
      }
    }
  }
  if (min_shared == INT64_MAX) return;
  if (min_shared <= 0) {
    warnings_.push_back(
        "fabric.switch.pfc: the lossless headroom reserved on every port takes the whole switch "
        "buffer; nothing is left to share");
  }
  const int64_t xoff_max = pfc.dynamic_threshold
                               ? static_cast<int64_t>(pfc.alpha * static_cast<double>(min_shared))
                               : pfc.static_xoff.count();
  for (uint32_t cls : seen_classes) {
    const LinkParams& link = spec_.link_classes[cls];
    if (!pfc.headroom_auto) {
      const int64_t need = required_headroom(link, Time::zero());
      if (pfc.headroom.count() < need) {
        std::ostringstream o;
        o << "fabric.switch.pfc.headroom: " << pfc.headroom.count() << " B is below the "
          << need << " B that MTU (both ends) and cable delay require on " << link.name
          << " links; lossless packets will be dropped (lossless_headroom_exceeded)";
        warnings_.push_back(o.str());
      }
    }
    if (ecn.enabled) {
      const auto [kmin, kmax] = ecn_thresholds(ecn, link.bandwidth);
      if (kmin >= xoff_max || kmax > xoff_max) {
        std::ostringstream o;
        o << "fabric.switch.ecn: on " << link.name << " links Kmin " << kmin << " B / Kmax " << kmax
          << " B sit above the PFC XOFF threshold (" << (pfc.dynamic_threshold ? "at most " : "")
          << xoff_max << " B); PFC will pause before ECN can slow the senders";
        warnings_.push_back(o.str());
      }
    }
  }
}

const Switch* Network::switch_at(NodeId id) const { return switches_[id]; }

FlowId Network::start_flow(NodeId src, NodeId dst, Bytes size, uint8_t priority,
                           uint32_t queue_pair) {
  SIM_CHECK(size.count() > 0, "a flow must carry at least one byte");
  SIM_CHECK(nics_[src] != nullptr && nics_[dst] != nullptr, "flows run between NICs");
  SIM_CHECK(priority < spec_.switch_params.priorities, "flow priority above the class count");
  const auto id = static_cast<FlowId>(flows_.size());
  FlowRecord f;
  f.src = src;
  f.dst = dst;
  f.size_bytes = size.count();
  f.start = now();
  f.priority = priority;
  f.route_begin = static_cast<uint32_t>(route_arena_.size());
  const uint64_t hash = routing_.flow_hash(src, dst, queue_pair);
  const NetworkSpec::RouteOverride* override_route = nullptr;
  for (const auto& o : spec_.route_overrides) {
    if (o.src == src && o.dst == dst) override_route = &o;
  }
  const bool routed = override_route != nullptr
                          ? routing_.route_via(src, dst, override_route->via, hash, route_arena_)
                          : routing_.route(src, dst, hash, route_arena_);
  SIM_CHECK(routed, "no route between the flow's NICs");
  f.route_hops = static_cast<uint16_t>(route_arena_.size() - f.route_begin);
  f.mtu_bytes = static_cast<uint32_t>(
      routing_.path_mtu(route_arena_.data() + f.route_begin, f.route_hops).count());
  flows_.push_back(f);
  if (dcqcn_on_) {
    DcqcnFlowState& d = dcqcn_.emplace_back();
    d.rc = DcqcnRateController(spec_.nic.dcqcn, ports_[route_arena_[f.route_begin]]->bandwidth());
    d.next_send_ps = now().picoseconds();
  }
  transport_start(id);
  ++counters_.flows_started;
  nics_[src]->add_flow(id);
  ports_[route_arena_[f.route_begin]]->kick();
  return id;
}

void Network::drop(PacketRef packet, DropReason reason) {
  const Packet& p = pool_[packet];
  // CNPs carry no flow bytes: conservation (injected = delivered + dropped) is about data.
  if (p.kind == PacketKind::Data) counters_.bytes_dropped += p.payload_bytes;
  ++counters_.packets_dropped[static_cast<std::size_t>(reason)];
  pool_.release(packet);
}

void Network::deliver(PacketRef packet) {
  const Packet& p = pool_[packet];
  FlowRecord& f = flows_[p.flow];
  f.delivered_bytes += p.payload_bytes;
  counters_.bytes_delivered += p.payload_bytes;
  const FlowId id = p.flow;
  pool_.release(packet);
  SIM_CHECK(f.delivered_bytes <= f.size_bytes, "a flow received more bytes than it sent");
  if (f.delivered_bytes == f.size_bytes) {
    f.done = true;
    f.finish = now();
    ++counters_.flows_completed;
    if (completion_ != nullptr) completion_->on_flow_complete(id, f);
  }
}

// ---------------------------------------------------------------- DCQCN

void Network::dcqcn_on_sent(FlowId id, uint32_t wire_bytes, uint32_t payload) {
  DcqcnFlowState& d = dcqcn_[id];
  if (flows_[id].sent_bytes == flows_[id].size_bytes) d.rate_timer.cancel_pending();
  d.last_send_ps = now().picoseconds();
  d.last_wire_bytes = wire_bytes;
  // The byte counter runs only while the flow is rate-limited; its increases apply to this gap.
  if (d.rc.limited()) d.rc.on_bytes_sent(payload);
  if (!d.rc.limited()) {
    // At line rate the port's serialization is the pacing.
    d.next_send_ps = now().picoseconds();
    return;
  }
  const double ps = static_cast<double>(wire_bytes) * 8e12 / d.rc.rate_bps();
  d.next_send_ps = now().picoseconds() + static_cast<int64_t>(std::ceil(ps));
}

void Network::dcqcn_notify(FlowId id) {
  DcqcnFlowState& d = dcqcn_[id];
  const int64_t t = now().picoseconds();
  if (d.last_cnp_ps != INT64_MIN && t - d.last_cnp_ps < spec_.nic.dcqcn.cnp_interval.picoseconds()) {
    return;
  }
  d.last_cnp_ps = t;
  const FlowRecord& f = flows_[id];
  if (d.cnp_route_begin == UINT32_MAX) {
    // The reverse of the data path: port 2i and 2i+1 are the two directions of link i.
    d.cnp_route_begin = static_cast<uint32_t>(route_arena_.size());
    for (uint32_t h = f.route_hops; h-- > 0;) {
      route_arena_.push_back(route_arena_[f.route_begin + h] ^ 1U);
    }
  }
  const PortId first = route_arena_[d.cnp_route_begin];
  // The highest class, ahead of data (ConnectX uses a dedicated CNP priority).
  const PacketRef ref = new_packet(id, d.cnp_route_begin, control_frame_payload(*ports_[first]),
                                   static_cast<uint8_t>(spec_.switch_params.priorities - 1),
                                   PacketKind::Cnp, false, false);
  ++counters_.cnps;
  ports_[first]->enqueue(ref);
}

void Network::dcqcn_on_cnp(FlowId id) {
  const FlowRecord& f = flows_[id];
  if (f.sent_bytes == f.size_bytes) return;  // nothing left to slow down
  DcqcnFlowState& d = dcqcn_[id];
  if (!d.rc.on_cnp(now())) return;
  ++counters_.rate_cuts;
  dcqcn_repace(id);
  // A cut restarts the rate-increase timer.
  d.rate_timer.cancel_pending();
  queue().schedule(now() + spec_.nic.dcqcn.rate_period, nics_[f.src], Nic::kRateTimer, id,
                   &d.rate_timer);
}

void Network::dcqcn_rate_timer(FlowId id) {
  DcqcnFlowState& d = dcqcn_[id];
  const FlowRecord& f = flows_[id];
  if (f.sent_bytes == f.size_bytes) return;
  d.rc.on_rate_timer();
  dcqcn_repace(id);
  if (!d.rc.limited()) return;  // back at line rate: no timer until the next cut
  queue().schedule(now() + spec_.nic.dcqcn.rate_period, nics_[f.src], Nic::kRateTimer, id,
                   &d.rate_timer);
}

void Network::dcqcn_repace(FlowId id) {
  DcqcnFlowState& d = dcqcn_[id];
  if (d.last_send_ps == INT64_MIN) return;
  const double gap = d.rc.limited()
                         ? std::ceil(static_cast<double>(d.last_wire_bytes) * 8e12 / d.rc.rate_bps())
                         : 0.0;
  const int64_t next = d.last_send_ps + static_cast<int64_t>(gap);
  const bool earlier = next < d.next_send_ps;
  d.next_send_ps = next;
  const FlowRecord& f = flows_[id];
  if (earlier && f.sent_bytes < f.size_bytes) {
    nics_[f.src]->pacing_moved(std::max(next, now().picoseconds()));
  }
}

}  // namespace syncsim::net
