#include "sim/net/network_counters.hpp"

#include <algorithm>

namespace syncsim::net {

void add_counters(NetworkCounters& total, const NetworkCounters& part) {
  // A field added to NetworkCounters must be added here too.
  static_assert(sizeof(NetworkCounters) == 34 * 8 + sizeof(NetworkCounters::packets_dropped),
                "NetworkCounters changed: merge the new field below");
  total.packet_hops += part.packet_hops;
  total.packets_injected += part.packets_injected;
  total.bytes_injected += part.bytes_injected;
  total.bytes_delivered += part.bytes_delivered;
  total.bytes_dropped += part.bytes_dropped;
  for (std::size_t i = 0; i < total.packets_dropped.size(); ++i) {
    total.packets_dropped[i] += part.packets_dropped[i];
  }
  total.max_queue_bytes = std::max(total.max_queue_bytes, part.max_queue_bytes);
  total.pause_frames += part.pause_frames;
  total.resume_frames += part.resume_frames;
  total.ecn_marks += part.ecn_marks;
  total.ecn_hop_marks += part.ecn_hop_marks;
  total.cnps += part.cnps;
  total.rate_cuts += part.rate_cuts;
  total.nic_pause_frames += part.nic_pause_frames;
  total.pinned_releases += part.pinned_releases;
  total.max_nic_rx_bytes = std::max(total.max_nic_rx_bytes, part.max_nic_rx_bytes);
  total.flows_started += part.flows_started;
  total.flows_completed += part.flows_completed;
  total.retransmitted_packets += part.retransmitted_packets;
  total.retransmitted_bytes += part.retransmitted_bytes;
  total.timeouts += part.timeouts;
  total.fast_retransmits += part.fast_retransmits;
  total.naks += part.naks;
  total.acks += part.acks;
  total.bytes_discarded += part.bytes_discarded;
  total.out_of_order_packets += part.out_of_order_packets;
  total.rc_recoveries += part.rc_recoveries;
  total.rc_recovery_time_ps += part.rc_recovery_time_ps;
  total.rc_recovery_max_ps = std::max(total.rc_recovery_max_ps, part.rc_recovery_max_ps);
  total.rc_retry_exceeded += part.rc_retry_exceeded;
  total.route_convergences += part.route_convergences;
  total.flows_rerouted += part.flows_rerouted;
  total.flows_unroutable += part.flows_unroutable;
  total.lossless_packets_lost += part.lossless_packets_lost;
  total.lossless_bytes_lost += part.lossless_bytes_lost;
}

}  // namespace syncsim::net
