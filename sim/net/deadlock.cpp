#include "sim/net/deadlock.hpp"

#include <algorithm>

#include "sim/net/egress_port.hpp"

namespace syncsim::net {

void DeadlockDetector::on_pause() {
  ++paused_queues_;
  if (pending_ || report_.detected) return;
  pending_ = true;
  ctx_.queue.schedule(ctx_.now() + detection_, this, 0, 0, &token_);
}

void DeadlockDetector::on_resume() {
  if (--paused_queues_ > 0 || !pending_) return;
  token_.cancel_pending();
  pending_ = false;
}

void DeadlockDetector::after_window() {
  int64_t first = INT64_MAX;
  for (PartitionPauseTally& t : tallies_) {
    paused_queues_ += t.net_paused;
    first = std::min(first, t.first_pause_ps);
    t.net_paused = 0;
    t.first_pause_ps = INT64_MAX;
  }
  if (paused_queues_ <= 0) {
    if (pending_) {
      token_.cancel_pending();
      pending_ = false;
    }
    return;
  }
  if (first == INT64_MAX || pending_ || report_.detected) return;
  pending_ = true;
  // A detection time shorter than the lookahead makes the check see the fabric at the window's end,
  // a little later than it was due.
  const int64_t due = std::max(first + detection_.picoseconds(), ctx_.now().picoseconds());
  ctx_.queue.schedule(Time::ps(due), this, 0, 0, &token_);
}

void DeadlockDetector::on_event(uint32_t /*kind*/, uint64_t /*arg*/) {
  pending_ = false;
  const Time now = ctx_.now();
  if (find_cycle(now, report_)) {
    report_.detected = true;
    report_.detected_at = now;
    ctx_.queue.stop();
    return;
  }
  // No cycle (yet). A queue paused too recently to count is checked again once it has been paused
  // for the detection time; otherwise keep watching while paused queues remain and the run goes on.
  // With no event pending and every paused queue already old enough, nothing can change: stop.
  int64_t next = INT64_MAX;
  bool paused_any = false;
  for (PortId p = 0; p < ctx_.ports.size(); ++p) {
    const EgressPort& port = ctx_.egress(p);
    if (!port.switch_owned() || port.paused_mask() == 0) continue;
    for (uint32_t prio = 0; prio < kMaxPriorities; ++prio) {
      const auto pr = static_cast<uint8_t>(prio);
      // Only a paused queue that holds packets can be part of a deadlock.
      if (!port.paused(pr) || port.priority_bytes(pr) == 0) continue;
      paused_any = true;
      const int64_t due = port.paused_since(pr).picoseconds() + detection_.picoseconds();
      if (due > now.picoseconds()) next = std::min(next, due);
    }
  }
  if (next == INT64_MAX && paused_any && ctx_.queue.pending() > 0) {
    next = now.picoseconds() + detection_.picoseconds();
  }
  if (next == INT64_MAX) return;
  pending_ = true;
  ctx_.queue.schedule(Time::ps(next), this, 0, 0, &token_);
}

bool DeadlockDetector::find_cycle(Time now, DeadlockReport& out) {
  const auto& infos = ctx_.routing.ports();
  const int64_t since_limit = now.picoseconds() - detection_.picoseconds();
  node_of_port_.assign(ctx_.ports.size(), -1);
  for (uint32_t prio = 0; prio < priorities_; ++prio) {
    const auto pr = static_cast<uint8_t>(prio);
    nodes_.clear();
    for (PortId p = 0; p < ctx_.ports.size(); ++p) {
      const EgressPort& port = ctx_.egress(p);
      node_of_port_[p] = -1;
      if (!port.switch_owned() || !port.paused(pr) || port.priority_bytes(pr) == 0) continue;
      if (port.paused_since(pr).picoseconds() > since_limit) continue;
      if (switches_[infos[p].peer] == nullptr) continue;
      node_of_port_[p] = static_cast<int32_t>(nodes_.size());
      nodes_.push_back(p);
    }
    if (nodes_.size() < 2) continue;
    // Iterative DFS; an edge q -> r: r leaves q's peer switch and holds a packet that came in over
    // q's link (its ingress port is q's peer-side index).
    color_.assign(nodes_.size(), 0);
    parent_.assign(nodes_.size(), -1);
    std::vector<std::pair<int32_t, std::size_t>> stack;  // (node, next out-port index to try)
    for (std::size_t start = 0; start < nodes_.size(); ++start) {
      if (color_[start] != 0) continue;
      stack.assign(1, {static_cast<int32_t>(start), 0});
      color_[start] = 1;
      while (!stack.empty()) {
        auto& [u, next] = stack.back();
        const PortId q = nodes_[static_cast<std::size_t>(u)];
        const NodeId peer = infos[q].peer;
        const uint32_t in_port = infos[q].peer_local_index;
        const auto& outs = ctx_.routing.ports_of(peer);
        bool descended = false;
        while (next < outs.size()) {
          const PortId r = outs[next++];
          const int32_t v = node_of_port_[r];
          if (v < 0) continue;
          const EgressPort& rp = ctx_.egress(r);
          bool feeds = false;
          const auto& fifo = rp.fifo(pr);
          const NetContext& pool_ctx = node_ctx_ == nullptr ? ctx_ : *(*node_ctx_)[peer];
          for (std::size_t i = 0; i < fifo.size() && !feeds; ++i) {
            feeds = pool_ctx.packet(fifo.at(i)).ingress_port == in_port;
          }
          if (!feeds) continue;
          const auto vi = static_cast<std::size_t>(v);
          if (color_[vi] == 1) {
            // A cycle: v ... u on the stack.
            out.ports.clear();
            out.priority = pr;
            int64_t formed = 0;
            for (int32_t w = u;; w = parent_[static_cast<std::size_t>(w)]) {
              const PortId wp = nodes_[static_cast<std::size_t>(w)];
              out.ports.push_back(wp);
              formed = std::max(formed, ctx_.egress(wp).paused_since(pr).picoseconds());
              if (w == v) break;
            }
            std::reverse(out.ports.begin(), out.ports.end());
            out.formed_at = Time::ps(formed);
            return true;
          }
          if (color_[vi] == 0) {
            color_[vi] = 1;
            parent_[vi] = u;
            stack.emplace_back(v, 0);
            descended = true;
            break;
          }
        }
        if (!descended) {
          color_[static_cast<std::size_t>(stack.back().first)] = 2;
          stack.pop_back();
        }
      }
    }
  }
  return false;
}

}  // namespace syncsim::net
