#include "models/collective_cost.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <stdexcept>
#include <string>

namespace syncsim::models {

namespace {

constexpr std::size_t kLL = 0, kLL128 = 1, kSimple = 2;

std::size_t index_of(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::LL:
      return kLL;
    case NcclProtocol::LL128:
      return kLL128;
    case NcclProtocol::Simple:
      return kSimple;
  }
  return kSimple;
}

// §1.2 baseLatencies, §1.3 hwLatencies (us), rows Tree, Ring; columns LL, LL128, Simple.
constexpr std::array<std::array<double, 3>, 2> kBase = {{{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}}};
constexpr std::array<std::array<double, 3>, 2> kNvlink = {{{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}}};
constexpr std::array<std::array<double, 3>, 2> kNet = {{{5.0, 8.5, 14.0}, {2.7, 4.0, 14.0}}};
constexpr std::size_t kTree = 0, kRing = 1;
// tuning.cc hwLatencies, NVLINK row, NVLS Simple; NVLS has no base latency.
constexpr double kNvlsLatencyUs = 25.0;
// hwLatencies, NET row, NVLS-tree Simple.
constexpr double kNvlsTreeNetLatencyUs = 20.9;
// tuning.cc hwLatencies[NET][NVLS][Simple]: NVLS across nodes (with CollNet), added once.
constexpr double kNvlsNetLatencyUs = 18.0;
// PAT (tuning.cc): base latency 8.0 us, a log term of the NET latency / 3.5 per step (the NET row
// is 14 us; with one GPU per node, as PAT requires, the Tree row's, also 14) and 2.8 us per rank;
// bus bandwidth 0.75 of the graph's.
constexpr double kPatBaseUs = 8.0;
constexpr double kPatNetLatencyUs = 14.0;
constexpr double kPatBandwidthFactor = 0.75;

// §1.1 treeCorrectionFactor, indexed by log2i(bytes >> 6).
constexpr std::array<std::array<double, 24>, 3> kTreeCorrection = {{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

// §1.5 per-channel caps (GB/s), rows by architecture (compCapIndex: Volta, Ampere, Hopper,
// Blackwell), columns by node count N1, N2, N4+ (NCCL 2.30 tuning.cc).
std::size_t node_column(uint32_t nodes) { return nodes == 1 ? 0 : nodes == 2 ? 1 : 2; }
std::size_t arch_row(const NcclCostInputs& in) {
  const uint32_t cc = in.compute_capability;
  return cc >= 100 ? 3 : cc >= 90 ? 2 : cc >= 80 ? 1 : 0;
}
using CapTable = std::array<std::array<double, 3>, 4>;
constexpr CapTable kLlMax = {
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}}};
double ll_max_bw(const NcclCostInputs& in) {
  // One node: the GPU's row; several: the CPU vendor's (Intel row 0, AMD row 1).
  const std::size_t row = in.nodes == 1 ? arch_row(in) : in.amd_cpu ? 1 : 0;
  return kLlMax[row][node_column(in.nodes)];
}
constexpr CapTable kPerChMaxRingLL128 = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
constexpr CapTable kPerChMaxTreeLL128 = {
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
constexpr CapTable kPerChMaxTree = {
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};

int log2i(int64_t v) {
  int r = -1;
  while (v > 0) {
    v >>= 1;
    ++r;
  }
  return r;
}

}  // namespace

std::string_view to_string(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::LL:
      return "LL";
    case NcclProtocol::LL128:
      return "LL128";
    case NcclProtocol::Simple:
      return "Simple";
  }
  return "?";
}

NcclProtocol parse_nccl_protocol(std::string_view text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "ll") return NcclProtocol::LL;
  if (lower == "ll128") return NcclProtocol::LL128;
  if (lower == "simple") return NcclProtocol::Simple;
  throw std::invalid_argument("unknown protocol \"" + std::string(text) + "\" (LL, LL128, Simple)");
}

double nccl_ring_latency_us(NcclProtocol proto, LatencyKind kind) {
  const std::size_t p = index_of(proto);
  switch (kind) {
    case LatencyKind::Base:
      return kBase[kRing][p];
    case LatencyKind::NvlinkHop:
      return kNvlink[kRing][p];
    case LatencyKind::NetHop:
      return kNet[kRing][p];
  }
  return 0;
}

ProtocolTiming protocol_timing(CollectiveAlgo algo, NcclProtocol proto, const CollectiveConfig& c) {
  if (c.steps < 1) throw std::invalid_argument("collective steps must be at least 1");
  const std::size_t p = index_of(proto);
  const std::size_t a = algo == CollectiveAlgo::Tree ? kTree : kRing;
  if ((is_nvls(algo) || is_collnet(algo) || algo == CollectiveAlgo::Pat) &&
      proto != NcclProtocol::Simple) {
    throw std::invalid_argument(std::string(to_string(algo)) +
                                " runs the Simple protocol only (NCCL has no LL/LL128 " +
                                std::string(to_string(algo)) + ")");
  }
  ProtocolTiming t;
  t.wire_factor = proto == NcclProtocol::LL      ? 2.0
                  : proto == NcclProtocol::LL128 ? 128.0 / 120.0
                                                 : 1.0;
  t.launch_us = kBase[a][p];
  t.step_intra_us = kNvlink[a][p];
  t.step_inter_us = kNet[a][p];
  if (is_nvls(algo)) {
    // NCCL charges NVLS its NVLink latency once per collective (tuning.cc); the plan's four hops
    // per round inside a host add none on top. NVLS-tree's network row applies per tree hop.
    t.launch_us = kNvlsLatencyUs;
    t.step_intra_us = 0;
    // NVLS across hosts: NCCL's NET latency once, split over a round's two network hops (up to
    // the SHARP tree, and its total back down).
    t.step_inter_us =
        algo == CollectiveAlgo::NvlsTree ? kNvlsTreeNetLatencyUs : kNvlsNetLatencyUs / 2.0;
  }
  if (algo == CollectiveAlgo::Pat) {
    // The log term per step; the per-rank term is added by nccl_setup, which knows the ranks.
    t.launch_us = kPatBaseUs;
    t.step_intra_us = kPatNetLatencyUs / 3.5;
    t.step_inter_us = kPatNetLatencyUs / 3.5;
  }
  // Measured latencies: the Ring row's entry replaced, every other entry scaled alike.
  const MeasuredLatency& measured = c.measured_latency[p];
  if (measured.base_us > 0) t.launch_us *= measured.base_us / kBase[kRing][p];
  if (measured.nvlink_hop_us > 0) t.step_intra_us *= measured.nvlink_hop_us / kNvlink[kRing][p];
  if (measured.net_hop_us > 0) t.step_inter_us *= measured.net_hop_us / kNet[kRing][p];
  const int64_t buffer = proto == NcclProtocol::LL      ? c.ll_buffer_size
                         : proto == NcclProtocol::LL128 ? c.ll128_buffer_size
                                                        : c.buffer_size;
  if (buffer <= 0) throw std::invalid_argument("collective buffer sizes must be positive");
  const auto capacity = static_cast<int64_t>(static_cast<double>(buffer) / t.wire_factor);
  const int64_t slot = std::max<int64_t>(1, capacity / c.steps);
  // A transfer is NCCL's slice: the unit a GPU signals to its proxy and the proxy posts to the
  // network (net.cc sendProxyProgress advances by sliceSteps per ncclNetIsend). Ring Simple moves
  // a chunk of ALLREDUCE_CHUNKSTEPS = NCCL_STEPS / 2 slots as two slices of ALLREDUCE_SLICESTEPS =
  // NCCL_STEPS / 4 (collectives.h; the same for all_gather and reduce_scatter), so 4 slices of a
  // connection are in flight; trees, PAT, LL and LL128 move one slot per slice (enqueue.cc:
  // chunkSteps is the ring's only).
  // NVLS keeps two rounds in flight per connection. NCCL's NVLS buffer holds NCCL_STEPS slots of
  // one NVLS chunk (nvls.cc ncclNvlsBufferSetup: buffSize = nvlsChunkSize x NCCL_STEPS), but the
  // NVLS plans issue a connection's rounds ahead of the heads' stores that the multicast of the
  // current round waits for, so a deeper window delays the critical path at the GPU's port: with
  // 8 rounds in flight one DGX H100 reads 441 instead of 459 GB/s at 1 GiB (measured 466), while a
  // GB200 NVL72 rack reads 539 instead of 759 GB/s at 512 MiB (measured 586). Until the plans
  // order a port's transfers as NVLS's warps do, the depth stays at the value the suite was
  // calibrated with (docs/collectives.md).
  const uint32_t slots_per_transfer =
      is_nvls(algo) ? std::max(1u, c.steps / 2)
      : proto == NcclProtocol::Simple && algo != CollectiveAlgo::Tree && algo != CollectiveAlgo::Pat
          ? std::max(1u, c.steps / 4)
          : 1u;
  t.chunk_bytes = slot * slots_per_transfer;
  t.pipeline_depth = std::max(1u, c.steps / slots_per_transfer);
  return t;
}

int64_t nccl_chunk_bytes(CollectiveAlgo algo, NcclProtocol proto, int64_t protocol_chunk,
                         int64_t bytes, uint32_t channels, uint32_t nodes, uint32_t ranks,
                         CollectiveOp op) {
  int64_t chunk = protocol_chunk;
  if (algo == CollectiveAlgo::Pat && channels > 0) {
    // `bytes` is the whole gathered array, as NCCL's nBytes.
    const int64_t factor = op == CollectiveOp::ReduceScatter ? 16 : 32;
    while (chunk * channels * factor > bytes && chunk > 65536) chunk /= 2;
    return chunk;
  }
  if (algo != CollectiveAlgo::Tree || proto != NcclProtocol::LL128 || nodes == 0 || channels == 0) {
    return chunk;
  }
  const double ppn = static_cast<double>(ranks) / nodes;
  uint32_t log2_nodes = 0;
  while ((2u << log2_nodes) <= nodes) ++log2_nodes;
  const double nsteps = 1.0 + log2_nodes + 0.1 * ppn;
  // Whole chunks per channel, in integers as NCCL counts them.
  auto pieces = [&] {
    const int64_t whole_chunks = bytes / (int64_t{channels} * chunk);
    return static_cast<double>(whole_chunks);
  };
  while (pieces() < nsteps * 64 / ppn && chunk > 131072) chunk /= 2;
  while (pieces() < nsteps * 16 / ppn && chunk > 32768) chunk /= 2;
  return chunk;
}

int64_t nccl_nvls_chunk_bytes(bool tree, int64_t bytes, uint32_t channels, uint32_t heads,
                              uint32_t nodes) {
  constexpr int64_t kKiB = 1024;
  int64_t chunk = 128 * kKiB;  // NCCL_NVLS_CHUNKSIZE
  const int64_t concurrent = int64_t{std::max(1u, channels)} * std::max(1u, heads);
  auto below = [&](int64_t times) { return bytes < times * concurrent * chunk; };
  if (!tree) {
    if (below(64) && chunk > 64 * kKiB) chunk = 64 * kKiB;
    if (below(8) && chunk > 32 * kKiB) chunk = 32 * kKiB;
    if (below(2) && chunk > 16 * kKiB) chunk = 16 * kKiB;
    return chunk;
  }
  if (nodes >= 4) chunk = 64 * kKiB;  // NCCL_NVLSTREE_MAX_CHUNKSIZE's default from 4 nodes
  if (below(4) && chunk > 64 * kKiB) chunk = 64 * kKiB;
  if (below(1) && chunk > 32 * kKiB) chunk = 32 * kKiB;
  return chunk;
}

int64_t nccl_collnet_chunk_bytes(bool direct, int64_t bytes, uint32_t channels, uint32_t heads,
                                 uint32_t gpus_per_host) {
  constexpr int64_t kKiB = 1024;
  const int64_t ways = int64_t{std::max(1u, channels)} * (direct ? std::max(1u, heads) : 1u);
  const int64_t depth = direct ? 1 : std::max(1u, gpus_per_host);
  int64_t chunk = direct ? 512 * kKiB : 256 * kKiB;
  auto per = [&] { return bytes / (ways * chunk); };
  while (per() < 64 * depth && chunk > 128 * kKiB) chunk /= 2;
  while (per() < 8 * depth && chunk > 64 * kKiB) chunk /= 2;
  while (per() < (direct ? 8 : 1) * depth && chunk > 32 * kKiB) chunk /= 2;
  return chunk;
}

namespace {

double nvls_predicted_time_us(bool tree, NcclProtocol proto, const NcclCostInputs& in,
                              int64_t bytes) {
  const bool shards = in.op == CollectiveOp::ReduceScatter || in.op == CollectiveOp::AllGather;
  // NVLS across nodes needs CollNet (SHARP) between them: tuning.cc disables "Collnet+NVLS if
  // collnet is not supported"; AllGather / ReduceScatter there also need a head (NIC) for every
  // local rank ("AllGather/ReduceScatter requires 1:1 GPU:NIC") and the SHARP plugin's
  // iallgather / ireducescatter, which SHARP-capable fabrics here have.
  const bool across = !tree && in.nodes > 1;
  if (proto != NcclProtocol::Simple || (in.op != CollectiveOp::AllReduce && !(shards && !tree)) ||
      (tree && in.nodes < 2) ||
      (across && (in.collnet_heads == 0 || (shards && in.collnet_heads < in.gpus_per_node))) ||
      in.nvls_heads < 2 || in.nvls_bw <= 0) {
    return -1.0;
  }
  const double heads = in.nvls_heads;
  const double nranks = static_cast<double>(in.nodes) * in.gpus_per_node;
  if (shards) {
    // tuning.cc: the per-channel NVLS bandwidth x (ppn - 1) / ppn instead of AllReduce's x 2, not
    // converted to a bus bandwidth (non-ring AllGather / ReduceScatter); across nodes at most the
    // channel's network bandwidth, NVLS's NET latency added once.
    const double ppn = in.gpus_per_node;
    double per_channel =
        in.nvls_bw * in.nvls_efficiency * (heads - 1.0) / heads * (ppn - 1.0) / ppn;
    double lat = kNvlsLatencyUs;
    if (across) {
      per_channel = std::min(per_channel, in.nvls_bw);
      lat += kNvlsNetLatencyUs + 2.0 * in.latency_inter_us;  // Simple's flush
    }
    return lat + static_cast<double>(bytes) / (1000.0 * heads * per_channel);
  }
  double per_channel = in.nvls_bw * in.nvls_efficiency * (heads - 1.0) / heads * 2.0;
  double lat = kNvlsLatencyUs;
  if (across) {
    // tuning.cc: min(intraBw, interBw) per channel, NVLS's NET latency (18 us) added once.
    per_channel = std::min(per_channel, in.nvls_bw);
    lat += kNvlsNetLatencyUs + 2.0 * in.latency_inter_us;  // Simple's flush
  }
  if (tree) {
    const double inter = in.nvls_bw * (in.nodes <= 2 ? 2.0 : 1.0);
    per_channel = std::min({per_channel, inter, in.nvls_tree_cap});
    double net = kNvlsTreeNetLatencyUs + 2.0 * in.latency_inter_us;  // Simple's flush
    lat += 2.0 * log2i(in.nodes) * net;
  }
  const double alg = heads * per_channel * nranks / (2.0 * (nranks - 1.0));
  return lat + static_cast<double>(bytes) / (1000.0 * alg);
}

}  // namespace

namespace {

// tuning.cc hwLatencies for CollNet Direct / Chain, Simple: NVLINK 3.7 / 2.8, NET 31 / 30 us.
constexpr double kCollnetDirectNvlinkUs = 3.7;
constexpr double kCollnetChainNvlinkUs = 2.8;
constexpr double kCollnetDirectNetUs = 31.0;
constexpr double kCollnetChainNetUs = 30.0;
// "Add 0.4 us arity serialization latency" per local rank (tuning.cc, CollNet Direct).
constexpr double kCollnetArityUs = 0.4;

double collnet_predicted_time_us(bool direct, NcclProtocol proto, const NcclCostInputs& in,
                                 int64_t bytes) {
  const bool shards = in.op == CollectiveOp::ReduceScatter || in.op == CollectiveOp::AllGather;
  if (proto != NcclProtocol::Simple || (in.op != CollectiveOp::AllReduce && !shards) ||
      in.nodes < 2 || in.collnet_heads == 0 || in.collnet_nic_bw <= 0 ||
      (direct && in.gpus_per_node < 2)) {
    return -1.0;
  }
  const double ppn = in.gpus_per_node;
  const double net = (direct ? kCollnetDirectNetUs : kCollnetChainNetUs) +
                     2.0 * in.latency_inter_us;  // Simple's flush
  const double lat = direct ? 2.0 * (std::min(1.0, ppn - 1.0) * kCollnetDirectNvlinkUs +
                                     (ppn - 1.0) * kCollnetArityUs) +
                                  net
                            : 2.0 * (ppn - 1.0) * kCollnetChainNvlinkUs + net;
  if (shards) {
    // Direct only, with a head (NIC) for every local rank ("AllGather/ReduceScatter requires 1:1
    // GPU:NIC"). tuning.cc: ppn x min(bwIntra, 0.9 bwInter), already an algorithm bandwidth over
    // the whole gathered buffer (no bus conversion for non-ring AG/RS); the CollNet graph's
    // bwIntra is twice its bwInter, so the NIC term binds. Each GPU also moves (g - 1) / g of the
    // buffer over NVLink (the scatter to, or the copies from, the other heads).
    if (!direct || in.collnet_heads < in.gpus_per_node) return -1.0;
    double alg = ppn * 0.9 * in.collnet_nic_bw;
    if (in.collnet_nvlink_bw > 0) alg = std::min(alg, in.collnet_nvlink_bw * ppn / (ppn - 1.0));
    return lat + static_cast<double>(bytes) / (1000.0 * alg);
  }
  double bus = 0;
  if (direct) {
    const double heads = in.collnet_heads;
    bus = heads * 2.0 * in.collnet_nic_bw;
    double factor = ppn / heads;
    factor -= (factor - 1.0) / 2.0;
    bus /= factor;
    if (in.compute_capability >= 90) bus *= 0.85;
  } else {
    bus = in.channels * 2.0 * in.bw_inter;
  }
  // NCCL's search keeps only graphs its NVLinks carry; both CollNet shapes move 2 (g - 1) / g of
  // the buffer through every GPU's NVLink each way (Direct: the scatter to the heads and the
  // heads' copies back; Chain: up and down the chain), which caps the algorithm bandwidth at the
  // NVLink rate x g / (2 (g - 1)).
  double alg = 0.5 * bus;
  if (ppn > 1 && in.collnet_nvlink_bw > 0) {
    alg = std::min(alg, in.collnet_nvlink_bw * ppn / (2.0 * (ppn - 1.0)));
  }
  return lat + static_cast<double>(bytes) / (1000.0 * alg);
}

}  // namespace

double pat_predicted_time_us(NcclProtocol proto, const NcclCostInputs& in, int64_t bytes) {
  const bool ag_rs = in.op == CollectiveOp::AllGather || in.op == CollectiveOp::ReduceScatter;
  if (proto != NcclProtocol::Simple || !ag_rs || in.gpus_per_node != 1 || in.nodes < 2) {
    return -1.0;
  }
  const double bw = in.nodes <= 2 ? in.bw_intra : in.bw_inter;
  // Not converted to an algorithm bandwidth: tuning.cc skips that for non-ring AG / RS.
  const double alg = in.channels * bw * kPatBandwidthFactor;
  const double inter = kPatNetLatencyUs + 2.0 * in.latency_inter_us;  // Simple's flush
  const double lat = kPatBaseUs + log2i(in.nodes) * (inter / 3.5) +
                     kNcclPatPerRankUs * static_cast<double>(in.nodes);
  return lat + static_cast<double>(bytes) / (1000.0 * alg);
}

double nccl_predicted_time_us(CollectiveAlgo algo, NcclProtocol proto, const NcclCostInputs& in,
                              int64_t bytes) {
  if (algo == CollectiveAlgo::Pat) return pat_predicted_time_us(proto, in, bytes);
  if (is_collnet(algo)) {
    return collnet_predicted_time_us(algo == CollectiveAlgo::CollnetDirect, proto, in, bytes);
  }
  if (is_nvls(algo)) {
    return nvls_predicted_time_us(algo == CollectiveAlgo::NvlsTree, proto, in, bytes);
  }
  const bool ring = algo == CollectiveAlgo::Ring;
  if (!ring && !(algo == CollectiveAlgo::Tree && in.op == CollectiveOp::AllReduce)) return -1.0;
  const std::size_t p = index_of(proto);
  const std::size_t a = ring ? kRing : kTree;
  const uint32_t ranks = in.nodes * in.gpus_per_node;
  const double nranks = ranks;
  const bool ar = in.op == CollectiveOp::AllReduce;
  const bool ag_rs = in.op == CollectiveOp::AllGather || in.op == CollectiveOp::ReduceScatter;
  const double nsteps = ar ? 2.0 * (nranks - 1) : ag_rs ? nranks - 1 : nranks;
  const std::size_t col = node_column(in.nodes);

  // Bandwidth (§1.5).
  double bus = in.channels * (in.nodes <= 2 ? in.bw_intra : in.bw_inter);
  if (ring && p == kLL) bus = std::min(ll_max_bw(in), 0.5 * bus);
  const std::size_t row = arch_row(in);
  if (ring && p == kLL128) bus = std::min(0.92 * bus, in.channels * kPerChMaxRingLL128[row][col]);
  if (!ring) {
    bus = std::min(0.92 * bus, in.channels * kPerChMaxTree[row][col]);
    if (p == kLL) bus = std::min(bus / 3.8, ll_max_bw(in));
    if (p == kLL128) {
      bus = std::min(bus * (in.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                     in.channels * kPerChMaxTreeLL128[row][col]);
    }
  }
  double alg = ring ? bus * nranks / nsteps : 0.5 * bus;

  // Latency (§1.4).
  const double intra = kNvlink[a][p];
  double inter = (in.gpus_per_node == 1 ? kNet[kTree][p] : kNet[a][p]) + in.latency_inter_us;
  if (p == kSimple) inter += in.latency_inter_us;  // the "flush"
  double lat = kBase[a][p];
  if (ring) {
    const double inter_steps = in.nodes <= 1 ? 0.0 : ar ? 2.0 * (in.nodes - 1) : in.nodes - 1.0;
    const double overhead = in.nodes > 1 ? in.net_overhead_us * (p == kSimple ? 3.0 : 1.0) : 0.0;
    lat += (nsteps - inter_steps) * std::max(intra, overhead) + inter_steps * inter;
    if (p == kSimple && in.nodes > 1 && ar &&
        static_cast<double>(bytes) / (in.channels * nranks) >= 64.0) {
      lat *= 1.4;  // "plateau effect of ring", compute capability >= 80
    }
  } else {
    lat += 2.0 * ((in.gpus_per_node - 1.0) * intra + log2i(in.nodes) * inter);
    const int idx = log2i(bytes >> 6);
    if (idx >= 0 && idx < 23) alg *= kTreeCorrection[p][static_cast<std::size_t>(idx)];
  }
  return lat + static_cast<double>(bytes) / (1000.0 * alg);
}

NcclChoice nccl_choose(const NcclCostInputs& in, int64_t bytes) {
  NcclChoice best;
  best.time_us = -1;
  for (CollectiveAlgo a :
       {CollectiveAlgo::Tree, CollectiveAlgo::Ring, CollectiveAlgo::Nvls, CollectiveAlgo::NvlsTree,
        CollectiveAlgo::Pat, CollectiveAlgo::CollnetDirect, CollectiveAlgo::CollnetChain}) {
    for (NcclProtocol p : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
      const double t = nccl_predicted_time_us(a, p, in, bytes);
      if (t >= 0 && (best.time_us < 0 || t < best.time_us)) best = NcclChoice{a, p, t};
    }
  }
  return best;
}

}  // namespace syncsim::models
