#include "sim/net/nic.hpp"

#include <algorithm>

#include "sim/core/check.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/in_switch_engine.hpp"
#include "sim/net/load_balancing.hpp"
#include "sim/net/nic_pacing.hpp"
#include "sim/net/reliable_transport.hpp"
#include "sim/net/send_queue.hpp"

namespace syncsim::net {

Nic::Nic(const NetContext& ctx, NodeId id, const NicParams& params, uint32_t priorities,
         uint8_t lossless_mask, NicPacing* pacing, ReliableTransport* transport)
    : ctx_(ctx),
      id_(id),
      port_(ctx.routing.ports_of(id).empty() ? UINT32_MAX : ctx.routing.ports_of(id)[0]),
      params_(params),
      priorities_(priorities),
      lossless_mask_(lossless_mask),
      pacing_(pacing),
      transport_(transport) {}

void Nic::add_flow(FlowId flow) { active_.push_back(flow); }

void Nic::start_at(Time at, FlowId flow, uint32_t queue) {
  ctx_.queue.schedule(at, this, kStart, (uint64_t{queue} << 32) | flow);
}

void Nic::start_flow(uint64_t arg) {
  const auto id = static_cast<FlowId>(arg & 0xffff'ffffU);
  const auto queue = static_cast<uint32_t>(arg >> 32);
  bool head = true;
  if (queue != kNoSendQueue) {
    const FlowRecord& f = ctx_.flows[id];
    const int64_t mtu = f.mtu_bytes;
    head = ctx_.send_queues->post(queue, id, static_cast<uint64_t>((f.size_bytes + mtu - 1) / mtu),
                                  ctx_.flows);
  }
  if (!head) {
    // Behind an earlier message of its queue pair: listed when that one sends its last new packet.
    if (ctx_.flows[id].transport_state != kNoTransportState) transport_->unlisted(id);
    return;
  }
  add_flow(id);
  ctx_.egress(port_).kick();
}

void Nic::account_injected(FlowId id, const Packet& p) {
  if (pacing_ != nullptr) {
    const uint32_t wire =
        p.payload_bytes + static_cast<uint32_t>(ctx_.egress(port_).header().count());
    pacing_->on_sent(id, wire, p.payload_bytes);
  }
  NetworkCounters& c = ctx_.counters;
  ++c.packets_injected;
  c.bytes_injected += p.payload_bytes;
}

bool Nic::held(FlowId id, uint8_t paused_mask) const {
  const FlowRecord& f = ctx_.flows[id];
  if (((static_cast<uint32_t>(paused_mask) >> f.priority) & 1U) != 0) return true;
  return in_switch_engine_ && !in_switch_engine_may_write(ctx_, f);
}

PacketRef Nic::pull(uint8_t paused_mask) {
  if (active_.empty()) return kNoPacket;
  // An in-switch engine keeps its flows least recently served first (served_engine_flow).
  if (next_ >= active_.size() || in_switch_engine_) next_ = 0;
  if (pacing_ != nullptr) {
    // Skip paused flows and flows whose pacing does not allow a packet yet, keeping the round-robin
    // position; if only pacing holds flows back, wake up at the earliest next_send_at.
    const int64_t now = ctx_.now().picoseconds();
    int64_t earliest = INT64_MAX;
    std::size_t tried = 0;
    for (;;) {
      const FlowId id = active_[next_];
      if (!held(id, paused_mask)) {
        const int64_t at = pacing_->next_send_ps(id);
        if (at <= now) break;
        earliest = std::min(earliest, at);
      }
      if (++tried == active_.size()) {
        if (earliest != INT64_MAX) wake_at(earliest);
        return kNoPacket;
      }
      if (++next_ == active_.size()) next_ = 0;
    }
  } else if (paused_mask != 0 || in_switch_engine_) {
    // Skip held flows, keeping the round-robin position.
    std::size_t tried = 0;
    while (held(active_[next_], paused_mask)) {
      if (++tried == active_.size()) return kNoPacket;
      if (++next_ == active_.size()) next_ = 0;
    }
  }
  const FlowId id = active_[next_];
  FlowRecord& f = ctx_.flows[id];
  if (f.transport_state != kNoTransportState) return pull_reliable(id);
  const int64_t payload = std::min<int64_t>(f.mtu_bytes, f.size_bytes - f.sent_bytes);
  const PacketRef ref = ctx_.new_packet(id, f.route_begin, static_cast<uint32_t>(payload),
                                        f.priority, PacketKind::Data, false);
  if (ctx_.balancer != nullptr) {
    ctx_.packet(ref).entropy = ctx_.balancer->next_entropy(f, ctx_.now());
  }
  f.sent_bytes += payload;
  account_injected(id, ctx_.packet(ref));
  const bool last = f.sent_bytes == f.size_bytes;
  if (in_switch_engine_) {
    FlowId keep = id;
    if (last) keep = f.send_queue != kNoSendQueue ? successor(id) : kNoFlow;
    served_engine_flow(keep);
  } else if (last) {
    retire_current(f.send_queue != kNoSendQueue ? successor(id) : kNoFlow);
  } else {
    ++next_;
  }
  return ref;
}

PacketRef Nic::pull_reliable(FlowId id) {
  const PacketRef ref = transport_->next_packet(id);
  if (ctx_.balancer != nullptr)
    ctx_.packet(ref).entropy = ctx_.balancer->next_entropy(ctx_.flows[id], ctx_.now());
  const Packet& p = ctx_.packet(ref);
  account_injected(id, p);
  const bool last_new = transport_->on_sent(id, p.seq, p.payload_bytes);
  const FlowId next =
      last_new && ctx_.flows[id].send_queue != kNoSendQueue ? successor(id) : kNoFlow;
  if (!transport_->can_send(id)) {
    transport_->unlisted(id);
    retire_current(next);
  } else {
    // Still listed (a TCP retransmission is due): the next message takes a slot of its own.
    ++next_;
    if (next != kNoFlow) active_.push_back(next);
  }
  return ref;
}

FlowId Nic::successor(FlowId id) {
  const FlowId next = ctx_.send_queues->advance(id, ctx_.flows);
  if (next == kNoFlow) return kNoFlow;
  // A message without a route is listed when one comes back (Network::reroute_flows).
  if (ctx_.flows[next].transport_state != kNoTransportState) {
    return transport_->admit(next) ? next : kNoFlow;
  }
  return ctx_.flows[next].parked ? kNoFlow : next;
}

void Nic::served_engine_flow(FlowId keep) {
  // active_[next_] just sent: it (or its queue pair's next message) moves to the back, so the list
  // stays least recently served first and pull() takes the first flow whose port has room.
  active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(next_));
  if (keep != kNoFlow) active_.push_back(keep);
}

void Nic::retire_current(FlowId next) {
  if (next != kNoFlow) {
    active_[next_++] = next;
    return;
  }
  // Erasing keeps the round-robin order of the remaining flows; next_ now names the successor.
  active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(next_));
}

void Nic::deactivate(FlowId flow) {
  const auto it = std::find(active_.begin(), active_.end(), flow);
  if (it == active_.end()) return;
  const auto index = static_cast<std::size_t>(it - active_.begin());
  active_.erase(it);
  if (index < next_) --next_;
}

void Nic::reactivate(FlowId flow) {
  active_.push_back(flow);
  ctx_.egress(port_).kick();
}

void Nic::receive(PacketRef packet, uint32_t in_port) {
  const Packet& p = ctx_.packet(packet);
  // InfiniBand: the HCA consumes at line rate, so the credits go back on arrival; data waiting in
  // a receive buffer (rx_pfc) returns them as it drains.
  if (ib_ && !(params_.rx_pfc && p.kind == PacketKind::Data)) return_ib_credits(p);
  if (p.kind == PacketKind::Pause) {
    ctx_.egress(ctx_.routing.ports_of(id_)[in_port])
        .set_paused(p.priority, p.pfc_xoff, p.pause_quanta);
    ctx_.pool.release(packet);
    return;
  }
  if (p.kind == PacketKind::Cnp) {
    // DCQCN reaction point: the CNP names the flow it throttles.
    const FlowId flow = p.flow;
    ctx_.pool.release(packet);
    pacing_->on_cnp(flow);
    return;
  }
  if (p.kind == PacketKind::Ack || p.kind == PacketKind::Nak) {
    transport_->on_ack(ctx_, packet);
    return;
  }
  SIM_CHECK(p.kind == PacketKind::Data, "unexpected control packet at a NIC");
  if (params_.rx_pfc) {
    rx_accept(packet);
    return;
  }
  consume(packet);
}

void Nic::consume(PacketRef packet) {
  const Packet& p = ctx_.packet(packet);
  if (ctx_.flows[p.flow].transport_state != kNoTransportState) {
    transport_->on_data(ctx_, packet);
    return;
  }
  // DCQCN notification point: an ECN-marked data packet makes the destination send a CNP to the
  // source queue pair, at most once per cnp_interval.
  if (p.ecn_ce && pacing_ != nullptr) pacing_->notify(p.flow);
  ctx_.deliver(packet);
}

void Nic::rx_accept(PacketRef packet) {
  const EgressPort& port = ctx_.egress(port_);
  const int64_t wire = ctx_.packet(packet).payload_bytes + port.header().count();
  if (rx_bytes_ + wire > params_.rx_buffer.count()) {
    if (PriorityCounters* c = ctx_.egress(port_).counters()) {
      ++c[ctx_.packet(packet).priority].drops[static_cast<std::size_t>(DropReason::NicRxOverflow)];
    }
    ctx_.drop(packet, DropReason::NicRxOverflow);
    return;
  }
  rx_.push(packet);
  rx_bytes_ += wire;
  NetworkCounters& c = ctx_.counters;
  if (rx_bytes_ > c.max_nic_rx_bytes) c.max_nic_rx_bytes = rx_bytes_;
  // InfiniBand holds the sender back by credits instead of PAUSE.
  if (!ib_ && !rx_paused_ && rx_bytes_ > params_.rx_xoff.count()) rx_pfc(true);
  if (!rx_draining_) {
    rx_draining_ = true;
    ctx_.queue.schedule(ctx_.now() + params_.rx_drain_rate.tx_time(Bytes{wire}), this, kRxDrain);
  }
}

void Nic::rx_drain() {
  const EgressPort& port = ctx_.egress(port_);
  const PacketRef done = rx_.pop();
  rx_bytes_ -= ctx_.packet(done).payload_bytes + port.header().count();
  if (ib_) return_ib_credits(ctx_.packet(done));
  consume(done);
  if (rx_paused_ && rx_bytes_ <= params_.rx_xon.count()) rx_pfc(false);
  if (rx_.empty()) {
    rx_draining_ = false;
    return;
  }
  const int64_t wire = ctx_.packet(rx_.front()).payload_bytes + port.header().count();
  ctx_.queue.schedule(ctx_.now() + params_.rx_drain_rate.tx_time(Bytes{wire}), this, kRxDrain);
}

void Nic::rx_pfc(bool xoff) {
  rx_paused_ = xoff;
  EgressPort& out = ctx_.egress(port_);
  const uint32_t payload = control_frame_payload(out);
  // One frame per lossless priority (a real PFC frame carries a per-class vector; the wire cost of
  // the extra frames is negligible). A NIC's PAUSE holds until its RESUME (no quanta).
  for (uint32_t prio = 0; prio < priorities_; ++prio) {
    if (((static_cast<uint32_t>(lossless_mask_) >> prio) & 1U) == 0) continue;
    const PacketRef ref = ctx_.new_pause(payload, static_cast<uint8_t>(prio), xoff, 0);
    if (xoff) ++ctx_.counters.nic_pause_frames;
    out.send_control(ref);
  }
}

void Nic::wake_at(int64_t at_ps) {
  // An earlier (or equal) pending wake-up covers this one: pull() reschedules when it runs.
  if (wake_at_ps_ <= at_ps) return;
  wake_token_.cancel_pending();
  wake_at_ps_ = at_ps;
  ctx_.queue.schedule(Time::ps(at_ps), this, kWake, 0, &wake_token_);
}

void Nic::on_event(uint32_t kind, uint64_t arg) {
  if (kind == kRateTimer) {
    pacing_->on_rate_timer(static_cast<uint32_t>(arg));  // the queue pair's index
    return;
  }
  if (kind == kRetransmitTimer) {
    transport_->on_timer(static_cast<FlowId>(arg));
    return;
  }
  if (kind == kRxDrain) {
    rx_drain();
    return;
  }
  if (kind == kStart) {
    start_flow(arg);
    return;
  }
  wake_at_ps_ = INT64_MAX;
  ctx_.egress(port_).kick();
}

}  // namespace syncsim::net
