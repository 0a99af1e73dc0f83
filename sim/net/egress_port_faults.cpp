// What a fault does to one egress port and its link (network_faults.hpp): down, up, and running at
// a fraction of the line rate.
#include <algorithm>
#include <cmath>

#include "sim/core/check.hpp"
#include "sim/net/egress_port.hpp"

namespace syncsim::net {

void EgressPort::go_down() {
  if (down_) return;
  down_ = true;
  link_.go_down();
  // A port that loses its link flushes its queues (a switch's port-down handling frees the buffer
  // the port held); data lost here is repaired by the transport, or reported where it cannot be.
  for (uint32_t prio = 0; prio < priorities_; ++prio) {
    while (!queues_[prio].empty()) {
      const PacketRef r = queues_[prio].pop();
      const int64_t wire = ctx_.packet(r).payload_bytes + header_.count();
      prio_bytes_[prio] -= wire;
      queued_bytes_ -= wire;
      note_depth(static_cast<uint8_t>(prio));
      drop_buffered(r, DropReason::LinkDown);
    }
  }
  queued_mask_ = 0;
  while (!internal_.empty()) {
    const PacketRef r = internal_.pop();
    const int64_t wire = ctx_.packet(r).payload_bytes + header_.count();
    queued_bytes_ -= wire;
    internal_bytes_ -= wire;
    drop_buffered(r, DropReason::LinkDown);
  }
  while (!control_.empty()) {
    const PacketRef r = control_.pop();
    queued_bytes_ -= ctx_.packet(r).payload_bytes + header_.count();
    ctx_.drop(r, DropReason::LinkDown);
  }
  note_side_queues();
  // The peer that paused this port is gone: its PAUSE lapses (no RESUME will come), and a
  // watchdog storm period ends with it.
  for (uint32_t prio = 0; prio < priorities_; ++prio) {
    if (paused(static_cast<uint8_t>(prio))) resume(static_cast<uint8_t>(prio));
  }
  storm_mask_ = 0;
  SIM_CHECK(queued_bytes_ >= 0, "egress queue byte count went negative");
  // An engine inside the switch held back for this port's room sees it now (and writes into a
  // down port, which drops, as every other sender does).
  if (internal_writer_ != nullptr) internal_writer_->kick();
}

void EgressPort::go_up() {
  if (!down_) return;
  down_ = false;
  link_.go_up();
  kick();
}

void EgressPort::set_rate_fraction(double fraction) {
  SIM_CHECK(fraction > 0 && fraction <= 1, "a link's rate fraction must be in (0, 1]");
  const double bps = static_cast<double>(line_rate_.bits_per_second()) * fraction;
  bandwidth_ = Bandwidth::bps(std::max<int64_t>(1, std::llround(bps)));
  cached_wire_bytes_ = 0;  // re-time the next packets at the new rate
  other_wire_bytes_ = 0;
}

}  // namespace syncsim::net
