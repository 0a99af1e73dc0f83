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

}  // namespace syncsim::models
