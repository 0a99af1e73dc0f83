#include "sim/backends/queue_pairs.hpp"

#include "sim/core/check.hpp"

namespace syncsim {

namespace {

std::size_t slot_hash(uint64_t ends, uint32_t connection) {
  // splitmix64's finalizer: NIC numbers and connection tags are small and dense, so their bits
  // must be spread before masking.
  uint64_t x = ends ^ (static_cast<uint64_t>(connection) * 0x9E3779B97F4A7C15ULL);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<std::size_t>(x ^ (x >> 31));
}

}  // namespace

QueuePair QueuePairTable::resolve(uint32_t transfer, net::NodeId src, net::NodeId dst,
                                  uint8_t priority, uint32_t connection) {
  if (connection == kNoConnection) return {transfer, false};
  SIM_CHECK(src < (1U << 24) && dst < (1U << 24), "queue-pair key out of range");
  const uint64_t ends =
      (static_cast<uint64_t>(src) << 32) | (static_cast<uint64_t>(dst) << 8) | priority;
  if (2 * (count_ + 1) > slots_.size()) grow();
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = slot_hash(ends, connection) & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.number == 0) {
      // Persistent numbers are 2^31 + a dense index, apart from transfer ids (which stay below
      // 2^31 in any run this simulator can hold).
      slot = Slot{ends, connection, (1U << 31) | static_cast<uint32_t>(count_++)};
      return {slot.number, true};
    }
    if (slot.ends == ends && slot.connection == connection) return {slot.number, true};
  }
}

void QueuePairTable::grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(old.empty() ? 64 : 2 * old.size(), Slot{});
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& slot : old) {
    if (slot.number == 0) continue;
    std::size_t i = slot_hash(slot.ends, slot.connection) & mask;
    while (slots_[i].number != 0) i = (i + 1) & mask;
    slots_[i] = slot;
  }
}

}  // namespace syncsim
