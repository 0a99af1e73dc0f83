#pragma once
// How a packet-level run splits the fabric for windowed execution (partition_windows.hpp): every
// node gets a partition, fixed by the fabric alone (never by the thread count), so the order of
// simultaneous events, and with it every result, is the same however many threads run the parts.
//
// The rule: leaf switches in NodeId order, cut into at most `max_partitions` runs of consecutive
// leaves (leaf j of L goes to partition j * P / L); a host's nodes (NICs, NVLink ports, NVSwitch)
// go with the leaf its first NIC hangs off; any other switch (spine, core) goes with its
// neighbours when they all share one partition (a fat tree's aggregation switches, when a pod is
// one partition), else round robin over the partitions. The lookahead is the smallest delay a
// packet can take on a link between two partitions (its propagation delay, less what normal link
// jitter can take off it: ImpairmentParams::least_delay): no event in one partition can touch
// another sooner.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::net {

struct FabricPartition {
  uint32_t count = 1;
  std::vector<uint32_t> of_node;  // by NodeId
  Time lookahead = Time::max();   // the smallest delay of a link between two partitions
  std::string why_one;            // with count 1: why the fabric is not split
};

// The cap on partitions: enough for a 64-core machine, few enough that a window's bookkeeping per
// partition stays small next to its events on one thread.
inline constexpr uint32_t kMaxFabricPartitions = 64;

// One partition (count 1, lookahead Time::max()) when the fabric has fewer than two leaves or a
// link between partitions has no delay.
FabricPartition partition_fabric(const NetworkSpec& spec,
                                 uint32_t max_partitions = kMaxFabricPartitions);

}  // namespace syncsim::net
