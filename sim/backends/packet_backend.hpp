#pragma once
#include <utility>
#include <vector>

#include "sim/backends/transfer_backend.hpp"
#include "sim/net/network.hpp"

namespace syncsim {

// Whether a packet network on `spec` can take transfers set up ahead when run as partitions
// (NetworkSpec::Execution::reaction): GPUDirect transfers on one plane over RoCE (host staging and
// plane shares start their parts themselves; TCP is not set up ahead).
inline bool packet_starts_ahead_possible(const net::NetworkSpec& spec) {
  return spec.planes <= 1 && spec.transport.kind == net::TransportKind::Roce;
}

// Every packet through NICs, ports, links and switches (sim/net).
class PacketBackend final : public TransferBackend, private net::FlowCompletionHandler {
 public:
  PacketBackend(Simulation& sim, const net::NetworkSpec& spec);
  Fidelity fidelity() const override { return Fidelity::Packet; }
  // A partitioned network that allows it (NetworkSpec::Execution::reaction), for GPUDirect
  // transfers on one plane (host staging and plane shares start their parts themselves).
  bool starts_ahead() const override {
    return network_.starts_ahead() && packet_starts_ahead_possible(spec());
  }
  net::NetworkCounters counters() const override { return network_.counters(); }
  BackendExecution execution() const override {
    return BackendExecution{network_.partitions() == 0 ? 1U : network_.partitions(),
                            network_.partition_windows(),
                            network_.partition_events(),
                            network_.partition_threads(),
                            network_.partition_refusal(),
                            network_.partition_window(),
                            network_.partition_thread_loads(),
                            network_.partition_threaded_windows()};
  }
  void observe(BackendObserver& observer) const override { observer.on_packet_network(network_); }
  const net::Network& network() const { return network_; }
  bool schedule_faults(const std::vector<net::NetFault>& faults,
                       const net::FaultParams& params) override {
    network_.schedule_faults(faults, params);
    return true;
  }

 private:
  void begin(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) override;
  void on_flow_complete(net::FlowId flow, const net::FlowRecord& record) override;
  bool can_drop_records() const override { return true; }  // the network keeps its flows' records

  net::Network network_;
  std::vector<TransferId> transfer_of_flow_;
};

}  // namespace syncsim
