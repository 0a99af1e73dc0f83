// FSDP composed with model parallelism in the event-driven model-parallel step: each unit's
// all-gather before it computes (prefetched one unit ahead), its reduce-scatter after its backward,
// on the stage's two streams (models/model_parallel_step.hpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "models/model_parallel_engine.hpp"

namespace syncsim::models {

std::size_t ModelParallelStepEngine::dp_bucket_count(uint32_t i) const {
  return parts_.fsdp ? 0 : parts_.stage_buckets[i].size();
}

uint32_t ModelParallelStepEngine::fsdp_units(uint32_t s) const {
  const uint32_t lpu = std::max<uint32_t>(1, parts_.fsdp_layers_per_unit);
  return (parts_.virtual_stage_layers[s] + lpu - 1) / lpu;
}

uint32_t ModelParallelStepEngine::fsdp_unit_layers(uint32_t s, bool forward, uint32_t q) const {
  const uint32_t lpu = std::max<uint32_t>(1, parts_.fsdp_layers_per_unit);
  const uint32_t units = fsdp_units(s);
  const uint32_t x = forward ? q : units - 1 - q;
  return std::min(lpu, parts_.virtual_stage_layers[s] - x * lpu);
}

void ModelParallelStepEngine::fsdp_gather_unit(uint32_t i, uint32_t s, bool forward, uint32_t q) {
  Stage& st = stages_[i];
  if (q < st.op_gathers_issued) return;
  st.op_gathers_issued = q + 1;
  fsdp_issue(i, FsdpComm{CollectiveOp::AllGather,
                         parts_.fsdp_layer_gather_bytes *
                             static_cast<int64_t>(fsdp_unit_layers(s, forward, q)),
                         false});
}

void ModelParallelStepEngine::fsdp_issue(uint32_t i, FsdpComm c) {
  Stage& st = stages_[i];
  FsdpStream& stream = c.op == CollectiveOp::AllGather ? st.gathers : st.reduces;
  stream.queue.push_back(c);
  fsdp_pump(i, stream);
}

void ModelParallelStepEngine::fsdp_pump(uint32_t i, FsdpStream& stream) {
  if (stream.busy || stream.queue.empty()) return;
  const FsdpComm c = stream.queue.front();
  stream.queue.pop_front();
  stream.busy = true;
  const Groups& groups = parts_.stage_dense_groups[i];
  const auto ranks = static_cast<uint32_t>(groups.empty() ? 0 : groups.front().size());
  const std::size_t slice = record(
      0, c.op == CollectiveOp::AllGather ? "fsdp_all_gather" : "fsdp_reduce_scatter", i, c.bytes);
  auto finished = [this, i, c, &stream, slice] {
    close(slice);
    stream.busy = false;
    fsdp_done(i, c);
    fsdp_pump(i, stream);
  };
  if (ranks < 2 || c.bytes <= 0) {
    queue().schedule_fn(now(), finished);
    return;
  }
  const auto& collective = timer_->plan(c.op, CollectiveAlgo::Ring, ranks, c.bytes);
  run_groups(collective, groups,
             kDataCommunicators + (i * 2 + (c.op == CollectiveOp::AllGather ? 0 : 1)) *
                                      static_cast<uint32_t>(groups.size()),
             std::move(finished));
}

void ModelParallelStepEngine::fsdp_done(uint32_t i, FsdpComm c) {
  Stage& st = stages_[i];
  if (c.op == CollectiveOp::ReduceScatter) {
    --st.reduces_left;
    check_stage(i);
    return;
  }
  if (c.root) {
    st.root_gathered = true;
  } else {
    ++st.op_gathers_done;
  }
  if (st.waiting_for_gather) {
    st.waiting_for_gather = false;
    run_piece(i, 0);
  }
}

void ModelParallelStepEngine::run_fsdp_stretch(uint32_t i, uint32_t u) {
  Unit& unit = units_[unit_index(i, u)];
  const PipelineOperation& op = order_[i][unit.next];
  const uint32_t s = op.virtual_stage(p_);
  const uint32_t layers = fsdp_unit_layers(s, op.forward, unit.piece);
  const bool head =
      s + 1 == stages_total_ && (op.forward ? unit.piece + 1 == fsdp_units(s) : unit.piece == 0);
  Time work = (op.forward ? parts_.dense_forward : parts_.dense_backward) * layers;
  if (head) work += op.forward ? parts_.head_forward : parts_.head_backward;
  const Time tp = tp_live_ ? Time::zero() : (op.forward ? parts_.tp_forward : parts_.tp_backward);
  const Time fixed =
      (tp + (op.forward ? parts_.cp_forward : parts_.cp_backward)) * static_cast<int64_t>(layers);
  const auto stretches = static_cast<int64_t>(fsdp_tp_barriers(layers, op.forward)) + 1;
  const Time end = std::max(compute_end(unit, work / stretches) + fixed / stretches, now());
  queue().schedule_fn(end, [this, i, u] { fsdp_stretch_done(i, u); });
}

void ModelParallelStepEngine::fsdp_stretch_done(uint32_t i, uint32_t u) {
  Unit& unit = units_[unit_index(i, u)];
  const PipelineOperation& op = order_[i][unit.next];
  const uint32_t layers = fsdp_unit_layers(op.virtual_stage(p_), op.forward, unit.piece);
  if (unit.sub_piece < fsdp_tp_barriers(layers, op.forward)) {
    // The block's TP collective, live across hosts; the unit resumes in run_fsdp_stretch.
    ++unit.sub_piece;
    arrive_barrier(i, u, unit.sub_piece - 1);
    return;
  }
  piece_done(i, u);
}

}  // namespace syncsim::models
