#include "models/nccl_setup.hpp"

#include <algorithm>

namespace syncsim::models {

CollectiveRunOptions apply_protocol_timing(CollectiveRunOptions base,
                                           const ProtocolTiming& timing) {
  base.wire_factor = timing.wire_factor;
  base.launch_latency = Time::from_seconds(timing.launch_us * 1e-6);
  if (base.step_latency == Time::zero()) {
    base.step_latency = Time::from_seconds(timing.step_intra_us * 1e-6);
    base.net_step_latency = Time::from_seconds(timing.step_inter_us * 1e-6);
  }
  return base;
}

NcclSetup nccl_setup(const NcclCollective& c, const CollectiveConfig& config,
                     const CollectiveRunOptions& base) {
  NcclSetup s;
  s.timing = protocol_timing(c.algo, c.protocol, config);
  const uint32_t g = std::max(1u, c.gpus_per_host);
  const uint32_t nodes = (c.ranks + g - 1) / g;
  PlanOptions& po = s.plan;
  po.op = c.op;
  po.algo = c.algo;
  po.ranks = c.ranks;
  po.bytes = c.bytes;
  po.channels = c.channels;
  po.chunk_bytes = c.chunk_bytes.value_or(nccl_chunk_bytes(
      c.algo, c.protocol, s.timing.chunk_bytes, c.bytes, c.channels, nodes, c.ranks, c.op));
  // PAT's linear latency term, once per collective.
  if (c.algo == CollectiveAlgo::Pat) s.timing.launch_us += kNcclPatPerRankUs * c.ranks;
  po.root = c.root;
  po.peer = c.ranks == 0 ? 0 : (c.root + 1) % c.ranks;
  po.gpus_per_host = c.gpus_per_host;
  po.nics_per_host = c.nics_per_host;
  po.connection_depth = s.timing.pipeline_depth;
  if (c.algo == CollectiveAlgo::Ring && c.protocol == NcclProtocol::Simple &&
      (c.op == CollectiveOp::AllReduce || c.op == CollectiveOp::ReduceScatter ||
       c.op == CollectiveOp::AllGather)) {
    po.min_pieces = kNcclRingSlicesPerChunk;
    po.min_piece_bytes = s.timing.chunk_bytes / 32;
  }
  if (is_nvls(c.algo)) {
    // NCCL's NVLS chunk per head and round for this size unless a chunk was given.
    po.chunk_bytes = c.chunk_bytes.value_or(
        nccl_nvls_chunk_bytes(c.algo == CollectiveAlgo::NvlsTree, c.bytes, c.channels,
                              c.nvls_heads > 0 ? c.nvls_heads : std::min(32u, g), nodes));
    po.nvls_heads = c.nvls_heads;
    // NVLS across hosts reduces between them in the SHARP switches, with their limit of
    // reductions in flight per tree.
    if (c.algo == CollectiveAlgo::Nvls && nodes > 1) {
      po.collnet_trees = c.collnet_trees;
      if (c.collnet_outstanding > 0) {
        po.connection_depth = std::min(po.connection_depth, c.collnet_outstanding);
      }
    }
  }
  if (is_collnet(c.algo)) {
    po.chunk_bytes = c.chunk_bytes.value_or(
        nccl_collnet_chunk_bytes(c.algo == CollectiveAlgo::CollnetDirect, c.bytes, c.channels,
                                 std::min({8u, g, c.nics_per_host == 0 ? g : c.nics_per_host}), g));
    po.collnet_trees = c.collnet_trees;
    if (c.collnet_outstanding > 0) {
      po.connection_depth = std::min(po.connection_depth, c.collnet_outstanding);
    }
  }
  s.run = apply_protocol_timing(base, s.timing);
  if (is_nvls(c.algo)) {
    // The multimem efficiency stretches every byte on NVLink (NcclChannels::nvls_link_efficiency),
    // not the NIC transfers of NVLS-tree.
    s.run.intra_host_wire_factor =
        s.timing.wire_factor / std::clamp(c.nvls_link_efficiency, 0.01, 1.0);
  }
  s.run.qps_per_connection = config.qps_per_connection;
  // NVLS runs on its own CTAs, whose reach NCCL's NVLS constant already holds.
  s.run.channel_copy_bytes_per_s = is_nvls(c.algo) ? 0.0 : config.channel_copy_bytes_per_s;
  return s;
}

ProtocolTiming apply_nccl_step_setup(StepConfig& step, const CollectiveConfig& config,
                                     const NcclChannels& channels) {
  const ProtocolTiming timing = protocol_timing(step.algorithm, NcclProtocol::Simple, config);
  // LL and LL128 from the step's run options as given (before Simple's latencies go in), with the
  // step's own chunk if it set one.
  step.protocols = StepProtocols(
      config, channels, step.collective,
      step.chunk_bytes != 0 ? std::optional<int64_t>(step.chunk_bytes) : std::nullopt);
  step.channels = channels.channels;
  step.collective = apply_protocol_timing(step.collective, timing);
  step.collective.qps_per_connection = config.qps_per_connection;
  step.collective.channel_copy_bytes_per_s = config.channel_copy_bytes_per_s;
  if (step.chunk_bytes == 0) step.chunk_bytes = timing.chunk_bytes;
  // Only ring plans read it: the step's ring all-reduces and FSDP's ring gathers and scatters.
  step.ring_min_pieces = kNcclRingSlicesPerChunk;
  step.ring_min_piece_bytes = step.chunk_bytes / 32;
  step.connection_depth = timing.pipeline_depth;
  return timing;
}

NcclCostInputs nccl_cost_inputs(CollectiveOp op, uint32_t ranks, uint32_t gpus_per_host,
                                const NcclChannels& channels) {
  NcclCostInputs cost;
  cost.op = op;
  const uint32_t g = std::max(1u, gpus_per_host);
  cost.gpus_per_node = std::min(ranks, g);
  cost.nodes = (ranks + g - 1) / g;
  uint32_t graph_channels = channels.search_channels;
  if (channels.requested && channels.channels < channels.default_channels) {
    const uint64_t scaled =
        (uint64_t{channels.channels} * channels.search_channels + channels.default_channels - 1) /
        channels.default_channels;
    graph_channels = static_cast<uint32_t>(std::max<uint64_t>(1, scaled));
  }
  cost.channels = graph_channels;
  cost.bw_intra = channels.search_bw_GBps;
  cost.bw_inter = channels.search_bw_GBps;
  cost.nvls_heads = channels.nvls_heads;
  cost.nvls_bw = channels.nvls_bw_GBps;
  cost.nvls_efficiency = channels.nvls_efficiency;
  cost.nvls_tree_cap = channels.nvls_tree_cap_GBps;
  cost.collnet_heads = channels.collnet_heads;
  cost.collnet_nic_bw = channels.collnet_nic_GBps;
  cost.collnet_nvlink_bw = channels.collnet_nvlink_GBps;
  cost.compute_capability = channels.compute_capability;
  return cost;
}

NcclSystem nccl_system(uint32_t ranks, uint32_t gpus_per_host, uint32_t nics_per_host,
                       Bandwidth nic, Bandwidth nvlink, const GpuSpec& gpu) {
  NcclSystem s;
  const uint32_t g = std::max(1u, gpus_per_host);
  s.nodes = std::max(1u, (ranks + g - 1) / g);
  s.gpus_per_node = std::min(std::max(1u, ranks), g);
  s.nics_per_node = nics_per_host;
  s.nic_GBps = static_cast<double>(nic.bits_per_second()) / 8e9;  // NCCL: Mb/s / 8000
  s.pcie_GBps = nccl_pcie_x16_GBps(gpu.pcie_generation);
  s.nvlink_GBps = nvlink.bytes_per_second() / 1e9;
  s.compute_capability = gpu.compute_capability;
  s.nvls = gpu.nvswitch_sharp;
  return s;
}

NcclProtocol nccl_best_protocol(CollectiveAlgo algo, const NcclCostInputs& cost, int64_t bytes) {
  const CollectiveAlgo row = algo == CollectiveAlgo::Tree || algo == CollectiveAlgo::Pat ||
                                     is_nvls(algo) || is_collnet(algo)
                                 ? algo
                                 : CollectiveAlgo::Ring;
  NcclProtocol proto = NcclProtocol::Simple;
  double best = -1;
  for (auto p : {NcclProtocol::LL, NcclProtocol::LL128, NcclProtocol::Simple}) {
    const double t = nccl_predicted_time_us(row, p, cost, bytes);
    if (t >= 0 && (best < 0 || t < best)) {
      best = t;
      proto = p;
    }
  }
  return proto;
}

}  // namespace syncsim::models
