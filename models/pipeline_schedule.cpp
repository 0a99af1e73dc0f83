#include "models/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace syncsim::models {

std::vector<std::vector<PipelineOperation>> pipeline_operation_order(uint32_t p, uint32_t v,
                                                                     uint32_t m) {
  if (p == 0 || v == 0 || m == 0) {
    throw std::invalid_argument("a pipeline schedule needs stages, chunks and micro-batches");
  }
  // One rank's forwards (chunk, micro-batch) in order; its backwards are the same groups with the
  // chunks reversed.
  struct Slot {
    uint32_t chunk;
    uint32_t micro_batch;
  };
  std::vector<Slot> forwards;
  std::vector<Slot> backwards;
  forwards.reserve(static_cast<std::size_t>(m) * v);
  backwards.reserve(static_cast<std::size_t>(m) * v);
  for (uint32_t first = 0; first < m; first += p) {
    const uint32_t group = std::min(p, m - first);
    for (uint32_t c = 0; c < v; ++c) {
      for (uint32_t j = 0; j < group; ++j) forwards.push_back({c, first + j});
      for (uint32_t j = 0; j < group; ++j) backwards.push_back({v - 1 - c, first + j});
    }
  }
  const uint32_t total = m * v;
  std::vector<std::vector<PipelineOperation>> order(p);
  for (uint32_t i = 0; i < p; ++i) {
    const uint32_t warmup =
        v == 1 ? std::min(p - i - 1, m) : std::min((p - i - 1) * 2 + (v - 1) * p, total);
    std::size_t next_f = 0;
    std::size_t next_b = 0;
    auto push = [&](bool forward) {
      const Slot s = forward ? forwards[next_f++] : backwards[next_b++];
      PipelineOperation op;
      op.stage = i;
      op.chunk = s.chunk;
      op.micro_batch = s.micro_batch;
      op.forward = forward;
      order[i].push_back(op);
    };
    order[i].reserve(2 * static_cast<std::size_t>(total));
    for (uint32_t k = 0; k < warmup; ++k) push(true);
    while (next_f < total) {
      push(true);
      push(false);
    }
    while (next_b < total) push(false);
  }
  return order;
}

std::vector<PipelineOperation> schedule_pipeline(const std::vector<Time>& vforward,
                                                 const std::vector<Time>& vbackward, uint32_t p,
                                                 uint32_t m) {
  if (p == 0 || vforward.empty() || vforward.size() % p != 0 ||
      vbackward.size() != vforward.size() || m == 0) {
    throw std::invalid_argument(
        "a pipeline schedule needs p x v virtual stage times and micro-batches");
  }
  const auto stages = static_cast<uint32_t>(vforward.size());
  const uint32_t v = stages / p;
  std::vector<std::vector<PipelineOperation>> order = pipeline_operation_order(p, v, m);
  // List scheduling: repeatedly run, on every rank, its next operation once its input is done.
  const Time never = Time::max();
  std::vector<std::vector<Time>> forward_end(stages, std::vector<Time>(m, never));
  std::vector<std::vector<Time>> backward_end(stages, std::vector<Time>(m, never));
  std::vector<std::size_t> next(p, 0);
  std::vector<Time> free(p, Time::zero());
  std::size_t left = static_cast<std::size_t>(stages) * m * 2;
  while (left > 0) {
    bool progressed = false;
    for (uint32_t i = 0; i < p; ++i) {
      while (next[i] < order[i].size()) {
        PipelineOperation& op = order[i][next[i]];
        const uint32_t j = op.micro_batch;
        const uint32_t s = op.virtual_stage(p);
        const Time ready = op.forward
                               ? (s == 0 ? Time::zero() : forward_end[s - 1][j])
                               : (s + 1 == stages ? forward_end[s][j] : backward_end[s + 1][j]);
        if (ready == never) break;
        op.start = std::max(free[i], ready);
        op.end = op.start + (op.forward ? vforward[s] : vbackward[s]);
        (op.forward ? forward_end : backward_end)[s][j] = op.end;
        free[i] = op.end;
        ++next[i];
        --left;
        progressed = true;
      }
    }
    if (!progressed) throw std::logic_error("the pipeline schedule deadlocked");
  }
  std::vector<PipelineOperation> all;
  all.reserve(static_cast<std::size_t>(stages) * m * 2);
  for (const auto& ops : order) all.insert(all.end(), ops.begin(), ops.end());
  return all;
}

std::vector<PipelineOperation> schedule_1f1b(const std::vector<Time>& stage_forward,
                                             const std::vector<Time>& stage_backward,
                                             uint32_t micro_batches) {
  if (stage_forward.empty() || stage_backward.size() != stage_forward.size() ||
      micro_batches == 0) {
    throw std::invalid_argument("a 1F1B schedule needs stages and micro-batches");
  }
  return schedule_pipeline(stage_forward, stage_backward,
                           static_cast<uint32_t>(stage_forward.size()), micro_batches);
}

Time schedule_end(const std::vector<PipelineOperation>& schedule) {
  Time end = Time::zero();
  for (const PipelineOperation& op : schedule) end = std::max(end, op.end);
  return end;
}

}  // namespace syncsim::models
