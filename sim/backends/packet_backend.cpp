#include "sim/backends/packet_backend.hpp"

#include <span>

namespace syncsim {

PacketBackend::PacketBackend(Simulation& sim, const net::NetworkSpec& spec)
    : TransferBackend(sim, spec), network_(sim, spec) {
  network_.set_completion_handler(this);
}

void PacketBackend::begin(TransferId id, net::NodeId src, net::NodeId dst,
                          const TransferRequest& r) {
  // The queue-pair number seeds the flow's ECMP hash; a persistent QP also keeps its DCQCN state.
  const QueuePair qp = queue_pair(id, src, dst, r);
  const net::FlowId flow =
      network_.start_flow(src, dst, r.size, r.priority, qp.number, qp.persistent, r.start_at);
  const std::span<const net::PortId> route = network_.route_span(flow);
  add_route_bytes(route.data(), route.size(), r.size);
  if (transfer_of_flow_.size() <= flow) transfer_of_flow_.resize(flow + 1);
  transfer_of_flow_[flow] = id;
}

void PacketBackend::on_flow_complete(net::FlowId flow, const net::FlowRecord& /*record*/) {
  complete(transfer_of_flow_[flow]);
}

}  // namespace syncsim
