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
  // HSDP's all-reduces run over the replicate groups, the rest over the shard groups.
  const bool replica = c.op == CollectiveOp::AllReduce;
  const Groups& groups =
      replica ? parts_.stage_fsdp_replica_groups[i] : parts_.stage_fsdp_shard_groups[i];
  const auto ranks = static_cast<uint32_t>(groups.empty() ? 0 : groups.front().size());
  const std::size_t slice = record(0,
                                   c.op == CollectiveOp::AllGather   ? "fsdp_all_gather"
                                   : c.op == CollectiveOp::AllReduce ? "fsdp_all_reduce"
                                                                     : "fsdp_reduce_scatter",
                                   i, c.bytes);
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
  const auto& collective =
      timer_->plan(c.op, replica ? parts_.dp_algorithm : CollectiveAlgo::Ring, ranks, c.bytes);
  // Communicators: stage i's gathers 2i and reduce-scatters 2i + 1 (times the groups), HSDP's
  // all-reduces a range of their own.
  const uint32_t first =
      replica ? kReplicaCommunicators + i * static_cast<uint32_t>(groups.size())
              : kDataCommunicators + (i * 2 + (c.op == CollectiveOp::AllGather ? 0 : 1)) *
                                         static_cast<uint32_t>(groups.size());
  run_groups(collective, groups, first, std::move(finished));
}

void ModelParallelStepEngine::fsdp_done(uint32_t i, FsdpComm c) {
  Stage& st = stages_[i];
  if (c.op == CollectiveOp::ReduceScatter && parts_.fsdp_replicas > 1) {
    // HSDP: the reduce-scattered shard is all-reduced over its replicas, right behind it on the
    // stream (PyTorch's HYBRID_SHARD); the gradients are done when that ends.
    st.reduces.queue.push_front(
        FsdpComm{CollectiveOp::AllReduce, c.bytes / parts_.fsdp_shard, c.root});
    return;
  }
  if (c.op != CollectiveOp::AllGather) {
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
  const Time cp = cp_live_ ? Time::zero() : (op.forward ? parts_.cp_forward : parts_.cp_backward);
  const Time fixed = (tp + cp) * static_cast<int64_t>(layers);
  Time end;
  if (cp_live_) {
    // Stretch k < layers: block k up to its attention core, which runs beside the K/V ring at
    // the barrier; the last stretch: the head, where this unit holds it.
    const auto n = static_cast<int64_t>(layers);
    const Time head_work =
        head ? (op.forward ? parts_.head_forward : parts_.head_backward) : Time::zero();
    const Time attention = op.forward ? parts_.attention_forward : parts_.attention_backward;
    const bool block = unit.sub_piece < layers;
    end = compute_end(unit, block ? (work - head_work) / n - attention : head_work) +
          (block ? fixed / n : Time::zero());
  } else {
    const auto stretches = static_cast<int64_t>(fsdp_barriers(layers, op.forward)) + 1;
    end = compute_end(unit, work / stretches) + fixed / stretches;
  }
  queue().schedule_fn(std::max(end, now()), [this, i, u] { fsdp_stretch_done(i, u); });
}

void ModelParallelStepEngine::fsdp_stretch_done(uint32_t i, uint32_t u) {
  Unit& unit = units_[unit_index(i, u)];
  const PipelineOperation& op = order_[i][unit.next];
  const uint32_t layers = fsdp_unit_layers(op.virtual_stage(p_), op.forward, unit.piece);
  if (unit.sub_piece < fsdp_barriers(layers, op.forward)) {
    // The block's TP collective or K/V ring, live across hosts; the unit resumes in
    // run_fsdp_stretch.
    ++unit.sub_piece;
    arrive_barrier(i, u, unit.sub_piece - 1);
    return;
  }
  piece_done(i, u);
}

}  // namespace syncsim::models
