#pragma once
// The packet-level network: NICs, store-and-forward switches, egress ports and links built from a
// NetworkSpec. A packet's life is a straight line (see architecture.md):
//   Nic::pull -> EgressPort (per-priority FIFOs, tx-done event) -> Link (propagation, one pending
//   event per link) -> Switch::receive (buffer admission, next hop from the route) -> EgressPort
//   ...
//   -> Nic::receive (delivery, flow completion).
// One file per component (link, egress_port, switch, nic) and per mechanism (pfc, ecn,
// dcqcn_pacing, go_back_n, tcp, link_impairment, deadlock); the Network owns them all and the
// NetContext they share. The hot path allocates nothing per packet once queues and the packet pool
// have warmed up.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sim/core/simulation.hpp"
#include "sim/net/configuration_check.hpp"
#include "sim/net/deadlock.hpp"
#include "sim/net/fabric_partition.hpp"
#include "sim/net/fault.hpp"
#include "sim/net/flow_table.hpp"
#include "sim/net/net_context.hpp"
#include "sim/net/network_counters.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/packet.hpp"
#include "sim/net/partition_windows.hpp"
#include "sim/net/routing.hpp"
#include "sim/net/send_queue.hpp"

namespace syncsim::net {

class DcqcnPacing;
struct DcqcnFlowStats;
class LoadBalancer;
class EgressPort;
class IbCongestionControl;
class FaultInjector;
class Nic;
class NicPacing;
class Node;
class ReliableTransport;
class Switch;

class Network {
 public:
  Network(Simulation& sim, const NetworkSpec& spec);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  // Starts a flow of `size` bytes from NIC `src` to NIC `dst` now. `queue_pair` feeds the ECMP
  // hash (the UDP source port). `persistent_qp`: the flow is a message on a queue pair that
  // outlives it (NCCL's connections): flows naming the same `queue_pair` share its DCQCN state,
  // and under TCP the flows naming the same (src, dst, queue_pair) share one connection's window
  // (tcp_connection.hpp); otherwise the flow gets a queue pair (and a connection) of its own.
  // The messages of one persistent queue pair (same NICs, priority and `queue_pair`) leave in the
  // order they were started, each after the previous one's last packet (send_queue.hpp).
  // `start_at` later than now (only where starts_ahead()): the flow is set up now (its record,
  // route and transport state, between windows) and starts at `start_at` inside its source NIC's
  // partition: it joins its queue pair's send queue and its NIC's round robin then.
  FlowId start_flow(NodeId src, NodeId dst, Bytes size, uint8_t priority, uint32_t queue_pair,
                    bool persistent_qp = false, Time start_at = Time::zero());
  // Whether start_flow takes flows that start later: a partitioned run whose caller starts flows
  // from completions no sooner than NetworkSpec::Execution::reaction after them (and no faults).
  // Its windows then run past the simulation's own events.
  bool starts_ahead() const { return starts_ahead_; }
  void set_completion_handler(FlowCompletionHandler* handler) {
    flows_.set_completion_handler(handler);
  }

  const FlowRecord& flow(FlowId id) const { return flows_[id]; }
  std::size_t flow_count() const { return flows_.size(); }
  // The egress ports a flow's packets leave through, source NIC first.
  std::vector<PortId> route_of(FlowId id) const {
    const FlowRecord& f = flows_[id];
    return {route_arena_.begin() + f.route_begin,
            route_arena_.begin() + f.route_begin + f.route_hops};
  }
  // The same without a copy; valid until the next flow starts (the arena may grow).
  std::span<const PortId> route_span(FlowId id) const {
    const FlowRecord& f = flows_[id];
    return {route_arena_.data() + f.route_begin, f.route_hops};
  }
  // The egress port a flow's packets leave its source NIC through.
  PortId flow_first_port(FlowId id) const { return route_arena_[flows_[id].route_begin]; }
  // A flow's current sending rate: the DCQCN rate, or its NIC's line rate without DCQCN; 0 once the
  // flow has sent everything.
  double flow_rate_bps(FlowId id) const;
  // Summed over the partitions of a windowed run.
  NetworkCounters counters() const;
  const Routing& routing() const { return routing_; }
  // The persistent queue pairs' send queues (FlowRecord::send_queue indexes them).
  const SendQueueTable& send_queues() const { return send_queues_; }
  // What DCQCN did to a flow; null when DCQCN is off.
  const DcqcnFlowStats* dcqcn_flow_stats(FlowId id) const;
  // The fabric's reliable transport (go-back-N or TCP); null when neither applies.
  const ReliableTransport* transport() const { return transport_.get(); }
  // InfiniBand congestion control; null unless it runs.
  const IbCongestionControl* ib_congestion_control() const { return ib_cc_.get(); }
  const NetworkSpec& spec() const { return spec_; }
  std::size_t packets_in_flight() const;
  std::size_t packet_pool_capacity() const;
  const Switch* switch_at(NodeId id) const { return switches_[id]; }
  const EgressPort& port(PortId id) const { return *port_ptrs_[id]; }
  std::size_t port_count() const { return ports_.size(); }
  // PFC deadlock detection (null when PFC or detection is off).
  const DeadlockReport* deadlock() const { return deadlock_ ? &deadlock_->report() : nullptr; }
  // Configuration checks run at construction (PFC/ECN thresholds, headroom), for the run's output.
  const std::vector<ConfigurationFinding>& findings() const { return findings_; }
  // Timed faults (network_faults.hpp), applied on this network's event queue at their times.
  void schedule_faults(std::vector<NetFault> faults, const FaultParams& params);

  // Windowed execution (partition_windows.hpp; NetworkSpec::execution): the partitions the fabric
  // runs as (1: one queue), why a run that asked for partitions runs as one (empty when it does not
  // or when it got them), the events run inside the partitions and the windows.
  uint32_t partitions() const { return static_cast<uint32_t>(partitions_.size()); }
  const std::string& partition_refusal() const { return partition_refusal_; }
  uint64_t partition_events() const;
  uint64_t partition_windows() const;
  unsigned partition_threads() const;
  uint64_t partition_threaded_windows() const;
  // The windows' events as more threads would share them (window_load.hpp); empty on one queue.
  std::vector<ThreadLoad> partition_thread_loads() const;
  // The longest window: the lookahead, or the reaction where that is shorter (zero on one queue).
  Time partition_window() const;
  // A time series' sample times: the partitions' windows stop after `t` (every event at or before
  // it run, none after), so that what is read there is the whole fabric's state as of `t`. It moves
  // only where the engine pauses, not what it computes (where windows end changes no result):
  // const, as running the simulation is to an observer holding the network. Time::max(): no bound.
  // A no-op on one queue.
  void pause_windows_after(Time t) const;

 private:
  friend class FaultInjector;
  // After a routing convergence: every flow not yet done takes the route the repaired tables give
  // it (ECMP re-hashes over the shrunken or regrown groups); a flow with no route is parked until
  // one comes back (network_faults.cpp).
  void reroute_flows();
  // Whether a new flow gets reliable-transport state (lossy inter-host RoCE with go-back-N, TCP).
  bool needs_transport(const FlowRecord& f) const;
  // Windowed execution: a context, queue, pool and counters per partition (build_partitions); the
  // context a node's components use.
  void build_partitions(const FabricPartition& plan);
  const NetContext& ctx_of(NodeId id) const { return *node_ctx_[id]; }

  Simulation& sim_;
  const NetworkSpec& spec_;
  Routing routing_;
  PacketPool pool_;
  NetworkCounters counters_;
  std::vector<PortId> route_arena_;
  std::vector<EgressPort*> port_ptrs_;  // by PortId, for the context
  FlowTable flows_;
  SendQueueTable send_queues_;
  NetContext ctx_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Switch*> switches_;  // by NodeId, null for NICs
  std::vector<Nic*> nics_;         // by NodeId, null for switches
  std::vector<std::unique_ptr<EgressPort>> ports_;
  // The NICs' congestion control: the one that runs (DCQCN on RoCE, IB CC on InfiniBand), or null.
  NicPacing* pacing() const;
  std::unique_ptr<DcqcnPacing> dcqcn_;            // null when DCQCN is off
  std::unique_ptr<IbCongestionControl> ib_cc_;    // null unless InfiniBand CC is on
  std::unique_ptr<ReliableTransport> transport_;  // go-back-N or TCP; null when neither can apply
  std::unique_ptr<DeadlockDetector> deadlock_;
  std::unique_ptr<LoadBalancer> balancer_;  // null under ECMP
  std::vector<ConfigurationFinding> findings_;
  std::unique_ptr<FaultInjector> faults_;  // null without timed faults
  // Windowed execution: empty (and node_ctx_ all &ctx_) when the network runs as one queue.
  std::vector<std::unique_ptr<Partition>> partitions_;
  std::vector<std::unique_ptr<NetContext>> partition_ctx_;
  std::vector<uint32_t> partition_of_;  // by NodeId
  std::vector<const NetContext*> node_ctx_;
  std::unique_ptr<PartitionWindows> windows_;
  Time partition_lookahead_ = Time::max();
  std::string partition_refusal_;
  bool starts_ahead_ = false;
  FlowId start_flow_ahead(NodeId src, NodeId dst, Bytes size, uint8_t priority, uint32_t queue_pair,
                          bool persistent_qp, Time start_at);
};

}  // namespace syncsim::net
