#pragma once
// Per egress port x priority counters, as an operator reads them from a switch or NIC interface
// (per-queue tx counters, PFC frames and pause time per class, queue occupancy, ECN marks, discards
// by reason). Collected only when NetworkSpec::port_counters is set: each port preallocates one
// PriorityCounters per priority, and an event adds to a few fields (no allocation).
//
// Queue depth is the wire bytes waiting in the priority's FIFO (the packet in service excluded),
// weighted by time: the mean is the time average over the run, the percentiles come from a
// histogram of time spent at each depth in quarter-octave buckets (each bucket spans a factor of
// 2^(1/4), so a percentile interpolated inside one is within ~19% of the exact value).
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "sim/net/drop_reason.hpp"

namespace syncsim::net {

// Pause durations in decades: < 1 us, < 10 us, < 100 us, < 1 ms, < 10 ms, >= 10 ms.
inline constexpr std::size_t kPauseDurationBuckets = 6;
// Queue depth buckets: 0 (empty), 1 (1..63 B), then four per octave from 64 B up to 2^36 B.
inline constexpr std::size_t kDepthBuckets = 2 + 4 * 30;

struct PriorityCounters {
  uint64_t tx_packets = 0;      // data, ACK, NAK and CNP packets of this priority sent
  uint64_t tx_cnps = 0;         // of which CNPs (DCQCN notifications on their way to a sender)
  int64_t tx_bytes = 0;         // their wire bytes (payload + header)
  uint64_t pause_sent = 0;      // PAUSE (XOFF) frames for this priority sent out of this port
  uint64_t pause_received = 0;  // PAUSE (XOFF) frames for this priority received by this port
  int64_t paused_ps = 0;        // time this priority was paused by the peer (closed pauses)
  std::array<uint64_t, kPauseDurationBuckets> pause_durations{};  // closed pauses by length
  uint64_t ecn_marks = 0;                                         // RED marking decisions here
  std::array<uint64_t, static_cast<std::size_t>(DropReason::Count)> drops{};
  // Queue depth.
  int64_t depth = 0;           // now (mirrors the port's FIFO byte count)
  int64_t depth_max = 0;       // deepest seen
  int64_t depth_since_ps = 0;  // when `depth` took its value
  double depth_byte_ps = 0;    // integral of depth over time, closed up to depth_since_ps
  std::array<int64_t, kDepthBuckets> depth_ps{};  // time spent in each depth bucket

  static std::size_t depth_bucket(int64_t bytes) {
    if (bytes <= 0) return 0;
    if (bytes < 64) return 1;
    const auto octave =
        static_cast<std::size_t>(std::bit_width(static_cast<uint64_t>(bytes))) - 1;  // >= 6
    const auto quarter = static_cast<std::size_t>((bytes >> (octave - 2)) & 3);
    return std::min(kDepthBuckets - 1, 2 + (octave - 6) * 4 + quarter);
  }
  // [lower, upper) bytes of a depth bucket.
  static std::pair<double, double> depth_bucket_range(std::size_t b) {
    if (b == 0) return {0, 0};
    if (b == 1) return {1, 64};
    const std::size_t octave = 6 + (b - 2) / 4;
    const std::size_t quarter = (b - 2) % 4;
    const double unit = static_cast<double>(uint64_t{1} << (octave - 2));
    return {static_cast<double>(4 + quarter) * unit, static_cast<double>(5 + quarter) * unit};
  }
  static std::size_t pause_bucket(int64_t ps) {
    std::size_t b = 0;
    for (int64_t limit = 1'000'000; b + 1 < kPauseDurationBuckets && ps >= limit; limit *= 10) ++b;
    return b;
  }

  // The FIFO now holds `bytes` (call after every change).
  void note_depth(int64_t now_ps, int64_t bytes) {
    const int64_t dt = now_ps - depth_since_ps;
    if (dt > 0) {
      depth_byte_ps += static_cast<double>(depth) * static_cast<double>(dt);
      depth_ps[depth_bucket(depth)] += dt;
    }
    depth = bytes;
    depth_since_ps = now_ps;
    depth_max = std::max(depth_max, bytes);
  }
  // A pause of this priority ended after `ps`.
  void note_pause_end(int64_t ps) {
    paused_ps += ps;
    ++pause_durations[pause_bucket(ps)];
  }
};

}  // namespace syncsim::net
