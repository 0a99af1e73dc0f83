#include "sim/net/observer.hpp"

#include "sim/net/egress_port.hpp"
#include "sim/net/switch.hpp"

namespace syncsim::net {

void NetworkObserver::sample(Time at) {
  times_ps_.push_back(at.picoseconds());
  for (PortId p : config_.ports) {
    const EgressPort& port = net_.port(p);
    queue_bytes_.push_back(port.queued_bytes_at(at));
    uint8_t mask = 0;
    for (uint32_t prio = 0; prio < kMaxPriorities; ++prio) {
      if (port.paused(static_cast<uint8_t>(prio))) mask = static_cast<uint8_t>(mask | (1U << prio));
    }
    paused_.push_back(mask);
  }
  for (NodeId n : config_.switches) {
    const Switch& sw = *net_.switch_at(n);
    buffer_used_.push_back(sw.used_at(at).count());
    shared_used_.push_back(sw.shared_used_at(at).count());
  }
  if (config_.flows) {
    for (FlowId f = 0; f < net_.flow_count(); ++f) {
      const FlowRecord& r = net_.flow(f);
      rate_bps_.push_back(net_.flow_rate_bps(f));
      delivered_.push_back(r.delivered_bytes);
    }
  }
  flow_begin_.push_back(rate_bps_.size());
}

}  // namespace syncsim::net
