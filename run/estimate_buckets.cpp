#include "run/estimate_buckets.hpp"

#include <set>
#include <utility>

#include "models/expert_parallel.hpp"
#include "models/parallelism.hpp"

namespace syncsim::app {

StageBuckets stage_buckets(const models::StepConfig& c, double data_parallel, bool symmetric) {
  const models::ParallelLayout& l = c.layout;
  StageBuckets out;
  std::vector<std::pair<bool, int64_t>> timed;  // (expert, bytes)
  std::set<std::pair<bool, int64_t>> all;
  const std::vector<uint32_t> rank_layers = models::pipeline_rank_layers(l, c.model.layers);
  for (uint32_t i = 0; i < rank_layers.size(); ++i) {
    const models::BucketScope scope{.layers = rank_layers[i],
                                    .input_embedding = i == 0,
                                    .output_head = i + 1 == rank_layers.size(),
                                    .tensor_parallel = l.tensor,
                                    .expert_parallel = l.expert};
    std::set<std::pair<bool, int64_t>> own;
    for (const auto& b : models::stage_gradient_buckets(c.model, c.ddp, scope)) {
      ++out.count_by_size[b.bucket.size.count()];
      own.emplace(b.expert, b.bucket.size.count());
    }
    if (!symmetric) timed.insert(timed.end(), own.begin(), own.end());
    all.insert(own.begin(), own.end());
  }
  if (symmetric) timed.assign(all.begin(), all.end());
  // Expert gradients reduce over the expert-data-parallel groups, the others over DP x CP.
  const double stage_ranks = data_parallel * l.context * l.tensor;
  const double expert_dp = models::expert_data_parallel(l, static_cast<uint32_t>(data_parallel));
  std::set<std::pair<bool, int64_t>> planned;
  for (const auto& [expert, bytes] : timed) {
    TimedBucket b;
    b.bytes = bytes;
    b.group_ranks = expert ? expert_dp : data_parallel * l.context;
    b.groups = b.group_ranks > 0 ? stage_ranks / b.group_ranks : 0;
    b.first = planned.emplace(expert, bytes).second;
    out.timed.push_back(b);
  }
  return out;
}

}  // namespace syncsim::app
