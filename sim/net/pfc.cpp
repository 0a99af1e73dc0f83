// PFC at the ports: the egress port's pause state (PAUSE/RESUME, quanta expiry, the watchdog) and
// the switch's PAUSE/RESUME frame generation. Mechanism and parameters: pfc.hpp.
#include "sim/net/pfc.hpp"

#include <cmath>

#include "sim/core/check.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/switch.hpp"

namespace syncsim::net {

int64_t required_headroom(const LinkParams& link, Time response_time) {
  // references.md section 6: MTU_R + MTU_S + cable both ways + sender response, plus the PAUSE
  // frame itself (it waits behind MTU_R, then takes its own wire time).
  const int64_t mtu_wire = link.mtu.count() + link.header.count();
  const double bytes_per_ps = static_cast<double>(link.bandwidth.bits_per_second()) / 8e12;
  const auto cable = static_cast<int64_t>(
      std::ceil(2.0 * bytes_per_ps * static_cast<double>(link.delay.picoseconds())));
  const auto response = static_cast<int64_t>(
      std::ceil(bytes_per_ps * static_cast<double>(response_time.picoseconds())));
  return 2 * mtu_wire + cable + response + kPauseFrameWireBytes;
}

MmuPfcConfig switch_pfc_config(const PfcParams& pfc, const Routing& routing, NodeId sw,
                               bool ethernet) {
  MmuPfcConfig cfg;
  // NVLink is lossless by its link-level credits whatever the Ethernet fabric runs
  // (nvlink_credits.hpp): an NVSwitch runs no PFC.
  if (!ethernet) return cfg;
  cfg.enabled = pfc.enabled;
  cfg.lossless_mask = pfc.lossless_mask;
  cfg.dynamic = pfc.dynamic_threshold;
  cfg.alpha = pfc.alpha;
  cfg.static_xoff = pfc.static_xoff.count();
  cfg.xon_offset = pfc.xon_offset.count();
  if (cfg.enabled) {
    for (PortId p : routing.ports_of(sw)) {
      cfg.headroom.push_back(pfc.headroom_auto
                                 ? required_headroom(routing.link_of(p), pfc.response_time)
                                 : pfc.headroom.count());
    }
  }
  return cfg;
}

// ---------------------------------------------------------------- switch: frame generation

void Switch::send_pfc(uint32_t port, uint8_t priority, bool xoff) {
  if (port == internal_port_) return;
  EgressPort& out = ctx_.egress(ports_[port]);
  const PacketRef ref = ctx_.new_pause(control_frame_payload(out), priority, xoff, pause_quanta_);
  if (pause_quanta_ > 0) {
    if (xoff) {
      // Refresh at half the pause time while still above XOFF.
      out.arm_pause_refresh(port, priority, pause_refresh_time(out.bandwidth(), pause_quanta_));
    } else {
      out.cancel_pause_refresh(priority);
    }
  }
  NetworkCounters& c = ctx_.counters;
  ++(xoff ? c.pause_frames : c.resume_frames);
  out.send_control(ref);
}

// ---------------------------------------------------------------- egress port: receiving side

void EgressPort::set_paused(uint8_t priority, bool paused, uint32_t quanta) {
  SIM_CHECK(priority < priorities_, "PFC frame for a priority above the port's class count");
  ++pfc_.pause_frames_received;
  if (paused && counters_ != nullptr) ++counters_[priority].pause_received;
  const auto bit = static_cast<uint8_t>(1U << priority);
  const bool was = (paused_mask_ & bit) != 0;
  if (paused && quanta > 0 && !(storm_mask_ != 0 && storm(priority))) {
    // The pause lasts quanta x 512 bit times from now; a refresh restarts it.
    pfc_.expiry_tokens[priority].cancel_pending();
    ctx_.queue.schedule(ctx_.now() + pause_hold_time(bandwidth_, quanta), this, kPauseExpiry,
                        priority, &pfc_.expiry_tokens[priority]);
  }
  if (paused && !was) {
    if (storm_mask_ != 0 && storm(priority)) return;  // the watchdog ignores PAUSE for now
    paused_mask_ = static_cast<uint8_t>(paused_mask_ | bit);
    pfc_.paused_since_ps[priority] = ctx_.now().picoseconds();
    if (owner_ != nullptr) {
      if (pfc_.watchdog_ps > 0) {
        ctx_.queue.schedule(ctx_.now() + Time::ps(pfc_.watchdog_ps), this, kWatchdog, priority,
                            &pfc_.watchdog_tokens[priority]);
      }
      ctx_.note_pause();
    }
  } else if (!paused && was) {
    resume(priority);
  }
}

void EgressPort::arm_pause_refresh(uint32_t local_port, uint8_t priority, Time after) {
  pfc_.refresh_tokens[priority].cancel_pending();
  ctx_.queue.schedule(ctx_.now() + after, this, kPauseRefresh,
                      (static_cast<uint64_t>(local_port) << 8) | priority,
                      &pfc_.refresh_tokens[priority]);
}

void EgressPort::resume(uint8_t priority) {
  const auto bit = static_cast<uint8_t>(1U << priority);
  paused_mask_ = static_cast<uint8_t>(paused_mask_ & ~bit);
  pfc_.paused_ps += ctx_.now().picoseconds() - pfc_.paused_since_ps[priority];
  if (counters_ != nullptr) {
    counters_[priority].note_pause_end(ctx_.now().picoseconds() - pfc_.paused_since_ps[priority]);
  }
  pfc_.watchdog_tokens[priority].cancel_pending();
  pfc_.expiry_tokens[priority].cancel_pending();
  if (owner_ != nullptr) ctx_.note_resume();
  kick();
}

Time EgressPort::paused_time(Time now) const {
  int64_t total = pfc_.paused_ps;
  for (uint32_t prio = 0; prio < priorities_; ++prio) {
    if (((paused_mask_ >> prio) & 1U) != 0) total += now.picoseconds() - pfc_.paused_since_ps[prio];
  }
  return Time::ps(total);
}

bool EgressPort::storm(uint8_t priority) {
  const auto bit = static_cast<uint8_t>(1U << priority);
  if ((storm_mask_ & bit) == 0) return false;
  if (ctx_.now().picoseconds() < pfc_.storm_until_ps[priority]) return true;
  storm_mask_ = static_cast<uint8_t>(storm_mask_ & ~bit);
  return false;
}

void EgressPort::drop_buffered(PacketRef packet, DropReason reason) {
  const Packet& p = ctx_.packet(packet);
  if (mmu_ != nullptr && mmu_->lossless(p.priority) && mmu_->xoff(p.ingress_port, p.priority)) {
    owner_->settle_releases();  // its XON threshold reads them
  }
  if (mmu_ != nullptr && p.buffered_bytes > 0 &&
      mmu_->release(p.ingress_port, p.priority, Bytes{p.buffered_bytes}) == PfcSignal::Resume) {
    owner_->send_pfc(p.ingress_port, p.priority, false);
  }
  if (counters_ != nullptr) {
    ++counters_[ctx_.packet(packet).priority].drops[static_cast<std::size_t>(reason)];
  }
  ctx_.drop(packet, reason);
}

void EgressPort::watchdog_fire(uint8_t priority) {
  // Paused continuously for the detection time (a RESUME cancels this event): a PFC storm or a
  // deadlock. Stop honouring PAUSE for one more detection time; in drop mode also flush the queue.
  const auto bit = static_cast<uint8_t>(1U << priority);
  if ((paused_mask_ & bit) == 0) return;
  const int64_t now = ctx_.now().picoseconds();
  paused_mask_ = static_cast<uint8_t>(paused_mask_ & ~bit);
  pfc_.paused_ps += now - pfc_.paused_since_ps[priority];
  if (counters_ != nullptr)
    counters_[priority].note_pause_end(now - pfc_.paused_since_ps[priority]);
  ctx_.note_resume();
  storm_mask_ = static_cast<uint8_t>(storm_mask_ | bit);
  pfc_.storm_until_ps[priority] = now + pfc_.watchdog_ps;
  if (pfc_.watchdog_drop) {
    while (!queues_[priority].empty()) {
      const PacketRef r = queues_[priority].pop();
      const int64_t wire = ctx_.packet(r).payload_bytes + header_.count();
      prio_bytes_[priority] -= wire;
      note_depth(priority);
      queued_bytes_ -= wire;
      drop_buffered(r);
    }
    queued_mask_ = static_cast<uint8_t>(queued_mask_ & ~bit);
  }
  kick();
}

void EgressPort::on_pfc_event(uint32_t kind, uint64_t arg) {
  if (kind == kWatchdog) {
    watchdog_fire(static_cast<uint8_t>(arg));
    return;
  }
  if (kind == kPauseExpiry) {
    // Not refreshed in time: the pause lapses as if RESUMEd.
    const auto prio = static_cast<uint8_t>(arg);
    if (paused(prio)) resume(prio);
    return;
  }
  SIM_CHECK(kind == kPauseRefresh, "unknown egress port event");
  const auto prio = static_cast<uint8_t>(arg & 0xFF);
  const auto local = static_cast<uint32_t>(arg >> 8);
  if (owner_->mmu().xoff(local, prio)) owner_->send_pfc(local, prio, true);
}

}  // namespace syncsim::net
