#pragma once
// Transports without GPUDirect (roce_host_staged, tcp; sim/net/transport.hpp): an inter-host
// message is first copied from GPU to host memory at the sender, and after its last byte arrives,
// from host memory to the GPU at the receiver. Per direction, each PCIe switch of a host has the
// PCIe rate, shared by the GPUs behind it, and the host has host memory / 2 (a staged byte crosses
// PCIe once and host memory twice), shared by all its GPUs: connections share them equally, and
// the copies of one connection run in order (StagingLanes). Each copy also pays a fixed copy
// latency. TCP adds its host-stack cost per message at each end (a fixed latency plus a per-byte
// CPU cost, as pure delay). Works on every backend: it wraps TransferBackend::begin and ::complete.
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "sim/backends/queue_pairs.hpp"
#include "sim/core/simulation.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim {

// The copies of one connection (sender GPU, receiver GPU, connection tag) form a lane, and only a
// lane's oldest copy moves, as NCCL's proxy copies a connection's slots one after another; copies
// of different connections interleave. One StagingLanes per host and direction: each PCIe switch
// (group) of the host has rate S, host memory rate H; a busy lane on switch g progresses at
// min(S / busy lanes on g, H / busy lanes on the host), the smaller of its two equal shares (exact
// when the binding resource is the same for every lane; capacity one lane cannot use is not handed
// to the others). One completion event pending at a time.
struct StagingLane {
  uint32_t src_gpu = 0;
  uint32_t dst_gpu = 0;
  uint32_t connection = 0;  // kNoConnection: the copy is a lane of its own (src_gpu = its id)
  bool operator==(const StagingLane&) const = default;
};

class StagingLanes final : public EventTarget {
 public:
  using Done = std::function<void(uint32_t job)>;
  StagingLanes(EventQueue& queue, uint32_t groups, double group_bytes_per_ps,
               double total_bytes_per_ps, Done done)
      : queue_(queue),
        group_bytes_per_ps_(group_bytes_per_ps),
        total_bytes_per_ps_(total_bytes_per_ps),
        busy_in_group_(groups, 0),
        done_(std::move(done)) {}
  // Adds a copy of `bytes` to `lane`, whose copies cross PCIe switch `group`.
  void add(uint32_t job, const StagingLane& lane, uint32_t group, int64_t bytes);
  void on_event(uint32_t kind, uint64_t arg) override;
  std::size_t busy_lanes() const { return lanes_.size(); }

 private:
  void advance();
  void reschedule();
  double rate_of(uint32_t group) const;  // bytes per ps of a busy lane on `group`
  struct Job {
    double remaining;
    uint32_t id;
  };
  struct Lane {
    StagingLane key;
    uint32_t group;
    std::deque<Job> jobs;  // front: the copy in progress
  };
  EventQueue& queue_;
  double group_bytes_per_ps_;
  double total_bytes_per_ps_;
  std::vector<uint32_t> busy_in_group_;
  Done done_;
  std::vector<Lane> lanes_;  // busy lanes only (a few per host: channels x peers)
  int64_t last_ps_ = 0;
  CancelToken token_;
};

class HostStaging final : public EventTarget {
 public:
  // `begin(id)` starts the network transfer once the sender's stage is done; `finish(id)` completes
  // it once the receiver's stage is done. `serialize_starts` (the flow backend: fluid sharing has
  // no packets) starts the staged transfers of a NIC at least one packet apart (see nic_free_).
  HostStaging(Simulation& sim, const net::NetworkSpec& spec, std::function<void(uint32_t)> begin,
              std::function<void(uint32_t)> finish, bool serialize_starts = false);
  // The copies go through the stages of the sender's and the receiver's PCIe switches, in the lane
  // of (src_gpu, dst_gpu, connection); kNoConnection: a lane of the message's own.
  void send(uint32_t id, uint32_t src_gpu, uint32_t dst_gpu, uint32_t connection, int64_t bytes);
  // Returns true (and takes over) when the message still has its receive stage to run.
  bool receive(uint32_t id, uint32_t src_gpu, uint32_t dst_gpu, uint32_t connection, int64_t bytes);
  // The PCIe switch of its host a GPU's copies go through.
  uint32_t switch_of(uint32_t gpu) const;
  uint32_t switches_per_host() const { return switches_per_host_; }
  void on_event(uint32_t kind, uint64_t arg) override;
  // Fixed delay per message and end: copy latency, plus TCP's stack latency and per-byte CPU cost.
  Time fixed_delay(int64_t bytes) const;

 private:
  enum Kind : uint32_t { kSendReady = 0, kReceiveCopy = 1 };
  // The sender's copy of `id` is done: its network transfer starts after the fixed delay.
  void send_ready(uint32_t id);
  Simulation& sim_;
  const net::NetworkSpec& spec_;
  std::function<void(uint32_t)> begin_;
  std::function<void(uint32_t)> finish_;
  static StagingLane lane_of(uint32_t id, uint32_t src_gpu, uint32_t dst_gpu, uint32_t connection);
  uint32_t switches_per_host_ = 1;
  std::vector<StagingLanes> tx_;   // per host
  std::vector<StagingLanes> rx_;   // per host
  std::vector<uint8_t> received_;  // per transfer id: 1 once its receive stage has started
  std::vector<int64_t> bytes_;     // per transfer id, for the receive copy
  std::vector<StagingLane> lane_;  // per transfer id: its lane at the receiver
  std::vector<uint32_t> gpu_;      // per transfer id: the receiving GPU
  std::vector<uint32_t> src_nic_;  // per transfer id: the sending GPU's NIC
  // With serialize_starts: per NIC node, one packet's time on its link (mtu + header), and the
  // earliest instant its next staged transfer may start. A NIC sends one packet at a time, so of
  // the transfers whose copies finish together (the copies share PCIe, one lane per channel), the
  // packet model's round robin puts the channels' first packets out one after another and their
  // last packets too: their next copies start staggered, and the copies of one channel overlap
  // another's network time. Fluid sharing alone would run them in lockstep for the whole
  // collective (equal sizes, equal rates), so that every channel copies while the NIC idles.
  std::vector<Time> packet_time_;
  std::vector<Time> nic_free_;
};

}  // namespace syncsim
