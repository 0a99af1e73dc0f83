#include "models/communication_memory.hpp"

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

}  // namespace syncsim::models
