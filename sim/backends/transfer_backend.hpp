#pragma once
// The transfer interface every workload uses: "move B bytes from GPU a to GPU b at priority p and call
// back when they are delivered". Backends differ in fidelity, not in interface: collectives and the
// step model run unchanged on packet, analytic and (later) flow-level networks.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/backends/fidelity.hpp"
#include "sim/core/huge_pages.hpp"
#include "sim/backends/host_staging.hpp"
#include "sim/core/simulation.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim {

using TransferId = uint32_t;

struct TransferRequest {
  uint32_t src_gpu = 0;
  uint32_t dst_gpu = 0;
  Bytes size{0};
  uint8_t priority = 0;
};

struct TransferRecord {
  TransferRequest request;
  Time start = Time::zero();
  Time finish = Time::max();
  bool done = false;
};

using TransferCallback = std::function<void(TransferId, const TransferRecord&)>;

// Network-wide counters in one shape for every backend. Fields a backend cannot observe stay zero
// and are documented as such by that backend.
struct BackendCounters {
  uint64_t packet_hops = 0;
  int64_t bytes_injected = 0;
  int64_t bytes_delivered = 0;
  int64_t bytes_dropped = 0;
  int64_t max_queue_bytes = 0;
};

class TransferBackend {
 public:
  TransferBackend(Simulation& sim, const net::NetworkSpec& spec) : sim_(sim), spec_(spec) {}
  virtual ~TransferBackend() = default;
  TransferBackend(const TransferBackend&) = delete;
  TransferBackend& operator=(const TransferBackend&) = delete;

  // Starts a transfer now. GPUs on the same host talk over NVLink, others through their NICs.
  // Throws std::invalid_argument for a transfer that cannot exist (unknown GPU, GPU to itself).
  TransferId start(const TransferRequest& request, TransferCallback on_done = {});

  virtual Fidelity fidelity() const = 0;
  virtual BackendCounters counters() const = 0;

  const std::vector<TransferRecord>& transfers() const { return records_; }
  // Capacity hint for callers that know how many more transfers they will start (a collective
  // plan of millions of steps): the record array is allocated once instead of regrown.
  void reserve_transfers(std::size_t more) {
    reserve_huge(records_, records_.size() + more);
    reserve_huge(slot_of_, records_.capacity());
  }
  Simulation& simulation() { return sim_; }
  const net::NetworkSpec& spec() const { return spec_; }

 protected:
  // Begins moving a transfer between two NICs; the backend must call complete(id) when delivered.
  virtual void begin(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) = 0;
  void complete(TransferId id);

 private:
  Simulation& sim_;
  const net::NetworkSpec& spec_;
  std::vector<TransferRecord> records_;
  // Callbacks of transfers in flight only: slot_of_[id] indexes callback_slots_, whose free
  // entries are reused (4 bytes per finished transfer instead of a std::function).
  std::vector<uint32_t> slot_of_;
  std::vector<TransferCallback> callback_slots_;
  std::vector<uint32_t> free_slots_;
  // No-GPUDirect transports (roce_host_staged, tcp): copies through host memory at both ends.
  std::unique_ptr<HostStaging> staging_;
  void begin_staged(TransferId id);
  void complete_now(TransferId id);
};

}  // namespace syncsim
