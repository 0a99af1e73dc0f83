#pragma once
// Queue pairs as NCCL keeps them: a connection (channel x peer, and the QP within it) owns its
// RDMA queue pair for the whole job, so every message on it leaves with the same UDP source port
// (the ECMP hash sees the same flow: a ring edge that hashes onto a shared spine link stays there)
// and, at packet fidelity, finds the DCQCN state its previous messages left. A transfer without a
// connection gets a queue pair of its own, numbered by its transfer id as before (traffic
// messages, point-to-point sends that name none).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include "sim/net/network_spec.hpp"

namespace syncsim {

// TransferRequest::connection for a transfer on a queue pair of its own.
inline constexpr uint32_t kNoConnection = UINT32_MAX;

struct QueuePair {
  uint32_t number = 0;      // feeds the ECMP hash (the UDP source port)
  bool persistent = false;  // shared by every transfer of its connection
};

class QueuePairTable {
 public:
  // The queue pair of a transfer from NIC `src` to NIC `dst` at `priority` on `connection` (a
  // caller's tag: kNoConnection for a QP of its own, numbered `transfer`).
  QueuePair resolve(uint32_t transfer, net::NodeId src, net::NodeId dst, uint8_t priority,
                    uint32_t connection);
  std::size_t persistent_count() const { return numbers_.size(); }

 private:
  // (NICs and priority packed, connection tag): the tag carries the communicator in its high bits
  // (CollectiveRunOptions::communicator), so it keeps all 32.
  struct Key {
    uint64_t ends = 0;
    uint32_t connection = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<uint64_t>{}(k.ends ^
                                   (static_cast<uint64_t>(k.connection) * 0x9E3779B97F4A7C15ULL));
    }
  };
  // Persistent numbers are 2^31 + a dense index, apart from transfer ids (which stay below 2^31
  // in any run this simulator can hold).
  std::unordered_map<Key, uint32_t, KeyHash> numbers_;
};

}  // namespace syncsim
