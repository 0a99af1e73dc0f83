// FSDP's per-GPU memory estimate (models/fsdp.hpp).
#include <algorithm>

#include "models/communication_memory.hpp"
#include "models/fsdp.hpp"

namespace syncsim::models {

double fsdp_memory_per_gpu(const StepConfig& config, uint32_t n) {
  const auto units = fsdp_units(config.model, config.fsdp);
  double largest_block_unit = 0;
  for (const FsdpUnit& u : units) {
    if (!u.root) largest_block_unit = std::max(largest_block_unit, static_cast<double>(u.params));
  }
  const auto params = static_cast<double>(total_parameters(config.model));
  const auto root = static_cast<double>(units.front().params);
  return 16.0 * params / n + root * static_cast<double>(config.fsdp.param_bytes) +
         2.0 * largest_block_unit * static_cast<double>(config.fsdp.param_bytes) +
         std::max(root, largest_block_unit) * static_cast<double>(config.fsdp.gradient_bytes) +
         fsdp_communication_memory(config, n) + activation_bytes(config.model, config.compute);
}

double fsdp_communication_memory(const StepConfig& config, uint32_t n) {
  const auto ranks = static_cast<uint32_t>(config.rank_to_gpu.size());
  const uint32_t replicas = n == 0 ? 1 : std::max(1u, ranks / n);
  return nccl_communicator_buffer_bytes(fsdp_gather_algorithm(config.algorithm), n,
                                        config.channels) +
         nccl_communicator_buffer_bytes(config.algorithm, replicas, config.channels);
}

}  // namespace syncsim::models
