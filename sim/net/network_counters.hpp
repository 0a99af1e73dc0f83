#pragma once
// Network-wide counters of a run, in one plain struct for every backend: the packet network
// counts all of them, the flow and analytic backends the few they can observe (the rest stay zero).
// Result tables read this struct directly.
#include <array>
#include <cstddef>
#include <cstdint>

#include "sim/net/drop_reason.hpp"

namespace syncsim::net {

struct NetworkCounters {
  uint64_t packet_hops = 0;  // packet transmissions over links
  uint64_t packets_injected = 0;
  int64_t bytes_injected = 0;   // payload bytes put on the wire by source NICs
  int64_t bytes_delivered = 0;  // payload bytes received by destination NICs
  int64_t bytes_dropped = 0;    // payload bytes lost in switches
  std::array<uint64_t, static_cast<std::size_t>(DropReason::Count)> packets_dropped{};
  int64_t max_queue_bytes = 0;  // deepest egress queue seen anywhere (wire bytes)
  uint64_t pause_frames = 0;    // PFC PAUSE (XOFF) frames sent by switches
  uint64_t resume_frames = 0;   // PFC RESUME (XON) frames sent by switches
  uint64_t ecn_marks = 0;       // data packets marked CE by switch egress queues (first mark)
  uint64_t ecn_hop_marks = 0;   // marking decisions, summed over hops (a packet marked at two
                                // switches counts twice; at least ecn_marks)
  uint64_t cnps = 0;            // DCQCN CNPs sent by destination NICs (notification points)
  uint64_t rate_cuts = 0;       // DCQCN rate decreases applied at source NICs
  uint64_t nic_pause_frames =
      0;  // receiver-side PFC PAUSE frames sent by NICs (not in pause_frames)
  // Buffer releases of lossless packets handed over at their start that ran as events because a
  // PAUSE went out for their ingress meanwhile (egress_port.hpp, pin_release).
  uint64_t pinned_releases = 0;
  int64_t max_nic_rx_bytes = 0;  // fullest NIC receive buffer seen (receiver-side PFC)
  uint64_t flows_started = 0;
  uint64_t flows_completed = 0;
  // Reliable transports (go-back-N RoCE, TCP): bytes_injected counts retransmissions too, so
  // injected = delivered + dropped + discarded once nothing is in flight.
  uint64_t retransmitted_packets = 0;
  int64_t retransmitted_bytes = 0;
  uint64_t timeouts = 0;          // retransmission timeouts that fired
  uint64_t fast_retransmits = 0;  // TCP: 3 duplicate ACKs
  uint64_t naks = 0;              // go-back-N NAKs sent by receivers
  uint64_t acks = 0;              // ACK packets sent by receivers
  int64_t bytes_discarded = 0;    // payload received out of order (go-back-N) or twice
  // Data packets that reached a go-back-N receiver ahead of a PSN it still waits for (reordered
  // by load balancing, or behind a loss); discarded, or placed with out_of_order.
  uint64_t out_of_order_packets = 0;
  // RC recovery on lossless classes: episodes from a lost packet to the arrival of every packet
  // lost meanwhile, and their summed and longest durations.
  uint64_t rc_recoveries = 0;
  int64_t rc_recovery_time_ps = 0;
  int64_t rc_recovery_max_ps = 0;
  uint64_t rc_retry_exceeded = 0;  // lossless queue pairs failed after the retry count
  // Timed faults (network_faults.hpp). Routing convergences, flows whose route changed at one, and
  // flows left without any route (parked until a later convergence finds one). Data of lossless
  // (PFC) classes lost on links that went down: PFC does not protect against that.
  uint64_t route_convergences = 0;
  uint64_t flows_rerouted = 0;
  uint64_t flows_unroutable = 0;
  uint64_t lossless_packets_lost = 0;
  int64_t lossless_bytes_lost = 0;

  uint64_t dropped(DropReason reason) const {
    return packets_dropped[static_cast<std::size_t>(reason)];
  }
};

// Adds the counts of `part` (one partition of a windowed run) to `total`; the maxima stay maxima.
void add_counters(NetworkCounters& total, const NetworkCounters& part);

}  // namespace syncsim::net
