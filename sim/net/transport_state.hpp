#pragma once
// Per-flow state of the reliable transports (go-back-N RoCE, TCP) and per-link impairment state, kept
// apart from network.hpp so the fabric's core data stays small. Mechanisms: transport.hpp.
#include <cstdint>
#include <vector>

#include "sim/core/event_queue.hpp"
#include "sim/core/rng.hpp"
#include "sim/net/transport.hpp"

namespace syncsim::net {

inline constexpr uint32_t kNoTransportState = UINT32_MAX;
inline constexpr uint32_t kNoSeq = UINT32_MAX;

struct ReliableFlowState {
  bool tcp = false;
  uint32_t packets = 0;            // packets of the message (PSNs 0 .. packets-1)
  uint32_t ack_route_begin = 0;    // reverse route (dst -> src) in the route arena
  // Sender.
  uint32_t una = 0;                // oldest PSN not cumulatively acknowledged
  uint32_t nxt = 0;                // next PSN to send (rewound by NAK / timeout)
  uint32_t high = 0;               // one past the highest PSN ever sent: below it is a retransmission
  uint32_t retx = kNoSeq;          // TCP: one segment to retransmit before new data
  bool in_active = true;           // listed in the source NIC's active flows
  bool timer_pending = false;      // an RTO event is in the queue
  int64_t rto_deadline_ps = INT64_MAX;  // INT64_MAX: nothing outstanding, no timeout armed
  uint32_t backoff = 0;            // TCP: RTO doubles per consecutive timeout
  CancelToken timer_token{};       // cancels the pending RTO event once everything is acknowledged
  // TCP congestion control (windows in packets).
  double cwnd = 1;
  double ssthresh = 1e18;
  uint32_t dupacks = 0;
  bool in_recovery = false;
  uint32_t recover = 0;            // NewReno: recovery ends when this PSN is acknowledged
  double alpha = 1.0;              // DCTCP: Linux starts at 1 (dctcp_alpha_on_init = 1024)
  uint32_t window_end = 0;         // DCTCP: alpha is updated once per window of data
  uint64_t window_acked = 0;
  uint64_t window_marked = 0;
  uint32_t cwr_end = 0;            // DCTCP: at most one cut per window
  // Receiver.
  uint32_t rcv_nxt = 0;            // next in-order PSN expected
  uint32_t since_ack = 0;          // go-back-N: in-order packets since the last ACK
  bool nak_sent = false;           // go-back-N: a NAK for rcv_nxt is outstanding
  std::vector<bool> received{};    // TCP: out-of-order segments held by the receiver
};

// One impaired link direction (a Link holds it only when impairments apply to its class).
struct LinkImpairmentState {
  JitterDistribution jitter = JitterDistribution::None;
  double mean_ps = 0;
  double stddev_ps = 0;
  double loss_probability = 0;
  uint8_t lossless_mask = 0;       // priorities PFC protects: never randomly lost
  int64_t last_arrival_ps = 0;     // FIFO: a packet never overtakes the previous one
  RngStream jitter_rng{0, 0};
  RngStream loss_rng{0, 0};
};

}  // namespace syncsim::net
