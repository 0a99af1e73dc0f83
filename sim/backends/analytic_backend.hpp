#pragma once
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "sim/backends/queue_pair_routes.hpp"
#include "sim/backends/transfer_backend.hpp"
#include "sim/net/routing.hpp"

namespace syncsim {

// Per-path latency plus bytes over the bottleneck, with no contention: each transfer is timed as if
// it had its ECMP path to itself, by the exact store-and-forward pipeline of idle_path_time
// (path_time.hpp), so the packet backend must reproduce it to the picosecond on an idle path.
// Queues are never modelled, so max_queue_bytes and drops are always zero here. The one interaction
// kept: transfers between the same two endpoints (several chunks of one connection in flight, or
// channels sharing a GPU pair) queue FIFO behind each other at their path's bottleneck, so
// pipelining hides latency but never multiplies bandwidth. Different endpoint pairs never slow each
// other down.
class AnalyticBackend final : public TransferBackend, private EventTarget {
 public:
  AnalyticBackend(Simulation& sim, const net::NetworkSpec& spec);
  Fidelity fidelity() const override { return Fidelity::Analytic; }
  net::NetworkCounters counters() const override { return counters_; }

  // The idle-path completion time of `size` bytes over a route (exposed for tests and planners).
  Time path_time(const std::vector<net::PortId>& route, Bytes size) const;

 private:
  void begin(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) override;
  // The one event kind: transfer `arg` is delivered (a plain event, no closure per transfer).
  void on_event(uint32_t kind, uint64_t arg) override;
  bool can_drop_records() const override { return true; }

  // What a route costs a transfer of `bytes`: its idle-path time, packets and bottleneck
  // serialization (the FIFO behind an earlier transfer of the pair).
  struct RouteTiming {
    int64_t bytes = -1;
    Time path = Time::zero();
    uint64_t packets = 0;
    Time bottleneck = Time::zero();
  };
  // A persistent queue pair's endpoints' FIFO entry and its route's timing at the last size sent
  // (its route is in qp_routes_).
  struct QueuePairPath {
    Time* busy_until = nullptr;
    RouteTiming timing;
  };
  RouteTiming route_timing(const net::PortId* route, std::size_t hops, Bytes size) const;

  net::Routing routing_;
  std::vector<net::PortId> scratch_route_;
  // (src << 32 | dst) -> last finish. Node-based: QueuePairPath keeps pointers into it.
  std::unordered_map<uint64_t, Time> pair_busy_until_;
  std::vector<QueuePairPath> qp_paths_;  // by persistent_index() of a QP number
  QueuePairRoutes qp_routes_;
  net::NetworkCounters counters_;
};

}  // namespace syncsim
