#pragma once
// Packets are small PODs in a pool owned by the Network and referred to by index. A packet carries
// a precomputed route (offset into the Network's route arena) and its hop index, so forwarding is
// one array read per hop.
#include <cstdint>

#include "sim/core/growable_array.hpp"

namespace syncsim::net {

using PacketRef = uint32_t;
using FlowId = uint32_t;
inline constexpr PacketRef kNoPacket = UINT32_MAX;
inline constexpr uint32_t kMaxPriorities = 8;  // 802.1p classes

enum class PacketKind : uint8_t { Data, Ack, Cnp, Pause, Nak };

struct Packet {
  FlowId flow;
  uint32_t route_begin;     // offset of hop 0 in the route arena (Pause frames: unused, 0)
  uint32_t payload_bytes;   // application bytes carried
  uint32_t buffered_bytes;  // bytes charged to the current switch's buffer (ingress wire size)
  uint16_t hop;             // index of the egress port this packet is queued at / will use next
  uint16_t ingress_port;    // local port index at the current switch, for buffer release
  uint8_t priority;         // Pause frames: the class paused or resumed
  PacketKind kind;
  bool ecn_ce;
  bool pfc_xoff;          // Pause frames: true = PAUSE (XOFF), false = RESUME (XON)
  uint32_t seq;           // reliable transports: data PSN; Ack/Nak: cumulative PSN expected next
  uint16_t pause_quanta;  // Pause frames (XOFF): pause time in 512-bit-time quanta; 0: until RESUME
  // Data packets under per-packet load balancing: what the switches hash (load_balancing.hpp).
  uint16_t entropy;
};
static_assert(sizeof(Packet) == 32, "keep Packet small: the pool is walked on every hop");

inline constexpr uint32_t kPauseFrameWireBytes = 64;

class PacketPool {
 public:
  PacketRef allocate() {
    if (free_.empty()) {
      packets_.push_back(Packet{});
      return static_cast<PacketRef>(packets_.size() - 1);
    }
    const PacketRef r = free_.back();
    free_.pop_back();
    return r;
  }
  void release(PacketRef r) { free_.push_back(r); }
  Packet& operator[](PacketRef r) { return packets_[r]; }
  const Packet& operator[](PacketRef r) const { return packets_[r]; }
  std::size_t live() const { return packets_.size() - free_.size(); }
  std::size_t capacity() const { return packets_.size(); }

 private:
  // Grown in place (growable_array.hpp): a pool reaches its high-water mark mid-run.
  GrowableArray<Packet> packets_;
  GrowableArray<PacketRef> free_;
};

}  // namespace syncsim::net
