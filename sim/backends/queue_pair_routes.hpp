#pragma once
// The route of each persistent queue pair (queue_pairs.hpp), kept for its next transfer. A queue
// pair's transfers carry one ECMP hash, so they take one route for as long as routing stays as it
// was: routing every chunk of a collective again was 9.5% of the instructions of a DDP step at
// flow level and about 8% of an analytic one's samples. A backend whose routing can change (faults)
// raises its epoch and routes kept under an older one are not found.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/net/routing.hpp"

namespace syncsim {

class QueuePairRoutes {
 public:
  // The route kept for the queue pair of persistent_index() `index` under `epoch` (> 0), or an
  // empty span.
  std::span<const net::PortId> find(uint32_t index, uint32_t epoch) const {
    if (index >= entries_.size() || entries_[index].epoch != epoch) return {};
    const Entry& e = entries_[index];
    return {arena_.data() + e.begin, e.hops};
  }
  // Keeps `route` for `index` under `epoch` (> 0), in place of what it kept before.
  void keep(uint32_t index, std::span<const net::PortId> route, uint32_t epoch) {
    if (index >= entries_.size())
      entries_.resize(std::max<std::size_t>(index + 1, 2 * entries_.size()));
    Entry& e = entries_[index];
    if (route.size() > e.capacity) {  // rare: a first route, or a longer one after a fault
      e.begin = static_cast<uint32_t>(arena_.size());
      e.capacity = static_cast<uint32_t>(route.size());
      arena_.resize(arena_.size() + route.size());
    }
    std::copy(route.begin(), route.end(), arena_.begin() + e.begin);
    e.hops = static_cast<uint32_t>(route.size());
    e.epoch = epoch;
  }

 private:
  struct Entry {
    uint32_t begin = 0;  // in arena_
    uint32_t hops = 0;
    uint32_t capacity = 0;  // the arena's room at `begin`
    uint32_t epoch = 0;     // 0: nothing kept
  };
  std::vector<Entry> entries_;  // by persistent index
  std::vector<net::PortId> arena_;
};

}  // namespace syncsim
