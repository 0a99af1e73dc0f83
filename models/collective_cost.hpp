#pragma once
// NCCL's own performance model (src/graph/tuning.cc; facts in references §1): predicted time of
// one collective per (algorithm, protocol) = latency + bytes / algorithm bandwidth, and the
// `auto` choice NCCL makes (the minimum). Pure functions: no simulation.
//
// Covered: Ring (AllReduce, AllGather, ReduceScatter; Broadcast/Reduce with nsteps = nRanks) and
// Tree (AllReduce) with LL, LL128 and Simple on Hopper-class GPUs (SM90 tables), Intel or AMD
// hosts. Not covered: NVLS, CollNet, PAT, the tree-pattern 0.85 factor, per-op pipelining
// (numPipeOps = 1), and NCCL's topology search (per-channel bandwidths are inputs).
#include <cstdint>
#include <string_view>

#include "models/collective_plan.hpp"

namespace syncsim::models {

enum class NcclProtocol : uint8_t { LL, LL128, Simple };
std::string_view to_string(NcclProtocol p);

struct NcclCostInputs {
  CollectiveOp op = CollectiveOp::AllReduce;
  uint32_t nodes = 1;           // nNodes
  uint32_t gpus_per_node = 8;   // ppn; nRanks = nodes * ppn
  uint32_t channels = 1;        // nChannels of the graph
  double bw_intra = 20.6;       // per-channel GB/s inside a node (SM90 NVLink link: 20.6)
  double bw_inter = 12.0;       // per-channel GB/s across nodes (NCCL's NET_BW for 100 Gb/s: 12.0)
  double net_overhead_us = 1.0; // getNetOverhead: 1.0 on Intel, 2.0 on AMD
  double latency_inter_us = 0;  // net plugin latency (0 for the built-in IB and socket transports)
  bool amd_cpu = false;         // llMaxBws row for nNodes > 1
};

// Predicted time in microseconds, or a negative value when NCCL would not use that pair (Tree for
// anything but AllReduce here).
double nccl_predicted_time_us(CollectiveAlgo algo, NcclProtocol proto, const NcclCostInputs& in,
                              int64_t bytes);

struct NcclChoice {
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  NcclProtocol proto = NcclProtocol::Simple;
  double time_us = 0;
};
// NCCL's `auto`: the (Ring|Tree, LL|LL128|Simple) pair with the smallest predicted time.
NcclChoice nccl_choose(const NcclCostInputs& in, int64_t bytes);

}  // namespace syncsim::models
