#pragma once
// What a training step's time goes to, and so what bounds it: compute, communication left exposed
// behind it, the pipeline bubble, or the optimizer. The answer a capacity planner reads first:
// a compute-bound step gains nothing from a faster fabric, a communication-bound one does.
#include <string_view>

#include "models/step_sim.hpp"

namespace syncsim::models {

// Shares of the step, each in 0..1, summing to 1. `exposed_communication`, `pipeline_bubble` and
// `optimizer` are the step model's own terms (StepResult::exposed_comm, ::pipeline_bubble,
// ::optimizer) over the step; compute is the rest, the forward and backward work on the critical
// path. In the closed-form parallel step the forward and backward hold the TP/CP/PP communication
// and the bubble; exposed_comm counts the communication of the m micro-batches and
// pipeline_bubble the (p - 1)/v idle stage slots, so no time is counted twice.
struct StepShares {
  double compute = 0;
  double exposed_communication = 0;
  double pipeline_bubble = 0;
  double optimizer = 0;
};
StepShares step_shares(const StepResult& step);

// The largest share's name: "compute", "communication", "pipeline_bubble" or "optimizer".
std::string_view bound_by(const StepShares& shares);

// Whether the step's memory estimate (StepResult::memory_per_gpu_bytes) fits the GPU's memory;
// true when either is unknown (0).
bool fits_gpu_memory(const StepResult& step);

}  // namespace syncsim::models
