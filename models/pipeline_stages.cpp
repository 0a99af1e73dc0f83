// The pipeline's closed-form time and how the layers split over its stages
// (models/parallelism.hpp: pipeline_1f1b, pipeline_stage_layers, pipeline_rank_layers).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/parallelism.hpp"

namespace syncsim::models {

PipelineTime pipeline_1f1b(const std::vector<Time>& stage, uint32_t micro_batches,
                           uint32_t virtual_stages) {
  PipelineTime p;
  if (stage.empty()) return p;
  const auto m = static_cast<int64_t>(std::max<uint32_t>(1, micro_batches));
  const auto v = static_cast<int64_t>(std::max<uint32_t>(1, virtual_stages));
  Time longest = Time::zero();
  Time sum = Time::zero();
  for (Time t : stage) {
    longest = std::max(longest, t);
    sum += t;
  }
  p.total = longest * m + (sum - longest) / v;
  p.bubble = p.total - longest * m;
  const double ideal = longest.seconds() * static_cast<double>(m);
  p.bubble_fraction = ideal > 0 ? p.bubble.seconds() / ideal : 0.0;
  return p;
}

std::vector<uint32_t> pipeline_stage_layers(const ParallelLayout& l, uint32_t layers) {
  const uint32_t pp = std::max<uint32_t>(1, l.pipeline);
  const uint32_t vp = std::max<uint32_t>(1, l.virtual_pipeline);
  // 64 bits: degrees read from a scenario may be up to 2^32 - 1 each.
  const uint64_t stages = uint64_t{pp} * vp;
  const uint32_t extra =
      (l.embedding_in_pipeline_split ? 1U : 0U) + (l.loss_in_pipeline_split ? 1U : 0U);
  const uint64_t units = uint64_t{layers} + extra;
  if (units % stages != 0) {
    std::string what = std::to_string(layers) + " layers";
    if (extra > 0) what += " + " + std::to_string(extra) + " (embedding/loss counted as layers)";
    throw std::invalid_argument("expected the " + what +
                                " to split evenly over pipeline_parallel x "
                                "virtual_pipeline = " +
                                std::to_string(pp) + " x " + std::to_string(vp) + " = " +
                                std::to_string(stages) + " pipeline stages");
  }
  const auto per_stage = static_cast<uint32_t>(units / stages);
  std::vector<uint32_t> split(static_cast<std::size_t>(stages), per_stage);
  if (l.embedding_in_pipeline_split) --split.front();
  if (l.loss_in_pipeline_split) --split.back();
  // A stage of the embedding or the loss alone (Megatron's standalone stages) is not modelled.
  if (std::find(split.begin(), split.end(), 0U) != split.end()) {
    throw std::invalid_argument(
        "expected at least one transformer layer on every pipeline stage, "
        "got " +
        std::to_string(layers) + " layers over " + std::to_string(stages) + " stages");
  }
  return split;
}

std::vector<uint32_t> pipeline_rank_layers(const ParallelLayout& l, uint32_t layers) {
  const uint32_t pp = std::max<uint32_t>(1, l.pipeline);
  const std::vector<uint32_t> split = pipeline_stage_layers(l, layers);
  std::vector<uint32_t> per_rank(pp, 0);
  for (std::size_t j = 0; j < split.size(); ++j) per_rank[j % pp] += split[j];
  return per_rank;
}

}  // namespace syncsim::models
