#pragma once
// The 1F1B pipeline schedule, operation by operation (PipeDream-Flush, as Megatron's
// forward_backward_pipelining_without_interleaving runs it): stage i runs min(p - i - 1, m)
// warm-up forwards, then alternates one forward and one backward, then drains its backwards. A
// forward of micro-batch j on stage i starts once stage i is free and stage i - 1 has finished
// that forward; a backward once stage i is free and stage i + 1 has finished that backward (the
// last stage's backward follows its own forward). Per-stage times include the stage's
// point-to-point receives, as the closed form's (models/parallelism.hpp pipeline_1f1b) do. The
// schedule is what the trace draws and an independent check of the closed form: with equal stages
// both give (m + p - 1) (f + b).
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim::models {

struct PipelineOperation {
  uint32_t stage = 0;
  uint32_t micro_batch = 0;
  bool forward = true;
  Time start = Time::zero();
  Time end = Time::zero();
};

// Every stage's operations in the order it runs them (stage-major), for per-stage forward and
// backward times of one micro-batch (equal sizes, at least one stage) and m >= 1 micro-batches.
std::vector<PipelineOperation> schedule_1f1b(const std::vector<Time>& stage_forward,
                                             const std::vector<Time>& stage_backward,
                                             uint32_t micro_batches);

// The end of the last operation (0 for none).
Time schedule_end(const std::vector<PipelineOperation>& schedule);

}  // namespace syncsim::models
