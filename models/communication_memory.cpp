#include "models/communication_memory.hpp"

#include <algorithm>
#include <bit>

namespace syncsim::models {

uint32_t nccl_connections_per_channel(CollectiveAlgo algo, uint32_t ranks) {
  if (ranks < 2) return 0;
  switch (algo) {
    case CollectiveAlgo::Tree:
    case CollectiveAlgo::Hierarchical:
      return ranks == 2 ? 1 : 2;
    case CollectiveAlgo::HalvingDoubling:
      return static_cast<uint32_t>(std::bit_width(ranks - 1));
    default:
      return 1;
  }
}

double nccl_communicator_buffer_bytes(CollectiveAlgo algo, uint32_t ranks, uint32_t channels) {
  return static_cast<double>(channels) * nccl_connections_per_channel(algo, ranks) *
         static_cast<double>(kNcclConnectionBufferBytes);
}

double nccl_p2p_buffer_bytes(uint32_t channels) {
  const auto p2p_channels = static_cast<int64_t>(std::bit_ceil(std::max<uint32_t>(1, channels)));
  return static_cast<double>(2 * p2p_channels * kNcclSharedSteps * kNcclP2pNetChunkBytes);
}

double layout_communication_buffer_bytes(const LayoutCommunicators& l) {
  const bool fsdp = l.fsdp_shard > 0;
  const CollectiveAlgo data_buffers =
      fsdp || l.sharded_optimizer ? CollectiveAlgo::Ring : l.data_algorithm;
  double bytes = nccl_communicator_buffer_bytes(CollectiveAlgo::Ring, l.tensor, l.channels) +
                 nccl_communicator_buffer_bytes(CollectiveAlgo::Ring, l.context, l.channels) +
                 nccl_communicator_buffer_bytes(
                     data_buffers, fsdp ? l.fsdp_shard : l.data * l.context, l.channels) +
                 (fsdp && l.fsdp_replicas > 1 ? nccl_communicator_buffer_bytes(
                                                    l.data_algorithm, l.fsdp_replicas, l.channels)
                                              : 0.0);
  const uint32_t per_host = std::max<uint32_t>(1, l.gpus_per_host);
  if (l.pipeline > 1 && l.tensor * l.context * l.data >= per_host) {
    bytes += nccl_p2p_buffer_bytes(l.channels);
  }
  if (l.expert > 1 && l.expert * l.tensor * l.context > per_host) {
    bytes += nccl_p2p_buffer_bytes(l.channels);
  }
  return bytes;
}

}  // namespace syncsim::models
