#pragma once
// Time series of a packet-level run without touching it: the caller advances the event queue to
// each sample time with EventQueue::run(until) and then calls sample(), so the observer schedules
// no events of its own and the run's events, times and results are the same with or without it. It
// records, per sample: queue depth and paused priorities of chosen egress ports, the buffer
// occupancy of chosen switches (all bytes held, and the shared pool's part), and per flow its
// delivered bytes and its sending rate (the DCQCN current rate, or the line rate without DCQCN; 0
// once the flow has sent everything).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/net/network.hpp"

namespace syncsim::net {

struct ObserverConfig {
  std::vector<PortId> ports;     // egress ports to watch
  std::vector<NodeId> switches;  // switches whose shared buffer occupancy to record
  bool flows = true;             // per-flow rate and delivered bytes
};

class NetworkObserver {
 public:
  NetworkObserver(const Network& net, ObserverConfig config)
      : net_(net), config_(std::move(config)) {}
  // Records the state as of `at` (every event up to `at` has run).
  void sample(Time at);

  std::size_t samples() const { return times_ps_.size(); }
  Time time(std::size_t s) const { return Time::ps(times_ps_[s]); }
  const std::vector<PortId>& ports() const { return config_.ports; }
  int64_t queue_bytes(std::size_t s, std::size_t port_index) const {
    return queue_bytes_[s * config_.ports.size() + port_index];
  }
  uint8_t paused_mask(std::size_t s, std::size_t port_index) const {
    return paused_[s * config_.ports.size() + port_index];
  }
  const std::vector<NodeId>& switches() const { return config_.switches; }
  int64_t buffer_used(std::size_t s, std::size_t switch_index) const {
    return buffer_used_[s * config_.switches.size() + switch_index];
  }
  int64_t shared_used(std::size_t s, std::size_t switch_index) const {
    return shared_used_[s * config_.switches.size() + switch_index];
  }
  // Flows that existed at sample s (flow ids 0 .. flow_count(s) - 1).
  std::size_t flow_count(std::size_t s) const { return flow_begin_[s + 1] - flow_begin_[s]; }
  double flow_rate_bps(std::size_t s, FlowId f) const { return rate_bps_[flow_begin_[s] + f]; }
  int64_t flow_delivered(std::size_t s, FlowId f) const { return delivered_[flow_begin_[s] + f]; }

 private:
  const Network& net_;
  ObserverConfig config_;
  std::vector<int64_t> times_ps_;
  std::vector<int64_t> queue_bytes_;
  std::vector<uint8_t> paused_;
  std::vector<int64_t> buffer_used_;
  std::vector<int64_t> shared_used_;
  std::vector<std::size_t> flow_begin_{0};
  std::vector<double> rate_bps_;
  std::vector<int64_t> delivered_;
};

}  // namespace syncsim::net
