#pragma once
// Transports without GPUDirect (roce_host_staged, tcp; sim/net/transport.hpp): an inter-host
// message is first copied from GPU to host memory at the sender, and after its last byte arrives,
// from host memory to the GPU at the receiver. Each host has one fair-share (processor-sharing)
// stage per direction, of rate min(PCIe, host memory / 2) (a staged byte crosses PCIe once and host
// memory twice), shared by the host's GPUs; each copy also pays a fixed copy latency. TCP adds its
// host-stack cost per message at each end (a fixed latency plus a per-byte CPU cost, as pure
// delay). Works on every backend: it wraps TransferBackend::begin and ::complete.
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/core/simulation.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim {

// n jobs share a rate R equally (each progresses at R / n); one completion event pending at a time.
class FairShareStage final : public EventTarget {
 public:
  using Done = std::function<void(uint32_t job)>;
  FairShareStage(EventQueue& queue, double bytes_per_ps, Done done)
      : queue_(queue), bytes_per_ps_(bytes_per_ps), done_(std::move(done)) {}
  void add(uint32_t job, int64_t bytes);
  void on_event(uint32_t kind, uint64_t arg) override;
  std::size_t active() const { return jobs_.size(); }

 private:
  void advance();
  void reschedule();
  struct Job {
    double remaining;
    uint32_t id;
  };
  EventQueue& queue_;
  double bytes_per_ps_;
  Done done_;
  std::vector<Job> jobs_;
  int64_t last_ps_ = 0;
  CancelToken token_;
};

class HostStaging final : public EventTarget {
 public:
  // `begin(id)` starts the network transfer once the sender's stage is done; `finish(id)` completes
  // it once the receiver's stage is done.
  HostStaging(Simulation& sim, const net::NetworkSpec& spec, std::function<void(uint32_t)> begin,
              std::function<void(uint32_t)> finish);
  void send(uint32_t id, uint32_t host, int64_t bytes);
  // Returns true (and takes over) when the message still has its receive stage to run.
  bool receive(uint32_t id, uint32_t host, int64_t bytes);
  void on_event(uint32_t kind, uint64_t arg) override;
  // Fixed delay per message and end: copy latency, plus TCP's stack latency and per-byte CPU cost.
  Time fixed_delay(int64_t bytes) const;

 private:
  enum Kind : uint32_t { kSendReady = 0, kReceiveCopy = 1 };
  Simulation& sim_;
  const net::NetworkSpec& spec_;
  std::function<void(uint32_t)> begin_;
  std::function<void(uint32_t)> finish_;
  std::vector<FairShareStage> tx_;  // per host
  std::vector<FairShareStage> rx_;  // per host
  std::vector<uint8_t> received_;   // per transfer id: 1 once its receive stage has started
  std::vector<int64_t> bytes_;      // per transfer id, for the receive copy
  std::vector<uint32_t> host_;      // per transfer id: receiving host
};

}  // namespace syncsim
