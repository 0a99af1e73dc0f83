#pragma once
// NCCL's own performance model (src/graph/tuning.cc; facts in references §1): predicted time of
// one collective per (algorithm, protocol) = latency + bytes / algorithm bandwidth, and the
// `auto` choice NCCL makes (the minimum). Pure functions: no simulation.
//
// Covered: Ring (AllReduce, AllGather, ReduceScatter; Broadcast/Reduce with nsteps = nRanks) and
// Tree (AllReduce) with LL, LL128 and Simple on Hopper-class GPUs (SM90 tables), Intel or AMD
// hosts; NVLS (AllReduce, Simple) on one node, NVLS-tree across nodes; PAT (AllGather,
// ReduceScatter, Simple) at one GPU per node; CollNet Direct and Chain (AllReduce, Simple). Not
// covered: NVLS for reduce-scatter / all-gather, NVLS with SHARP across nodes, the tree-pattern
// 0.85 factor, per-op pipelining (numPipeOps = 1), and NCCL's topology search (per-channel
// bandwidths are inputs; PAT uses the ring graph's where NCCL reads the tree's).
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "models/collective_plan.hpp"

namespace syncsim::models {

enum class NcclProtocol : uint8_t { LL, LL128, Simple };
std::string_view to_string(NcclProtocol p);
// "LL", "LL128" or "Simple" (any case); throws std::invalid_argument otherwise.
NcclProtocol parse_nccl_protocol(std::string_view text);

// Latencies measured on a cluster in place of NCCL's tables (a calibration profile's `physical:`
// block, scenario/physical_parameters.hpp), for one protocol: the Ring row's base latency (once per
// collective) and its per-step NVLink and network latencies, us. 0 keeps NCCL's value. The other
// rows and algorithms of that protocol (Tree, NVLS, NVLS-tree, PAT) scale their own entry by the
// same ratio, so a fit on whatever NCCL ran carries over to what it runs elsewhere. NCCL's choice
// of algorithm and protocol keeps reading its own tables, as the real library does.
struct MeasuredLatency {
  double base_us = 0;
  double nvlink_hop_us = 0;
  double net_hop_us = 0;
};

enum class LatencyKind : uint8_t { Base, NvlinkHop, NetHop };
// NCCL's Ring-row latency of `proto` (tuning.cc baseLatencies / hwLatencies NVLINK and NET rows),
// what MeasuredLatency replaces.
double nccl_ring_latency_us(NcclProtocol proto, LatencyKind kind);

// NCCL's knobs for simulated collectives (the scenario's `collective:` section), with NCCL's
// defaults. Buffer sizes are per channel and connection, in wire bytes; NCCL_STEPS slots each.
struct CollectiveConfig {
  std::optional<CollectiveAlgo> algorithm;  // nullopt: auto (NCCL's cost model, per size)
  std::optional<NcclProtocol> protocol;     // nullopt: auto
  // NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS; nullopt: auto, NCCL's own count for the node shape
  // (models/nccl_channels.hpp: 16 on DGX H100 nodes with 8 NICs, 24 inside one).
  std::optional<uint32_t> channels;
  int64_t buffer_size = int64_t{4} << 20;       // NCCL_BUFFSIZE (Simple): 4 MiB
  int64_t ll_buffer_size = int64_t{512} << 10;  // DEFAULT_LL_BUFFSIZE: 8 lines x 512 thr x 8 x 16 B
  int64_t ll128_buffer_size = 4'915'200;        // DEFAULT_LL128_BUFFSIZE: 120 x 640 thr x 8 x 8 B
  uint32_t steps = 8;                           // NCCL_STEPS
  // NCCL_IB_QPS_PER_CONNECTION (default 1): the queue pairs each connection keeps for the run
  // (CollectiveRunOptions::qps_per_connection); 0: a new one per transfer.
  uint32_t qps_per_connection = 1;
  // What one channel's CTA copies per second, bytes of payload (CollectiveRunOptions'
  // channel_copy_bytes_per_s); 0: no such limit. A scenario's comes from its GPU preset
  // (nccl_channel_copy_GBps) unless collective.channel_copy_bandwidth gives it.
  double channel_copy_bytes_per_s = 0;
  // Measured latencies per protocol (index: LL, LL128, Simple); all 0: NCCL's tables.
  std::array<MeasuredLatency, 3> measured_latency{};
};

// How a protocol shapes a simulated collective (collective_runner.hpp runs it):
// - wire_factor: wire bytes per payload byte. LL sends 4 B of data + 4 B of flag per 8 B (2.0),
//   LL128 120 B of data per 128 B line (128/120), Simple 1.0.
// - launch_us: NCCL's base latency (§1.2), once per collective; step_intra_us / step_inter_us: the
//   hardware latency (§1.3, NVLINK / NET rows) before every transfer inside a host / across hosts.
//   Algorithms other than Tree use the Ring rows.
// - chunk_bytes: payload per transfer (the plan's pipelining unit: NCCL's slice, what the proxy
//   posts to the network at once). The buffer (payload capacity = buffer / wire_factor) has
//   `steps` slots; ring Simple moves steps/4 slots per transfer (ALLREDUCE_SLICESTEPS =
//   NCCL_STEPS/4: 1 MiB by default, two slices per 2 MiB chunk), tree Simple (enqueue.cc:
//   chunkSteps is the ring's only), LL and LL128 one slot per transfer (512 KiB for tree Simple).
//   pipeline_depth (steps / slots per transfer) is NCCL's number of slices in flight per
//   connection; `syncsim collective` builds its plans with it (PlanOptions::connection_depth), so
//   a connection keeps that many transfers in flight, sent in order (CollectiveRunner paces them).
struct ProtocolTiming {
  double wire_factor = 1.0;
  double launch_us = 0;
  double step_intra_us = 0;
  double step_inter_us = 0;
  int64_t chunk_bytes = 0;
  uint32_t pipeline_depth = 1;
};
ProtocolTiming protocol_timing(CollectiveAlgo algo, NcclProtocol proto, const CollectiveConfig& c);

// The transfer chunk NCCL uses for one collective of `bytes`: the protocol's chunk, except that
// tree LL128 halves it until the pipeline is deep enough for the tree (computeColl in NCCL's
// enqueue.cc, v2.12 to v2.18, quoted from the source, not from references.md):
//   nsteps = 1 + log2(nNodes) + 0.1 * ppn
//   while (bytes / (nChannels * chunk) < nsteps * 64 / ppn && chunk > 131072) chunk /= 2
//   while (bytes / (nChannels * chunk) < nsteps * 16 / ppn && chunk > 32768) chunk /= 2
// Without it a 64-node tree moves 2 MiB in two 560 KB chunks and its 12 levels do not pipeline.
// PAT (NCCL 2.30 enqueue.cc): halved while chunk x channels x 32 (all_gather; reduce_scatter 16)
// exceeds the size, down to 64 KiB.
int64_t nccl_chunk_bytes(CollectiveAlgo algo, NcclProtocol proto, int64_t protocol_chunk,
                         int64_t bytes, uint32_t channels, uint32_t nodes, uint32_t ranks,
                         CollectiveOp op = CollectiveOp::AllReduce);

// NCCL's NVLS and NVLS-tree chunk per head and round for an all_reduce of `bytes` on `channels`
// NVLS channels of `heads` heads over `nodes` nodes (NCCL 2.30 enqueue.cc calcCollChunking, the
// unregistered-buffer path). With concurrent = channels x heads and chunk starting at
// NCCL_NVLS_CHUNKSIZE (128 KiB):
//   NVLS:      64 KiB when bytes < 64 x concurrent x chunk, then 32 KiB when < 8 x ..., then
//              16 KiB when < 2 x ... (each test with the chunk as it stands);
//   NVLS-tree: chunk = min(128 KiB, NCCL_NVLSTREE_MAX_CHUNKSIZE: 64 KiB from 4 nodes), then 64 KiB
//              when bytes < 4 x concurrent x chunk, 32 KiB when < 1 x ....
// One DGX H100 (16 channels x 8 heads): 128 KiB from 1 GiB, 64 KiB from 64 MiB, 32 KiB from 8 MiB,
// 16 KiB below, so a 16 MiB all_reduce pipelines four rounds per channel instead of one.
int64_t nccl_nvls_chunk_bytes(bool tree, int64_t bytes, uint32_t channels, uint32_t heads,
                              uint32_t nodes);

// NCCL's CollNet chunk per head (Direct) or chain (Chain) for an all_reduce of `bytes` (NCCL 2.30
// enqueue.cc calcCollChunking). Direct starts at the Simple step (NCCL_BUFFSIZE / NCCL_STEPS =
// 512 KiB) and, with p = bytes / (channels x heads x chunk), halves it while p < 64 x depth above
// 128 KiB, then while p < 8 x depth above 64 KiB and above 32 KiB; Chain starts at min(256 KiB,
// the step) and halves while bytes / (channels x chunk) < 64 x depth above 128 KiB, < 8 x depth
// above 64 KiB, < depth above 32 KiB. depth: the connection's depth, taken as 1 for Direct (one
// hop to the network per head) and the chain's length (GPUs per host) for Chain.
int64_t nccl_collnet_chunk_bytes(bool direct, int64_t bytes, uint32_t channels, uint32_t heads,
                                 uint32_t gpus_per_host);

// PAT's per-rank latency (tuning.cc: "still a linear part"), us.
inline constexpr double kNcclPatPerRankUs = 2.8;

struct NcclCostInputs {
  CollectiveOp op = CollectiveOp::AllReduce;
  uint32_t nodes = 1;            // nNodes
  uint32_t gpus_per_node = 8;    // ppn; nRanks = nodes * ppn
  uint32_t channels = 1;         // nChannels of the graph
  double bw_intra = 20.6;        // per-channel GB/s inside a node (SM90 NVLink link: 20.6)
  double bw_inter = 12.0;        // per-channel GB/s across nodes (NCCL's NET_BW for 100 Gb/s: 12.0)
  double net_overhead_us = 1.0;  // getNetOverhead: 1.0 on Intel, 2.0 on AMD
  double latency_inter_us = 0;   // net plugin latency (0 for the built-in IB and socket transports)
  bool amd_cpu = false;          // llMaxBws row for nNodes > 1
  // The GPUs' compute capability: the row of NCCL's per-architecture caps (tuning.cc compCapIndex:
  // Volta below 80, Ampere 80, Hopper 90, Blackwell 100 and up).
  uint32_t compute_capability = 90;
  // The NVLS graph (NcclChannels::nvls_*): heads (its nChannels; 0 = no NVLS), per-channel GB/s
  // (bwIntra) and NCCL's nvlsEfficiency.
  uint32_t nvls_heads = 0;
  double nvls_bw = 0;
  double nvls_efficiency = 0;
  double nvls_tree_cap = 0;  // perChMaxNVLSTreeBws for the node count (NVLS-tree)
  // CollNet (NcclChannels::collnet_*): the Direct graph's heads (0: no CollNet) and each head's
  // NIC rate, GB/s.
  uint32_t collnet_heads = 0;
  double collnet_nic_bw = 0;
  double collnet_nvlink_bw = 0;  // per GPU and direction, GB/s (NCCL's NVLink rate); 0: no cap
};

// Predicted time in microseconds, or a negative value when NCCL would not use that pair (Tree for
// anything but AllReduce here; NVLS and NVLS-tree for anything but an AllReduce with Simple, or
// without an NVLS graph; NVLS on one node only, NVLS-tree on two or more). NVLS (tuning.cc): bus
// bandwidth heads x bwIntra x nvlsEfficiency x (heads - 1) / heads x 2, latency the NVLink row's
// 25 us and no base. NVLS-tree: per channel the least of that intra share, bwInter (doubled on 2
// nodes) and perChMaxNVLSTreeBws; latency 25 us + 2 log2(nodes) x the NET row's 20.9 us.
// CollNet Direct and Chain (all_reduce, Simple, two or more nodes, with CollNet heads): bus
// bandwidth per tuning.cc from the CollNet graphs, which NCCL's search builds with bwInter = the
// NIC path and raises bwIntra while it is below twice bwInter (search.cc), taken here as exactly
// 2 x bwInter. Direct: heads channels of bwIntra, divided by factor = ppn / heads less
// (factor - 1) / 2, x 0.85 on Hopper and newer; Chain: the ring graph's channels, bwIntra = twice
// their per-channel network rate. Algorithm bandwidth half of that; latency Direct 2 (min(1,
// ppn - 1) 3.7 + 0.4 (ppn - 1)) + NET 31 us, Chain 2 (ppn - 1) 2.8 + NET 30 us, each NET term with
// the plugin latency twice (Simple's flush). The algorithm bandwidth is capped at what the GPUs'
// NVLinks carry, NVLink x ppn / (2 (ppn - 1)) (a simplification of NCCL's search, which keeps only
// graphs the NVLinks carry).
double nccl_predicted_time_us(CollectiveAlgo algo, NcclProtocol proto, const NcclCostInputs& in,
                              int64_t bytes);

struct NcclChoice {
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  NcclProtocol proto = NcclProtocol::Simple;
  double time_us = 0;
};
// NCCL's `auto`: the (Ring|Tree|NVLS|NVLS-tree|PAT|CollNet Direct|CollNet Chain,
// LL|LL128|Simple) pair with the smallest predicted time.
NcclChoice nccl_choose(const NcclCostInputs& in, int64_t bytes);

}  // namespace syncsim::models
