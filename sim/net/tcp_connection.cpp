#include "sim/net/tcp_connection.hpp"

#include <algorithm>
#include <cmath>

namespace syncsim::net {

void restart_after_idle(TcpConnection& c, int64_t idle_ps, int64_t rto_ps,
                        uint32_t initial_window) {
  if (idle_ps <= rto_ps) return;  // tcp_slow_start_after_idle_check: delta > icsk_rto
  auto cwnd = static_cast<uint64_t>(std::max(1.0, std::floor(c.cwnd)));
  // tcp_current_ssthresh (not in a window reduction: nothing is in flight).
  c.ssthresh = std::max(c.ssthresh, static_cast<double>((cwnd >> 1) + (cwnd >> 2)));
  const uint64_t restart = std::min<uint64_t>(std::max<uint32_t>(1, initial_window), cwnd);
  // while ((delta -= icsk_rto) > 0 && cwnd > restart_cwnd) cwnd >>= 1;
  int64_t delta = idle_ps;
  while ((delta -= rto_ps) > 0 && cwnd > restart) cwnd >>= 1;
  c.cwnd = static_cast<double>(std::max(cwnd, restart));
}

uint32_t TcpConnectionTable::open(NodeId src, NodeId dst, uint32_t queue_pair, bool persistent,
                                  bool& reused) {
  reused = false;
  const auto index = static_cast<uint32_t>(connections_.size());
  if (persistent) {
    const Key key{(static_cast<uint64_t>(src) << 32) | dst, queue_pair};
    const auto [it, added] = persistent_.try_emplace(key, index);
    if (!added) {
      reused = true;
      return it->second;
    }
  }
  connections_.emplace_back();
  return index;
}

}  // namespace syncsim::net
