#pragma once
#include <cstdint>
#include <vector>

#include "sim/backends/transfer_backend.hpp"
#include "sim/net/routing.hpp"

namespace syncsim {

// Flow-level fidelity: every transfer is a fluid flow on its ECMP path (the same path the packet
// model would use), sharing links max-min fairly (progressive filling), recomputed whenever a flow
// starts or drains. A link's capacity is its payload rate, bandwidth * mtu / (mtu + header), so
// long flows match the packet model's goodput. On top of the fluid drain time each flow pays its
// path's pipeline latency (propagation plus store-and-forward of the first packet), taken from the
// analytic model, so an uncontended flow finishes exactly when the analytic backend says.
//
// What it does not see: queueing delay, head-of-line blocking, PFC spreading and drops (all queues
// are ideal), and per-packet round-robin effects at small sizes. See the README for measured error.
class FlowBackend final : public TransferBackend, private EventTarget {
 public:
  FlowBackend(Simulation& sim, const net::NetworkSpec& spec);
  Fidelity fidelity() const override { return Fidelity::Flow; }
  BackendCounters counters() const override { return counters_; }

  uint64_t rate_recomputations() const { return recomputations_; }
  // Current fair rate of an active transfer in bits/s (0 if it is not active); for tests.
  double rate_bps(TransferId id) const;

 private:
  struct ActiveFlow {
    TransferId transfer;
    uint32_t route_begin;
    uint16_t route_hops;
    double remaining_bytes;
    double rate_Bps;     // payload bytes per second
    Time tail_latency;   // paid after the fluid drain
  };
  enum EventKind : uint32_t { kRecompute = 0, kDrain = 1, kDeliver = 2 };

  void begin(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) override;
  void on_event(uint32_t kind, uint64_t arg) override;
  void settle_to_now();
  void recompute_rates();
  void schedule_next_drain();

  net::Routing routing_;
  std::vector<double> capacity_Bps_;  // per directed port
  std::vector<net::PortId> route_arena_;
  std::vector<ActiveFlow> active_;
  Time last_settle_ = Time::zero();
  bool recompute_pending_ = false;
  CancelToken drain_token_;
  // Scratch for progressive filling, kept to avoid allocation per recomputation.
  std::vector<double> link_left_;              // per port: capacity not yet handed out
  std::vector<uint32_t> link_unfrozen_;        // per port: flows still waiting for a rate
  std::vector<std::vector<uint32_t>> flows_on_; // per port: indices into active_
  std::vector<uint8_t> frozen_;
  std::vector<net::PortId> touched_;
  struct Candidate {
    double share;
    net::PortId port;
  };
  std::vector<Candidate> heap_;
  BackendCounters counters_;
  uint64_t recomputations_ = 0;
};

}  // namespace syncsim
