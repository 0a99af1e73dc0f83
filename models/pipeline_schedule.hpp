#pragma once
// Pipeline schedules, operation by operation.
//
// 1F1B (PipeDream-Flush, as Megatron's forward_backward_pipelining_without_interleaving runs it):
// stage i runs min(p - i - 1, m) warm-up forwards, then alternates one forward and one backward,
// then drains its backwards.
//
// Interleaved 1F1B (Megatron's forward_backward_pipelining_with_interleaving; Narayanan et al.
// 2021, section 2.2.2): each pipeline rank holds v model chunks; virtual stage s = c p + i is chunk
// c on rank i, so a micro-batch's forward walks ranks 0..p-1 v times. A rank's forwards go in
// groups of p micro-batches (Megatron's microbatch_group_size_per_vp_stage, whose default is p):
// for each chunk in turn, the group's micro-batches; its backwards walk the chunks in reverse.
// It runs min((p - i - 1) 2 + (v - 1) p, m v) warm-up forwards (Megatron's
// get_pp_rank_microbatches), then one forward and one backward, then the rest of the backwards.
// With m a multiple of p this is Megatron's order exactly; a last group of fewer than p
// micro-batches takes the same order over what is left.
//
// Dependencies: the forward of virtual stage s for micro-batch j starts once its rank is free and
// virtual stage s - 1 has finished that forward; a backward once its rank is free and virtual
// stage s + 1 has finished that backward (the last virtual stage's backward follows its own
// forward). The schedule is what the trace draws, an independent check of the closed form (with
// equal stages 1F1B gives (m + p - 1)(f + b)), and the order the event-driven model-parallel step
// (models/model_parallel_step.hpp) runs.
#include <cstdint>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim::models {

struct PipelineOperation {
  uint32_t stage = 0;  // pipeline rank
  uint32_t micro_batch = 0;
  bool forward = true;
  Time start = Time::zero();
  Time end = Time::zero();
  uint32_t chunk = 0;  // model chunk on the rank (interleaved; 0 for 1F1B)
  // The virtual stage chunk * pipeline + stage.
  uint32_t virtual_stage(uint32_t pipeline) const { return chunk * pipeline + stage; }
};

// Each pipeline rank's operations in the order it runs them (times unset), for p ranks, v chunks
// per rank and m >= 1 micro-batches. Throws std::invalid_argument for p, v or m of zero.
std::vector<std::vector<PipelineOperation>> pipeline_operation_order(uint32_t pipeline,
                                                                     uint32_t chunks,
                                                                     uint32_t micro_batches);

// The schedule with per-virtual-stage forward and backward times of one micro-batch (p v entries
// each, virtual stage s on rank s mod p): every rank's operations in its order (rank-major).
std::vector<PipelineOperation> schedule_pipeline(const std::vector<Time>& virtual_stage_forward,
                                                 const std::vector<Time>& virtual_stage_backward,
                                                 uint32_t pipeline, uint32_t micro_batches);

// 1F1B: one chunk per rank (stage_forward.size() ranks).
std::vector<PipelineOperation> schedule_1f1b(const std::vector<Time>& stage_forward,
                                             const std::vector<Time>& stage_backward,
                                             uint32_t micro_batches);

// The end of the last operation (0 for none).
Time schedule_end(const std::vector<PipelineOperation>& schedule);

}  // namespace syncsim::models
