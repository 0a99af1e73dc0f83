#pragma once
// The warning a step model gives when its per-GPU memory estimate exceeds the GPU's memory.
#include <string>
#include <vector>

#include "models/gpu.hpp"

namespace syncsim::models {

// `subject` starts the sentence ("FSDP", "this layout"); the wording is part of the run's output.
inline void warn_if_over_gpu_memory(std::vector<std::string>& warnings, const std::string& subject,
                                    double bytes_per_gpu, const GpuSpec& gpu) {
  if (bytes_per_gpu > gpu.memory_bytes) {
    warnings.push_back(subject + " needs about " +
                       std::to_string(bytes_per_gpu / 1e9).substr(0, 6) +
                       " GB per GPU, more than the GPU's " +
                       std::to_string(gpu.memory_bytes / 1e9).substr(0, 5) + " GB");
  }
}

}  // namespace syncsim::models
