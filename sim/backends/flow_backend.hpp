#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/backends/queue_pair_routes.hpp"
#include "sim/backends/transfer_backend.hpp"
#include "sim/core/indexed_min_heap.hpp"
#include "sim/net/routing.hpp"

namespace syncsim {

using net::FlowCcCorrection;  // sim/net/network_spec.hpp

// Flow-level fidelity: every transfer is a fluid flow on its ECMP path (the same path the packet
// model would use), sharing links max-min fairly (progressive filling), recomputed whenever a flow
// starts or drains. A link's capacity is its payload rate, bandwidth * mtu / (mtu + header), so
// long flows match the packet model's goodput. On top of the fluid drain time each flow pays its
// path's pipeline latency (propagation plus store-and-forward of the first packet), taken from the
// analytic model, so an uncontended flow finishes exactly when the analytic backend says.
//
// Recomputation is incremental: flows that share a link, transitively, form a connected component
// of the link-flow graph, and the max-min rates of one component do not depend on any other. An
// arrival or completion only re-runs progressive filling on the component(s) it touches (arrivals
// and completions of one instant share one recomputation). The heap order of progressive filling
// is (share, port), so filling one component performs exactly the floating-point operations the
// global filling performs on it: the rates are bit-identical to a global recomputation (tested).
// Each flow keeps its bytes left at the time its rate last changed and a projected finish time in
// a completion heap, so flows whose rate does not change cost nothing per event.
//
// Load balancing (NetworkSpec::load_balancing): under packet_spray and adaptive a transfer is split
// evenly over the shortest paths (Routing::route_indexed; at most kMaxSubflows of them), one fluid
// sub-flow each, and completes with its last one: a multipath max-min in which each path's share
// competes on its own. Flowlet switching keeps the ECMP path (a fluid flow never pauses).
//
// A persistent queue pair (queue_pairs.hpp) sends its transfers in order, as the packet model's
// send queue does (sim/net/send_queue.hpp): a transfer posted while an earlier one of its queue
// pair is still draining waits, and starts its fluid drain when the earlier one's ends (its last
// byte has left the bottleneck; the tail latency is paid after). Flows of their own share fairly.
//
// What it does not see: queueing delay, head-of-line blocking, PFC spreading and drops (all queues
// are ideal), and per-packet round-robin effects at small sizes. docs/fidelities.md gives the
// measured error.
class FlowBackend final : public TransferBackend, private EventTarget {
 public:
  // Local (the default): refill the flows on the touched links with everything else held fixed,
  // verify that every flow around them keeps a valid bottleneck, and widen the region where one
  // does not (see update()). Component: refill the whole touched component (bit-identical to
  // Global). Global: refill every active flow on every change: the reference both are tested and
  // measured against.
  enum class Recompute : uint8_t { Local, Component, Global };
  // Sub-flows per transfer under per-packet load balancing: every path of a 2-tier fabric with up
  // to 64 spine links per leaf, or of a k = 16 fat tree (8 x 8 between pods).
  static constexpr uint64_t kMaxSubflows = 64;

  // The correction is the spec's (`NetworkSpec::flow_cc`) unless one is given explicitly.
  FlowBackend(Simulation& sim, const net::NetworkSpec& spec, Recompute mode = Recompute::Local);
  FlowBackend(Simulation& sim, const net::NetworkSpec& spec, Recompute mode,
              FlowCcCorrection correction);
  Fidelity fidelity() const override { return Fidelity::Flow; }
  net::NetworkCounters counters() const override { return counters_; }
  // Timed faults (flow_backend_faults.cpp).
  bool schedule_faults(const std::vector<net::NetFault>& faults,
                       const net::FaultParams& params) override;

  uint64_t rate_recomputations() const { return recomputations_; }
  // Flows given a rate, summed over every recomputation (the work incremental mode saves).
  uint64_t flows_recomputed() const { return flows_recomputed_; }
  std::size_t active_flows() const { return active_count_; }
  // Transfers that took their queue pair's draining flow's place without a refill (take_over).
  uint64_t transfers_taken_over() const { return taken_over_; }
  // Peak number of flows in flight at once (for memory estimates).
  std::size_t peak_active_flows() const { return peak_active_; }
  // Current fair rate of an active transfer in bits/s (0 if it is not active); for tests.
  double rate_bps(TransferId id) const;
  // Every active flow's (transfer, current rate in bits/s), in slot order.
  std::vector<std::pair<TransferId, double>> active_rates_bps() const;
  // The same flows' rates from a progressive filling over all active flows at once, computed now
  // without changing any state; for tests.
  std::vector<std::pair<TransferId, double>> global_rates_bps();

 private:
  static constexpr uint32_t kNoGroup = UINT32_MAX;
  static constexpr uint32_t kNone = UINT32_MAX;
  // A fluid flow in its slot; its route's length and its rate are in per-slot arrays of their own
  // (route_hops_, rate_Bps_).
  struct Flow {
    TransferId transfer = 0;
    uint32_t group = kNoGroup;    // multipath: its transfer's sub-flow group (group_left_)
    uint32_t send_queue = kNone;  // its persistent queue pair's (send_queues_), if any
    int64_t bytes = 0;            // payload it carries
    bool active = false;
    double remaining_bytes = 0;  // bytes left at `since`
    Time since = Time::zero();
    Time tail_latency = Time::zero();  // paid after the fluid drain
    net::NodeId src = 0, dst = 0;      // its NICs, and the queue pair of its ECMP hash
    uint32_t queue_pair = 0;
    bool stalled = false;  // on a dead link or without a route: on no port's list, at rate 0
  };
  struct PortFlow {
    uint32_t slot;
    uint32_t hop;
  };
  struct Candidate {
    double share;
    net::PortId port;
  };
  // Regions of at most this many links find each step's bottleneck by a scan, larger ones by a
  // lazy min-heap (fill_component).
  static constexpr std::size_t kScannedLinks = 16;
  // What a flow's route costs beyond its fluid drain: the tail latency it pays after draining, and
  // the packet hops its bytes count for.
  struct PathTiming {
    Time tail_latency = Time::zero();
    uint64_t packet_hops = 0;
  };
  enum EventKind : uint32_t { kArrivals = 0, kTimer = 1, kDeliver = 2, kFault = 3, kConverge = 4 };

  void begin(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) override;
  bool can_drop_records() const override { return true; }  // it keeps what it needs per flow
  // Starts transfer `id`'s fluid flow(s) now, on queue pair `qp` (and its send queue, or kNone).
  void launch(TransferId id, net::NodeId src, net::NodeId dst, Bytes size, uint32_t qp,
              uint32_t send_queue);
  // Starts the next transfer of every send queue in released_ (flow_backend_send_queue.cpp).
  void start_released();
  // A flow of a persistent queue pair that drains while the pair's next transfer waits, on the
  // same route, hands its slot to that transfer (flow_backend_send_queue.cpp): Local mode only.
  // False when it cannot (the flow then ends and the next starts as a flow of its own).
  bool take_over(uint32_t slot);
  // Adds one fluid flow of `size` bytes of transfer `id` on the route in route_scratch_.
  // `routed`: false when faults left src and dst without a route (the flow then waits stalled).
  // `timing`: the route's, when the caller has it (a send queue's cache), else computed here.
  void add_flow(TransferId id, Bytes size, net::NodeId src, net::NodeId dst, uint32_t qp,
                bool routed, uint32_t send_queue, uint32_t group = kNoGroup,
                const PathTiming* timing = nullptr);
  PathTiming path_timing(const net::PortId* route, uint16_t hops, Bytes size) const;
  void on_event(uint32_t kind, uint64_t arg) override;
  void update();
  void update_rates();

  // Timed faults (flow_backend_faults.cpp): a cable down stalls the flows on it (rate 0, no
  // bytes lost: there are no packets) until routing converges and they take other routes; a
  // degraded cable shares out a fraction of its capacity.
  void apply_fault(const net::NetFault& f);
  void converge(uint64_t update);
  // Puts an active flow on its route's ports (it joins the next rate computation) / takes it off
  // them, keeping the bytes it has left.
  void attach(uint32_t slot);
  void detach(uint32_t slot);
  bool crosses_dead_port(uint32_t slot) const;
  // Fills component_flows_/component_ports_ with everything reachable from the seeds.
  void collect_component();
  // Local mode: the seeds' flows, widened until the refilled rates are the max-min rates.
  void solve_local();
  void add_to_region(uint32_t slot);
  // Empties the region and starts a new mark epoch (clearing the marks when it wraps).
  void begin_region();
  void collect_all();
  // Progressive filling over component_flows_/component_ports_; rates land in new_rate_[slot].
  void fill_component();
  void apply_rates();
  // Sets slot's completion at `now` plus its remaining bytes at its rate.
  void project_finish(uint32_t slot, Time now);
  // The capacity port `p` shares out now: its payload rate, times the CC correction's efficiency
  // when it is contended (see FlowCcCorrection).
  double shared_capacity(net::PortId p);
  void schedule_timer();
  uint32_t allocate_slot();
  void ensure_stride(uint16_t hops);
  net::PortId route_port(uint32_t slot, uint32_t hop) const {
    return route_arena_[std::size_t{slot} * stride_ + hop];
  }

  Recompute mode_;
  FlowCcCorrection correction_;
  net::Routing routing_;
  std::vector<double> capacity_Bps_;     // per directed port
  std::vector<double> shared_Bps_;       // per port: shared_capacity() at the last fill touching it
  std::vector<uint32_t> upstream_mark_;  // per port: epoch of the last count in shared_capacity()
  uint32_t upstream_epoch_ = 0;
  // Per slot: `stride_` route ports and, for each, the flow's position in flows_on_[port].
  uint32_t stride_ = 8;
  std::vector<net::PortId> route_arena_;
  std::vector<uint32_t> hop_pos_;
  // Per slot: how many of its `stride_` route ports it uses. Apart from Flow, as rate_Bps_ below:
  // every region walk reads it.
  std::vector<uint16_t> route_hops_;
  std::vector<Flow> flows_;
  std::vector<uint32_t> free_slots_;
  std::size_t active_count_ = 0;
  std::size_t peak_active_ = 0;
  std::vector<std::vector<PortFlow>> flows_on_;  // per port: the active flows crossing it
  IndexedMinHeap completions_;                   // active flows' projected finishes (ps) by slot
  std::vector<uint32_t> arrivals_;               // slots started since the last update
  // Drained flows waiting out their tail latency (kDeliver's argument indexes deliveries_), and
  // multipath groups: sub-flows of one begin() still to deliver (load balancing above).
  struct Delivery {
    TransferId transfer = 0;
    uint32_t group = kNoGroup;
    int64_t bytes = 0;
  };
  std::vector<Delivery> deliveries_;
  std::vector<uint32_t> free_deliveries_;
  std::vector<uint32_t> group_left_;
  std::vector<uint32_t> free_groups_;
  // Persistent queue pairs' send queues: the sub-flows of the transfer draining now, and the
  // transfers waiting behind it (a list through waiting_, reused through free_waiting_).
  struct SendQueue {
    uint32_t draining = 0;
    uint32_t head = kNone;
    uint32_t tail = kNone;
    // Its route's timing at the last size sent (its route is in qp_routes_): void when a fault
    // changes a link or routing converges anew (path_epoch_).
    int64_t timed_bytes = -1;
    PathTiming timing;
  };
  struct Waiting {
    TransferId transfer = 0;
    net::NodeId src = 0, dst = 0;
    Bytes size{0};
    uint32_t qp = 0;
    uint32_t next = kNone;
  };
  std::vector<SendQueue> send_queues_;
  QueuePairRoutes qp_routes_;  // the persistent queue pairs' routes, kept under path_epoch_
  uint32_t path_epoch_ = 1;    // raised by every fault and routing convergence
  // By persistent_index() of a QP number: its send queue, kNone until its first transfer. An array
  // (the QP indices are dense): with a hash map, FlowBackend::begin took 7.9% of a 2,048-GPU
  // step's samples, mostly the node chase (perf).
  std::vector<uint32_t> send_queue_of_;
  std::vector<Waiting> waiting_;
  std::vector<uint32_t> free_waiting_;
  std::vector<uint32_t> released_;  // send queues whose draining transfer ended in this update
  bool arrivals_pending_ = false;
  CancelToken timer_token_;
  Time timer_at_ = Time::max();
  // Scratch, kept to avoid allocation per recomputation.
  std::vector<net::PortId> route_scratch_;
  std::vector<net::PortId> seed_ports_;
  std::vector<uint32_t> component_flows_;
  std::vector<net::PortId> component_ports_;
  std::vector<net::PortId> port_stack_;
  std::vector<uint32_t> port_mark_;  // per port: epoch of the last visit
  std::vector<uint32_t> seed_mark_;  // per port: seed_epoch_ of the last seeding walk (Local mode)
  uint32_t seed_epoch_ = 0;
  std::vector<uint32_t> flow_mark_;  // per slot
  uint32_t epoch_ = 0;
  std::vector<double> link_left_;        // per port: capacity not yet handed out
  std::vector<uint32_t> link_unfrozen_;  // per port: flows still waiting for a rate
  std::vector<uint8_t> frozen_;          // per slot
  // Per slot: the payload bytes per second since Flow::since. Apart from Flow: the rate fills read
  // it for every flow on a link they refill, and a slot's 8 bytes cost less cache than its Flow.
  std::vector<double> rate_Bps_;
  std::vector<double> new_rate_;             // per slot
  std::vector<net::PortId> bottleneck_;      // per slot: the link that fixed its rate
  std::vector<net::PortId> new_bottleneck_;  // per slot
  std::vector<uint32_t> violators_;
  std::vector<Candidate> heap_;
  net::NetworkCounters counters_;
  // Faults: per port, dead (down) or not (empty: none has been), and its capacity at full rate.
  std::vector<uint8_t> port_dead_;
  std::vector<double> full_capacity_Bps_;
  std::vector<net::NetFault> faults_;
  net::FaultParams fault_params_;
  std::vector<std::pair<std::vector<uint32_t>, bool>> route_updates_;  // cables, up
  uint64_t recomputations_ = 0;
  uint64_t flows_recomputed_ = 0;
  uint64_t taken_over_ = 0;  // transfers started in their predecessor's slot (take_over)
};

}  // namespace syncsim
