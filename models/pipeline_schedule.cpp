#include "models/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace syncsim::models {

std::vector<PipelineOperation> schedule_1f1b(const std::vector<Time>& stage_forward,
                                             const std::vector<Time>& stage_backward,
                                             uint32_t micro_batches) {
  const auto p = static_cast<uint32_t>(stage_forward.size());
  if (p == 0 || stage_backward.size() != p || micro_batches == 0) {
    throw std::invalid_argument("a 1F1B schedule needs stages and micro-batches");
  }
  const uint32_t m = micro_batches;
  // Each stage's operation order.
  std::vector<std::vector<PipelineOperation>> order(p);
  for (uint32_t i = 0; i < p; ++i) {
    const uint32_t warmup = std::min(p - i - 1, m);
    uint32_t next_f = 0;
    uint32_t next_b = 0;
    auto push = [&](bool forward) {
      order[i].push_back(PipelineOperation{i, forward ? next_f++ : next_b++, forward});
    };
    for (uint32_t k = 0; k < warmup; ++k) push(true);
    while (next_f < m) {
      push(true);
      push(false);
    }
    while (next_b < m) push(false);
  }
  // List scheduling: repeatedly run, on every stage, its next operation once its input is done.
  // forward_end[i][j] / backward_end[i][j]: kNever until scheduled.
  const Time never = Time::max();
  std::vector<std::vector<Time>> forward_end(p, std::vector<Time>(m, never));
  std::vector<std::vector<Time>> backward_end(p, std::vector<Time>(m, never));
  std::vector<std::size_t> next(p, 0);
  std::vector<Time> free(p, Time::zero());
  std::size_t left = static_cast<std::size_t>(p) * m * 2;
  while (left > 0) {
    bool progressed = false;
    for (uint32_t i = 0; i < p; ++i) {
      while (next[i] < order[i].size()) {
        PipelineOperation& op = order[i][next[i]];
        const uint32_t j = op.micro_batch;
        const Time ready = op.forward ? (i == 0 ? Time::zero() : forward_end[i - 1][j])
                                      : (i + 1 == p ? forward_end[i][j] : backward_end[i + 1][j]);
        if (ready == never) break;
        op.start = std::max(free[i], ready);
        op.end = op.start + (op.forward ? stage_forward[i] : stage_backward[i]);
        (op.forward ? forward_end : backward_end)[i][j] = op.end;
        free[i] = op.end;
        ++next[i];
        --left;
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("the 1F1B schedule deadlocked");
  }
  std::vector<PipelineOperation> all;
  all.reserve(static_cast<std::size_t>(p) * m * 2);
  for (const auto& ops : order) all.insert(all.end(), ops.begin(), ops.end());
  return all;
}

Time schedule_end(const std::vector<PipelineOperation>& schedule) {
  Time end = Time::zero();
  for (const PipelineOperation& op : schedule) end = std::max(end, op.end);
  return end;
}

}  // namespace syncsim::models
