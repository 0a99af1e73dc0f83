#pragma once
// A TCP connection's congestion state, shared by every message sent on it (tcp.hpp).
//
// NCCL's socket transport opens its sockets once per connection and keeps them for the job
// (NCCL src/transport/net_socket.cc: ncclNetSocketConnect / Accept at communicator setup, isend /
// irecv on them after), and Linux keeps a socket's congestion window across writes: a message on a
// busy connection starts with the window its predecessors grew. The window is restarted only after
// the socket sent nothing for longer than one RTO (net.ipv4.tcp_slow_start_after_idle = 1 by
// default, Documentation/networking/ip-sysctl.rst; tcp_slow_start_after_idle_check and
// tcp_cwnd_restart in net/ipv4/tcp_output.c, RFC 2861): see restart_after_idle below.
//
// What belongs to the connection: the window (cwnd, ssthresh), the count of messages in fast
// recovery, DCTCP's alpha and its once-per-window accounting, and the last send time. What stays
// per message (tcp.hpp's TcpFlowState, ReliableFlowState): PSNs, duplicate ACKs, the NewReno
// recover point, the retransmission timer and its backoff, the receiver's bitmap. The messages of a
// connection share one window: the packets in flight of all its unfinished messages stay below
// cwnd. A socket is one byte stream: its messages leave in order, each after the previous one's
// last new segment (the queue pair's send queue, send_queue.hpp), and the window counts the
// segments of all of them in flight (NCCL keeps several slices of a connection in flight).
//
// A flow that is not a message of a persistent queue pair (Network::start_flow) gets a connection
// of its own, fresh at initial_window: one message per connection, as before connections existed.
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "sim/core/stable_vector.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/packet.hpp"

namespace syncsim::net {

struct TcpConnection {
  // Congestion control, windows in packets.
  double cwnd = 1;
  double ssthresh = 1e18;
  uint32_t recovering = 0;  // its messages in fast recovery: no growth and no second cut meanwhile
  // DCTCP (Linux dctcp.c): alpha starts at 1 (dctcp_alpha_on_init = 1024) and is updated once per
  // window of data; at most one cut per window. Windows are counted in the connection's packets:
  // `acked` (cumulatively acknowledged, over all its messages) reaching the count of packets sent
  // when the window began (sent_mark in tcp.cpp).
  double alpha = 1.0;
  uint64_t window_end = 0;
  uint64_t window_acked = 0;
  uint64_t window_marked = 0;
  uint64_t cwr_end = 0;
  uint64_t in_flight = 0;         // sent and not acknowledged: sum of nxt - una over its messages
  uint64_t acked = 0;             // packets cumulatively acknowledged, all messages together
  uint64_t finished_packets = 0;  // packets of its messages acknowledged to the end
  // Linux's lsndtime: when it last sent a data packet (INT64_MIN: never).
  int64_t last_send_ps = INT64_MIN;
  std::vector<FlowId> messages;  // its unfinished messages, in start order
};

// Linux's restart after idle (tcp_cwnd_restart, net/ipv4/tcp_output.c), applied when a connection
// with nothing in flight gets new data `idle_ps` after it last sent and idle_ps > `rto_ps`: the
// restart window is min(initial window, cwnd); ssthresh is first raised to at least 3/4 cwnd
// (tcp_current_ssthresh: (cwnd >> 1) + (cwnd >> 2)); cwnd is halved once per RTO of idle time, no
// lower than the restart window. Linux counts cwnd in whole segments: the fraction congestion
// avoidance accumulated is dropped. A shorter idle time leaves the window as it is.
void restart_after_idle(TcpConnection& c, int64_t idle_ps, int64_t rto_ps, uint32_t initial_window);

class TcpConnectionTable {
 public:
  // The connection of a new message from NIC `src` to NIC `dst`. `persistent`: the message is on a
  // persistent queue pair `queue_pair` (NCCL's connections; sim/backends/queue_pairs.hpp); the
  // messages naming the same (src, dst, queue_pair) share its connection, `reused` says whether
  // it existed. Otherwise a connection of its own.
  uint32_t open(NodeId src, NodeId dst, uint32_t queue_pair, bool persistent, bool& reused);
  TcpConnection& operator[](uint32_t index) { return connections_[index]; }
  const TcpConnection& operator[](uint32_t index) const { return connections_[index]; }
  std::size_t size() const { return connections_.size(); }

 private:
  struct Key {
    uint64_t ends = 0;  // src << 32 | dst
    uint32_t queue_pair = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<uint64_t>{}(k.ends ^
                                   (static_cast<uint64_t>(k.queue_pair) * 0x9E3779B97F4A7C15ULL));
    }
  };
  StableVector<TcpConnection> connections_;  // stable: references stay valid as messages start
  std::unordered_map<Key, uint32_t, KeyHash> persistent_;  // looked up once per message start
};

}  // namespace syncsim::net
