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
  po.chunk_bytes = c.chunk_bytes.value_or(nccl_chunk_bytes(c.algo, c.protocol, s.timing.chunk_bytes,
                                                           c.bytes, c.channels, nodes, c.ranks));
  po.root = c.root;
  po.peer = c.ranks == 0 ? 0 : (c.root + 1) % c.ranks;
  po.gpus_per_host = c.gpus_per_host;
  po.nics_per_host = c.nics_per_host;
  po.connection_depth = s.timing.pipeline_depth;
  s.run = apply_protocol_timing(base, s.timing);
  return s;
}

ProtocolTiming apply_nccl_step_setup(StepConfig& step, const CollectiveConfig& config) {
  const ProtocolTiming timing = protocol_timing(step.algorithm, NcclProtocol::Simple, config);
  step.collective = apply_protocol_timing(step.collective, timing);
  if (step.chunk_bytes == 0) step.chunk_bytes = timing.chunk_bytes;
  return timing;
}

NcclCostInputs nccl_cost_inputs(CollectiveOp op, uint32_t ranks, uint32_t channels,
                                uint32_t gpus_per_host, uint32_t nics_per_host, Bandwidth nvlink,
                                Bandwidth host_link) {
  NcclCostInputs cost;
  cost.op = op;
  const uint32_t g = std::max(1u, gpus_per_host);
  cost.gpus_per_node = std::min(ranks, g);
  cost.nodes = (ranks + g - 1) / g;
  cost.channels = channels;
  const double nic_share = static_cast<double>(std::min(nics_per_host, g)) / g;
  cost.bw_intra = nvlink.bytes_per_second() / 1e9 / channels;
  cost.bw_inter = host_link.bytes_per_second() * nic_share / 1e9 / channels;
  return cost;
}

NcclProtocol nccl_best_protocol(CollectiveAlgo algo, const NcclCostInputs& cost, int64_t bytes) {
  const CollectiveAlgo row = algo == CollectiveAlgo::Tree ? algo : CollectiveAlgo::Ring;
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
