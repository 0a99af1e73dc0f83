#pragma once
// How many channels NCCL runs a collective on, and through which NICs, for a node shape: a model of
// NCCL's topology search (src/graph/search.cc ncclTopoCompute, ncclTopoDupChannels) and of the
// channel duplication when rings are connected (src/graph/connect.cc ncclTopoPostset), NCCL 2.30.7
// (NVIDIA/nccl@5067397).
//
// The search looks for `n` rings of per-channel bandwidth `s` (GB/s) from a per-architecture list
// of speeds, keeping the largest n x s the hardware carries:
//   - several nodes: every ring enters and leaves a node through one NIC, so a NIC carries
//     floor(path / s) rings, path = min(NIC speed / 8000 Mb/s per GB/s, the GPU-NIC PCIe link as
//     NCCL rates it: x16 Gen4 24, Gen5 48, Gen6 96 GB/s); a GPU forwards (g - 1) / g of the rings
//     over its NVLinks, which carry links x NCCL's per-link rate (models/gpu.hpp);
//   - one node: every ring passes through every GPU, so n x s <= the GPU's NVLink bandwidth.
// ncclTopoDupChannels then doubles the rings (halving s) when s >= 25 GB/s, except on Hopper and
// newer when s < 50 and n > 4; connecting the rings doubles the channels again (every ring runs
// as two channels), and Hopper-or-newer multi-node communicators with s > 45 double once more
// while fewer than 16. DGX H100 (8 x 400G): 8 rings of 48 GB/s, 16 channels, 2 per NIC; one DGX
// H100: 6 rings of 60 GB/s, doubled to 12 of 30, 24 channels (NCCL's INFO lines "16 coll channels"
// and "24 coll channels" on those machines).
//
// Simplified: the search's timeouts, PCI-switch sharing and cross-NIC rings are not modelled; the
// ring with the largest n x s wins (ties: the faster s, which the search tries first).
#include <cstdint>
#include <optional>

namespace syncsim::models {

// The node shape NCCL's search sees (ranks fill nodes of gpus_per_node GPUs in order).
struct NcclSystem {
  uint32_t nodes = 1;
  uint32_t gpus_per_node = 8;
  uint32_t nics_per_node = 8;
  double nic_GBps = 50.0;            // per NIC, NCCL's rate: Mb/s / 8000 (400G: 50)
  double pcie_GBps = 48.0;           // GPU-NIC PCIe path, NCCL's rate (Gen5 x16: 48)
  double nvlink_GBps = 370.8;        // per GPU and direction: links x NCCL's per-link rate
  uint32_t compute_capability = 90;  // selects the speed lists (80, 90, 100)
  bool nvls = false;                 // the NVSwitch reduces (NVLink SHARP; GpuSpec::nvswitch_sharp)
  // The fabric's switches reduce (InfiniBand SHARP, fabric.infiniband.sharp) and their trees fit
  // (sharp_aggregation.hpp): NCCL's CollNet is enabled (NCCL_COLLNET_ENABLE=1 with the SHARP
  // plugin).
  bool sharp = false;
};

struct NcclChannels {
  uint32_t search_channels = 1;      // the ring graph's nChannels (after ncclTopoDupChannels)
  double search_bw_GBps = 0;         // per search channel: graph->bwIntra == bwInter
  uint32_t channels = 1;             // comm->nChannels: the channels a collective runs on
  uint32_t default_channels = 1;     // what NCCL picks unrequested (== channels unless requested)
  uint32_t compute_capability = 90;  // NcclSystem's: selects NCCL's per-architecture tables
  uint32_t nics_used = 0;            // NICs per node the channels leave through (0 on one node)
  bool requested = false;            // channels were given (collective.channels / --channels)
  // The NVLS graph (src/graph/search.cc ncclTopoSearchTryNvls), for NVLS on one node and NVLS-tree
  // across nodes: heads = min(NCCL_MAX_NVLS_ARITY 32, GPUs, and across nodes NICs: each head
  // leaves through a NIC of its own), each pulling its share of every channel; per-channel speed:
  // the fastest of the intra (one node) or inter list with (heads + 1) x speed <= the GPU's NVLink
  // (a head carries its own channel twice) and, across nodes, speed <= the NIC path. 0 heads: no
  // NVLS (no NVLink SHARP, one GPU, or fewer than 2 heads).
  uint32_t nvls_heads = 0;
  double nvls_bw_GBps = 0;
  // NCCL's nvlsEfficiency (tuning.cc: Hopper 0.85, Blackwell 0.74).
  double nvls_efficiency = 0;
  // The CTAs NVLS runs on (src/transport/nvls.cc NVLS_NCHANNELS_SM90 16; SM100 24 on one NVLink
  // node, across nodes 24 or 32 by NIC speed, ncclNvlsTreeSm100Tuning).
  uint32_t nvls_channels = 0;
  // Share of the NVLink port's rate the multimem loads and stores move: chosen so that the NVLS
  // plan's link-bound bus bandwidth (per GPU S (1 + 1/heads) each way, collective_plan_nvls.cpp)
  // equals NCCL's own NVLS bus bandwidth, heads x speed x nvlsEfficiency x (heads - 1) / heads x 2
  // (tuning.cc), at most 1. It stands for what NCCL's constants measured (multimem round trips,
  // the CTAs' reach), not for a mechanism of its own: DGX H100 0.83, GB200 NVL72 0.66.
  double nvls_link_efficiency = 1.0;
  // Across nodes, NVLS-tree's per-channel cap (tuning.cc perChMaxNVLSTreeBws: Hopper 57.7 on 2
  // nodes, 45.5 from 4; Blackwell 96, 80); 0 on one node.
  double nvls_tree_cap_GBps = 0;
  // CollNet (NcclSystem::sharp, two or more nodes): the Direct graph's heads, one per NIC, at most
  // NCCL_MAX_DIRECT_ARITY + 1 = 8 and the GPUs (search.cc: "COLLNET_DIRECT search must have
  // ngpus heads at most"), and each head's network rate (its NIC path, the graph's bwInter). 0
  // heads: no CollNet.
  uint32_t collnet_heads = 0;
  double collnet_nic_GBps = 0;
  double collnet_nvlink_GBps = 0;  // NcclSystem::nvlink_GBps (the CollNet NVLink cap)
};

// NCCL's channels for `system`; `requested` (NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS = N) replaces
// the channel count, not the search (NCCL's tuning still sees the search's graph). Throws
// std::invalid_argument for an impossible shape (no GPU, a multi-node system without NICs).
NcclChannels nccl_channels(const NcclSystem& system, std::optional<uint32_t> requested);

// What one channel's CTA copies per second (GB/s, payload, each direction) on a GPU of
// `compute_capability`: NCCL's measured per-channel maximum of its Simple tree all_reduce inside a
// node (src/graph/tuning.cc perChMaxTreeBws, N1 column: Volta 26.5, Ampere 24.0, Hopper 38.7,
// Blackwell 70.0), the fastest NCCL's copy loop moves a channel's data on that GPU. It is why a
// few channels cannot fill a GPU's NVLinks (NCCL launches about two CTAs per NVLink to saturate
// them, NVIDIA/nccl#1703); with NCCL's own channel counts the links bind first (one DGX H100: 24
// channels x 38.7 GB/s against 370.8 GB/s of NVLink).
double nccl_channel_copy_GBps(uint32_t compute_capability);

// NCCL's rate of a PCIe x16 link of `generation` (src/graph/topo.cc: width x per-lane rate / 80,
// Gen3 12 GB/s, doubling per generation).
double nccl_pcie_x16_GBps(uint32_t generation);

}  // namespace syncsim::models
