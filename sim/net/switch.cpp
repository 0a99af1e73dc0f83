#include "sim/net/switch.hpp"

#include "sim/net/egress_port.hpp"
#include "sim/net/load_balancing.hpp"

namespace syncsim::net {

Switch::Switch(const NetContext& ctx, NodeId id, const SwitchParams& params,
               const std::vector<PortId>& ports, MmuPfcConfig pfc, uint32_t pause_quanta)
    : ctx_(ctx),
      id_(id),
      mmu_(params.buffer, static_cast<uint32_t>(ports.size()), params.priorities, std::move(pfc)),
      ports_(ports),
      pause_quanta_(pause_quanta) {}

void Switch::settle_releases() {
  if (pending_releases_ == 0) return;
  for (const PortId port : ports_) ctx_.egress(port).settle_handed_over();
}

void Switch::pin_releases(uint32_t in_port, uint8_t priority) {
  if (pending_releases_ == 0) return;
  for (const PortId port : ports_) ctx_.egress(port).pin_release(in_port, priority);
}

Bytes Switch::bytes_leaving_now() const {
  int64_t bytes = 0;
  for (const PortId port : ports_) {
    bytes += ctx_.egress(port).leaving_bytes_at(ctx_.now().picoseconds());
  }
  return Bytes{bytes};
}

Bytes Switch::due_release_bytes(Time at) const {
  int64_t bytes = 0;
  if (pending_releases_ != 0) {
    for (const PortId port : ports_) bytes += ctx_.egress(port).due_release_bytes(at);
  }
  return Bytes{bytes};
}

PortId Switch::next_hop(const Packet& p) const {
  // ECMP (no balancer) and control packets: the precomputed route; data packets under per-packet
  // load balancing: chosen here, among the candidates towards the destination.
  if (ctx_.balancer == nullptr || p.kind != PacketKind::Data) return ctx_.route_hop(p);
  return ctx_.balancer->next_hop(p, id_);
}

void Switch::receive(PacketRef packet, uint32_t in_port) {
  Packet& p = ctx_.packet(packet);
  if (p.kind == PacketKind::Pause) {
    ctx_.egress(ports_[in_port]).set_paused(p.priority, p.pfc_xoff, p.pause_quanta);
    ctx_.pool.release(packet);
    return;
  }
  // Under ECMP the route names the port the packet leaves by: its lines load while the buffer
  // admits the packet (a fabric of thousands of ports misses them).
  if (ctx_.balancer == nullptr) {
    ctx_.egress(ctx_.routes[p.route_begin + p.hop + 1u]).prefetch_for_enqueue(p.priority);
  }
  const uint32_t wire_in = p.payload_bytes + ingress_header_[in_port];
  AdmitResult r;
  if (mmu_.lossless(p.priority)) {
    r = mmu_.admit(in_port, p.priority, Bytes{wire_in}, Bytes{0}, pending_releases_ != 0);
    if (r.admission == Admission::Deferred) {
      settle_releases();
      r = mmu_.admit(in_port, p.priority, Bytes{wire_in});
    }
  } else {
    Bytes leaving{0};
    if (mmu_.lossy_reads_pending_releases(wire_in)) {
      settle_releases();
      leaving = bytes_leaving_now();
    }
    r = mmu_.admit(in_port, p.priority, Bytes{wire_in}, leaving);
  }
  if (r.pfc == PfcSignal::Pause) {
    pin_releases(in_port, p.priority);
    send_pfc(in_port, p.priority, true);
  }
  if (r.admission != Admission::Admitted) {
    const DropReason reason = r.admission == Admission::DroppedHeadroomExceeded
                                  ? DropReason::LosslessHeadroomExceeded
                                  : DropReason::BufferFull;
    // An ingress discard, counted on the interface it arrived at (this switch's port on that link).
    if (PriorityCounters* c = ctx_.egress(ports_[in_port]).counters()) {
      ++c[ctx_.packet(packet).priority].drops[static_cast<std::size_t>(reason)];
    }
    // The buffer never took it: an IB receiver that discards a packet frees its credits at once.
    if (ib_) return_ib_credits(in_port, ctx_.packet(packet).priority, wire_in);
    ctx_.drop(packet, reason);
    return;
  }
  // send_pfc() allocates the PAUSE frame and may grow the packet pool: `p` may dangle by now.
  Packet& admitted = ctx_.packet(packet);
  admitted.buffered_bytes = wire_in;
  admitted.ingress_port = static_cast<uint16_t>(in_port);
  ++admitted.hop;
  ctx_.egress(next_hop(admitted)).enqueue(packet);
}

}  // namespace syncsim::net
