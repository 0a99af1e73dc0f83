#include "sim/net/network.hpp"

#include <algorithm>

#include "sim/core/check.hpp"

namespace syncsim::net {

// ---------------------------------------------------------------- Link

void Link::transmit(PacketRef packet) {
  ++net_.counters_mut().packet_hops;
  const Time arrival = net_.now() + delay_;
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
                       uint32_t peer_in_port, SharedBufferMmu* mmu, Nic* source)
    : net_(net),
      bandwidth_(link.bandwidth),
      header_(link.header),
      link_(net, link.delay, peer, peer_in_port),
      priorities_(priorities),
      mmu_(mmu),
      source_(source) {
  SIM_CHECK(priorities_ >= 1 && priorities_ <= kMaxPriorities, "priority count out of range");
  SIM_CHECK(bandwidth_.bits_per_second() > 0, "a link needs a positive bandwidth");
}

void EgressPort::enqueue(PacketRef packet) {
  const Packet& p = net_.packet(packet);
  SIM_CHECK(p.priority < priorities_, "packet priority above the port's class count");
  queued_bytes_ += p.payload_bytes + header_.count();
  net_.note_queue_depth(queued_bytes_);
  queues_[p.priority].push(packet);
  if (in_service_ == kNoPacket) start_next();
}

void EgressPort::start_next() {
  PacketRef next = kNoPacket;
  for (uint32_t prio = priorities_; prio-- > 0;) {
    if (!queues_[prio].empty()) {
      next = queues_[prio].pop();
      break;
    }
  }
  if (next == kNoPacket) {
    if (source_ == nullptr) return;
    next = source_->pull();
    if (next == kNoPacket) return;
    queued_bytes_ += net_.packet(next).payload_bytes + header_.count();
  }
  in_service_ = next;
  const uint32_t wire = net_.packet(next).payload_bytes + static_cast<uint32_t>(header_.count());
  net_.queue().schedule(net_.now() + tx_time(wire), this, 0);
}

void EgressPort::on_event(uint32_t /*kind*/, uint64_t /*arg*/) {
  const PacketRef done = in_service_;
  in_service_ = kNoPacket;
  const Packet& p = net_.packet(done);
  queued_bytes_ -= p.payload_bytes + header_.count();
  SIM_CHECK(queued_bytes_ >= 0, "egress queue byte count went negative");
  if (mmu_ != nullptr) mmu_->release(p.ingress_port, p.priority, Bytes{p.buffered_bytes});
  link_.transmit(done);
  start_next();
}

// ---------------------------------------------------------------- Switch

Switch::Switch(Network& net, NodeId id, const SwitchParams& params, uint32_t ports)
    : net_(net), id_(id), mmu_(params.buffer, ports, params.priorities) {}

void Switch::receive(PacketRef packet, uint32_t in_port) {
  Packet& p = net_.packet(packet);
  const uint32_t wire_in = p.payload_bytes + ingress_header_[in_port];
  if (mmu_.admit(in_port, p.priority, Bytes{wire_in}) != Admission::Admitted) {
    net_.drop(packet, DropReason::BufferFull);
    return;
  }
  p.buffered_bytes = wire_in;
  p.ingress_port = static_cast<uint16_t>(in_port);
  ++p.hop;
  net_.egress(net_.route_hop(p)).enqueue(packet);
}

// ---------------------------------------------------------------- Nic

void Nic::add_flow(FlowId flow) { active_.push_back(flow); }

PacketRef Nic::pull() {
  if (active_.empty()) return kNoPacket;
  if (next_ >= active_.size()) next_ = 0;
  const FlowId id = active_[next_];
  FlowRecord& f = net_.flow_mut(id);
  const int64_t payload = std::min<int64_t>(f.mtu_bytes, f.size_bytes - f.sent_bytes);
  const PacketRef ref = net_.pool().allocate();
  Packet& p = net_.packet(ref);
  p.flow = id;
  p.route_begin = f.route_begin;
  p.payload_bytes = static_cast<uint32_t>(payload);
  p.buffered_bytes = 0;
  p.hop = 0;
  p.ingress_port = 0;
  p.priority = f.priority;
  p.kind = PacketKind::Data;
  p.ecn_ce = false;
  f.sent_bytes += payload;
  NetworkCounters& c = net_.counters_mut();
  ++c.packets_injected;
  c.bytes_injected += payload;
  if (f.sent_bytes == f.size_bytes) {
    // Erasing keeps the round-robin order of the remaining flows; next_ now names the successor.
    active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(next_));
  } else {
    ++next_;
  }
  return ref;
}

void Nic::receive(PacketRef packet, uint32_t /*in_port*/) {
  SIM_CHECK(net_.packet(packet).kind == PacketKind::Data, "unexpected control packet at a NIC");
  net_.deliver(packet);
}

// ---------------------------------------------------------------- Network

Network::Network(Simulation& sim, const NetworkSpec& spec)
    : sim_(sim), spec_(spec), routing_(spec) {
  const std::size_t n = spec.nodes.size();
  nodes_.reserve(n);
  switches_.assign(n, nullptr);
  nics_.assign(n, nullptr);
  for (NodeId id = 0; id < n; ++id) {
    if (spec.nodes[id].kind == NodeKind::Switch) {
      auto sw = std::make_unique<Switch>(*this, id, spec.switch_params,
                                         static_cast<uint32_t>(routing_.ports_of(id).size()));
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
    SharedBufferMmu* mmu = switches_[info.owner] ? &switches_[info.owner]->mmu() : nullptr;
    ports_.push_back(std::make_unique<EgressPort>(*this, routing_.link_of(p),
                                                  spec.switch_params.priorities,
                                                  nodes_[info.peer].get(), info.peer_local_index,
                                                  mmu, nics_[info.owner]));
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
  const bool routed =
      routing_.route(src, dst, routing_.flow_hash(src, dst, queue_pair), route_arena_);
  SIM_CHECK(routed, "no route between the flow's NICs");
  f.route_hops = static_cast<uint16_t>(route_arena_.size() - f.route_begin);
  f.mtu_bytes = static_cast<uint32_t>(
      routing_.path_mtu(route_arena_.data() + f.route_begin, f.route_hops).count());
  flows_.push_back(f);
  ++counters_.flows_started;
  nics_[src]->add_flow(id);
  ports_[route_arena_[f.route_begin]]->kick();
  return id;
}

void Network::drop(PacketRef packet, DropReason reason) {
  const Packet& p = pool_[packet];
  counters_.bytes_dropped += p.payload_bytes;
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

}  // namespace syncsim::net
