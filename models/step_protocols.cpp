#include "models/step_protocols.hpp"

#include <algorithm>

#include "models/nccl_setup.hpp"
#include "models/step_sim.hpp"

namespace syncsim::models {

StepProtocols::StepProtocols(const CollectiveConfig& config, const NcclChannels& channels,
                             const CollectiveRunOptions& base, std::optional<int64_t> fixed_chunk)
    : per_collective_(true),
      pinned_(config.protocol),
      channels_(channels),
      fixed_chunk_(fixed_chunk) {
  for (const CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Tree}) {
    for (const NcclProtocol proto : {NcclProtocol::LL, NcclProtocol::LL128}) {
      const ProtocolTiming t = protocol_timing(algo, proto, config);
      CollectiveRunOptions run = apply_protocol_timing(base, t);
      run.qps_per_connection = config.qps_per_connection;
      run.channel_copy_bytes_per_s = config.channel_copy_bytes_per_s;
      timings_[row(algo)][column(proto)] = t;
      runs_[row(algo)][column(proto)] = run;
    }
  }
}

NcclProtocol StepProtocols::choose(CollectiveOp op, CollectiveAlgo algo, uint32_t ranks,
                                   uint32_t gpus_per_host, int64_t bytes) const {
  const bool simple_only = op == CollectiveOp::SendRecv || op == CollectiveOp::AllToAll ||
                           algo == CollectiveAlgo::Pairwise || algo == CollectiveAlgo::Pat ||
                           is_nvls(algo) || is_collnet(algo);
  // A group of one rank moves nothing; NCCL's model has no steps for it.
  if (!per_collective_ || simple_only || ranks < 2) return NcclProtocol::Simple;
  if (pinned_) return *pinned_;
  return nccl_best_protocol(algo, nccl_cost_inputs(op, ranks, gpus_per_host, channels_), bytes);
}

const ProtocolTiming& StepProtocols::timing(CollectiveAlgo algo, NcclProtocol proto) const {
  return timings_[row(algo)][column(proto)];
}

const CollectiveRunOptions& StepProtocols::run(CollectiveAlgo algo, NcclProtocol proto) const {
  return runs_[row(algo)][column(proto)];
}

CollectiveRunOptions shape_step_collective(const StepConfig& config, NcclProtocol proto,
                                           PlanOptions& o) {
  const bool pairwise = o.op == CollectiveOp::SendRecv || o.op == CollectiveOp::AllToAll;
  o.min_pieces = 1;
  o.min_piece_bytes = 0;
  if (proto == NcclProtocol::Simple) {
    o.chunk_bytes = config.chunk_bytes;
    if (!pairwise) {
      o.min_pieces = config.ring_min_pieces;
      o.min_piece_bytes = config.ring_min_piece_bytes;
    }
    o.connection_depth = config.connection_depth;
    return config.collective;
  }
  const StepProtocols& protocols = config.protocols;
  const ProtocolTiming& t = protocols.timing(o.algo, proto);
  const uint32_t g = std::max(1u, o.gpus_per_host);
  const uint32_t nodes = (o.ranks + g - 1) / g;
  // NCCL's chunk for the protocol and size (tree LL128 halves it for deep trees), as
  // `syncsim collective` plans it (nccl_setup).
  o.chunk_bytes = protocols.fixed_chunk().value_or(
      nccl_chunk_bytes(o.algo, proto, t.chunk_bytes, o.bytes, o.channels, nodes, o.ranks, o.op));
  o.connection_depth = t.pipeline_depth;
  return protocols.run(o.algo, proto);
}

NcclProtocol step_protocol(const StepConfig& config, CollectiveOp op, CollectiveAlgo algo,
                           uint32_t ranks, int64_t bytes) {
  return config.protocols.choose(op, algo, ranks, config.gpus_per_host, bytes);
}

}  // namespace syncsim::models
