#include "sim/backends/queue_pairs.hpp"

#include "sim/core/check.hpp"

namespace syncsim {

QueuePair QueuePairTable::resolve(uint32_t transfer, net::NodeId src, net::NodeId dst,
                                  uint8_t priority, uint32_t connection) {
  if (connection == kNoConnection) return {transfer, false};
  SIM_CHECK(src < (1U << 24) && dst < (1U << 24), "queue-pair key out of range");
  const Key key{(static_cast<uint64_t>(src) << 32) | (static_cast<uint64_t>(dst) << 8) | priority,
                connection};
  const auto [it, added] =
      numbers_.try_emplace(key, (1U << 31) | static_cast<uint32_t>(numbers_.size()));
  (void)added;
  return {it->second, true};
}

}  // namespace syncsim
