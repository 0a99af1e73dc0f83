#pragma once
// Queue pairs as NCCL keeps them: a connection (channel x peer, and the QP within it) owns its
// RDMA queue pair for the whole job, so every message on it leaves with the same UDP source port
// (the ECMP hash sees the same flow: a ring edge that hashes onto a shared spine link stays there)
// and, at packet fidelity, finds the DCQCN state its previous messages left. A transfer without a
// connection gets a queue pair of its own, numbered by its transfer id as before (traffic
// messages, point-to-point sends that name none).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/net/network_spec.hpp"

namespace syncsim {

// TransferRequest::connection for a transfer on a queue pair of its own.
inline constexpr uint32_t kNoConnection = UINT32_MAX;

struct QueuePair {
  uint32_t number = 0;      // feeds the ECMP hash (the UDP source port)
  bool persistent = false;  // shared by every transfer of its connection
};

// A persistent queue pair's number is 2^31 + a dense index (0, 1, ... in the order its table
// first resolved them): the index, for per-QP state kept in an array.
inline uint32_t persistent_index(uint32_t number) { return number & ~(1U << 31); }

class QueuePairTable {
 public:
  // The queue pair of a transfer from NIC `src` to NIC `dst` at `priority` on `connection` (a
  // caller's tag: kNoConnection for a QP of its own, numbered `transfer`).
  QueuePair resolve(uint32_t transfer, net::NodeId src, net::NodeId dst, uint8_t priority,
                    uint32_t connection);
  std::size_t persistent_count() const { return count_; }

 private:
  // (NICs and priority packed, connection tag): the tag carries the communicator in its high bits
  // (CollectiveRunOptions::communicator), so it keeps all 32.
  struct Slot {
    uint64_t ends = 0;
    uint32_t connection = 0;
    uint32_t number = 0;  // 0: empty (persistent numbers have bit 31 set)
  };
  void grow();
  // Open addressing with linear probing in a power-of-two table, at most half full: every
  // collective transfer looks its connection up, and std::unordered_map's prime-modulo division
  // and node chasing cost 12% of a 1024-rank step's bucket timing (perf).
  std::vector<Slot> slots_;
  std::size_t count_ = 0;
};

}  // namespace syncsim
