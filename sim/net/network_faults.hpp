#pragma once
// Timed faults on the packet network (fault.hpp's primitives; docs/faults.md). At a fault's time:
// a cable going down loses the packets on its wire and in its ports' queues (drop reason
// link_down) and every packet handed to it afterwards; a degraded cable serializes at a fraction
// of its rate; a PFC storm is its NIC sending PAUSE for a priority and RESUME when it ends. Routing
// keeps its tables for `convergence` after a cable goes down or up, then repairs them
// (routing.hpp) and every flow not yet done takes the route they give (Network::reroute_flows).
// Go-back-N and TCP resend what was lost; a lossless flow without a transport cannot, and its
// loss is counted (lossless_packets_lost) for the run to report.
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/net/fault.hpp"

namespace syncsim::net {

class Network;

class FaultInjector final : public EventTarget {
 public:
  FaultInjector(Network& network, std::vector<NetFault> faults, const FaultParams& params);
  void on_event(uint32_t kind, uint64_t arg) override;

 private:
  enum EventKind : uint32_t { kApply = 0, kConverge = 1 };
  struct RouteUpdate {
    std::vector<uint32_t> links;
    bool up = false;
  };
  void apply(const NetFault& f);
  void storm(const NetFault& f, bool on);

  Network& network_;
  std::vector<NetFault> faults_;
  FaultParams params_;
  std::vector<RouteUpdate> updates_;  // routing changes waiting for convergence, by event arg
};

}  // namespace syncsim::net
