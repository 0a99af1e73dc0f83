#include "sim/net/net_context.hpp"

#include "sim/core/check.hpp"

namespace syncsim::net {

void NetContext::drop(PacketRef packet, DropReason reason) const {
  const Packet& p = pool[packet];
  // CNPs carry no flow bytes: conservation (injected = delivered + dropped) is about data.
  if (p.kind == PacketKind::Data) {
    counters.bytes_dropped += p.payload_bytes;
    if (reason == DropReason::LinkDown && lossless(p.priority)) {
      ++counters.lossless_packets_lost;
      counters.lossless_bytes_lost += p.payload_bytes;
    }
    if (loss_listener != nullptr) loss_listener->on_data_lost(*this, p);
  }
  ++counters.packets_dropped[static_cast<std::size_t>(reason)];
  pool.release(packet);
}

uint32_t NetContext::append_reverse_route(const FlowRecord& f) const {
  const auto begin = static_cast<uint32_t>(routes.size());
  // Ports 2i and 2i + 1 are the two directions of link i (routing.hpp).
  for (uint32_t h = f.route_hops; h-- > 0;) routes.push_back(routes[f.route_begin + h] ^ 1U);
  return begin;
}

void NetContext::post(const NetContext& to, Time at, EventTarget* target, uint32_t kind,
                      uint64_t arg) const {
  if (&to == this) {
    queue.schedule(at, target, kind, arg);
    return;
  }
  SIM_CHECK(outboxes != nullptr && at >= now() + lookahead,
            "an event posted to another partition must lie a lookahead ahead");
  RemoteOutbox& box = (*outboxes)[to.partition];
  box.post(PostedEvent{at.picoseconds(), now().picoseconds(), target, arg, kind});
}

void NetContext::deliver(PacketRef packet) const {
  const Packet& p = pool[packet];
  FlowRecord& f = flows[p.flow];
  f.delivered_bytes += p.payload_bytes;
  counters.bytes_delivered += p.payload_bytes;
  const FlowId id = p.flow;
  pool.release(packet);
  SIM_CHECK(f.delivered_bytes <= f.size_bytes, "a flow received more bytes than it sent");
  if (f.delivered_bytes == f.size_bytes) {
    f.done = true;
    f.finish = now();
    ++counters.flows_completed;
    if (deferred_completions != nullptr) {
      deferred_completions->push_back(DeferredCompletion{f.finish.picoseconds(), id});
    } else if (FlowCompletionHandler* handler = flows.completion_handler()) {
      handler->on_flow_complete(id, f);
    }
  }
}

}  // namespace syncsim::net
