// The event-driven model-parallel step's barriers (models/model_parallel_step.hpp): the collectives
// an operation waits for inside its compute, in the order it meets them (live TP collectives,
// expert all-to-alls and their TP gathers, the K/V ring beside attention), and how a unit resumes.
#include <algorithm>
#include <memory>
#include <utility>

#include "models/model_parallel_engine.hpp"

namespace syncsim::models {

void ModelParallelStepEngine::resume_unit(uint32_t i, uint32_t u) {
  // FSDP runs its units' compute in stretches between the barriers, the rest in pieces.
  if (parts_.fsdp) {
    run_fsdp_stretch(i, u);
  } else {
    run_piece(i, u);
  }
}

std::vector<ModelParallelStepEngine::Barrier> ModelParallelStepEngine::barrier_plan(
    uint32_t s, bool forward) const {
  const uint32_t n = parts_.virtual_stage_layers[s];
  const uint32_t moe = parts_.virtual_stage_moe_layers[s];
  const uint32_t tp_per_layer =
      tp_live_ ? (forward ? tp_forward_per_layer_ : tp_backward_per_layer_) : 0;
  const int ep_per_layer =
      parts_.ep_bytes > 0 ? (forward ? parts_.ep_forward_count : parts_.ep_backward_count) : 0;
  const bool ep_tp_live = tp_live_ && parts_.ep_tp_bytes > 0;
  std::vector<Barrier> plan;
  if (cp_live_) {
    // One K/V ring per block (CP runs live only without live TP or expert parallelism).
    plan.assign(n, Barrier{BarrierKind::ContextRing, CollectiveOp::AllGather});
    return plan;
  }
  // The stage's first n - moe blocks are dense (a model's dense layers come first).
  for (uint32_t b = 0; b < n; ++b) {
    const uint32_t block = forward ? b : n - 1 - b;
    const bool moe_block = block >= n - moe;
    // An MoE block without its MLP's TP pair (EP x TP, no shared experts): the attention's half.
    const uint32_t tp_collectives =
        moe_block && !parts_.moe_block_mlp_tp ? tp_per_layer / 2 : tp_per_layer;
    for (uint32_t k = 0; k < tp_collectives; ++k) {
      // Megatron's sequence parallelism: an all-gather, then (after the GEMMs) a reduce-scatter;
      // without it all-reduces.
      const CollectiveOp op = !config_.layout.sequence_parallel ? CollectiveOp::AllReduce
                              : k % 2 == 0                      ? CollectiveOp::AllGather
                                                                : CollectiveOp::ReduceScatter;
      plan.push_back({BarrierKind::TensorActivations, op});
    }
    if (!moe_block) continue;
    // Dispatch all-to-all, the experts' TP all-gather, their reduce-scatter, combine all-to-all
    // (backward: the gradients' all-to-all, then the reduce-scatter's conjugate all-gather, ...).
    for (int k = 0; k < ep_per_layer; ++k) {
      const bool dispatch = k % 2 == 0;
      if (!dispatch && ep_tp_live) {
        plan.push_back({BarrierKind::ExpertTensorScatter, CollectiveOp::ReduceScatter});
      }
      plan.push_back({BarrierKind::ExpertAllToAll, CollectiveOp::AllToAll});
      if (dispatch && ep_tp_live) {
        plan.push_back({BarrierKind::ExpertTensorGather, CollectiveOp::AllGather});
      }
    }
  }
  return plan;
}

void ModelParallelStepEngine::arrive_barrier(uint32_t i, uint32_t u, uint32_t index) {
  Stage& st = stages_[i];
  st.ep_waiting.push_back(u);
  if (++st.ep_arrived < units_per_stage_) return;
  st.ep_arrived = 0;
  std::vector<uint32_t> waiting;
  waiting.swap(st.ep_waiting);
  const PipelineOperation& op = order_[i][units_[unit_index(i, u)].next];
  const Barrier& b = barrier_plans_[op.virtual_stage(p_) * 2 + (op.forward ? 1 : 0)][index];
  const auto tp_communicators =
      kTensorCommunicators +
      i * static_cast<uint32_t>(stage_tp_groups_.empty() ? 0 : stage_tp_groups_[i].size());
  switch (b.kind) {
    case BarrierKind::TensorActivations: {
      const char* kind = b.op == CollectiveOp::AllReduce   ? "tp_all_reduce"
                         : b.op == CollectiveOp::AllGather ? "tp_all_gather"
                                                           : "tp_reduce_scatter";
      run_barrier(i, kind, tp_bytes_, timer_->plan(b.op, CollectiveAlgo::Ring, tp_, tp_bytes_),
                  stage_tp_groups_[i], tp_communicators, std::move(waiting));
      return;
    }
    case BarrierKind::ExpertTensorGather:
    case BarrierKind::ExpertTensorScatter: {
      // The same TP groups as the activations' (Megatron's expert TP groups equal the dense ones
      // when expert_tensor_parallel_size = TP).
      const char* kind =
          b.kind == BarrierKind::ExpertTensorGather ? "ep_tp_all_gather" : "ep_tp_reduce_scatter";
      run_barrier(i, kind, parts_.ep_tp_bytes,
                  timer_->plan(b.op, CollectiveAlgo::Ring, tp_, parts_.ep_tp_bytes),
                  stage_tp_groups_[i], tp_communicators, std::move(waiting));
      return;
    }
    case BarrierKind::ContextRing:
      context_parallel_ring(i, op.forward, waiting);
      return;
    case BarrierKind::ExpertAllToAll:
      break;
  }
  const auto& groups = stage_ep_groups_[i];
  const auto ranks = static_cast<uint32_t>(groups.empty() ? 0 : groups.front().size());
  if (ranks < 2) {
    const std::size_t slice = record(0, "ep_all_to_all", i, parts_.ep_bytes);
    queue().schedule_fn(now(), [this, i, waiting, slice] {
      close(slice);
      for (const uint32_t w : waiting) resume_unit(i, w);
    });
    return;
  }
  run_barrier(
      i, "ep_all_to_all", parts_.ep_bytes,
      timer_->plan(CollectiveOp::AllToAll, CollectiveAlgo::Pairwise, ranks, parts_.ep_bytes),
      groups, kExpertCommunicators + i * static_cast<uint32_t>(groups.size()), std::move(waiting));
}

void ModelParallelStepEngine::run_barrier(uint32_t i, const char* kind, int64_t bytes,
                                          const IdleCollectiveTimer::Collective& c,
                                          const Groups& groups, uint32_t first_communicator,
                                          std::vector<uint32_t> waiting) {
  const std::size_t slice = record(0, kind, i, bytes);
  auto resume = [this, i, waiting = std::move(waiting), slice] {
    close(slice);
    for (const uint32_t w : waiting) resume_unit(i, w);
  };
  run_groups(c, groups, first_communicator, std::move(resume));
}

void ModelParallelStepEngine::context_parallel_ring(uint32_t i, bool forward,
                                                    const std::vector<uint32_t>& waiting) {
  // Two things to wait for: the ring (one or two collectives) and the attention core.
  auto left = std::make_shared<int>(2);
  auto resume = [this, i, waiting, left] {
    if (--*left > 0) return;
    for (const uint32_t w : waiting) resume_unit(i, w);
  };
  const Time attention = forward ? parts_.attention_forward : parts_.attention_backward;
  Time attention_end = now();
  for (const uint32_t w : waiting) {
    attention_end = std::max(attention_end, compute_end(units_[unit_index(i, w)], attention));
  }
  queue().schedule_fn(attention_end, resume);
  const Groups& groups = stage_cp_groups_[i];
  const auto communicator = kContextCommunicators + i * 2 * static_cast<uint32_t>(groups.size());
  const std::size_t gather = record(0, "cp_all_gather", i, parts_.cp_ring_bytes);
  const auto& ag =
      timer_->plan(CollectiveOp::AllGather, CollectiveAlgo::Ring, cp_, parts_.cp_ring_bytes);
  run_groups(ag, groups, communicator, [this, i, forward, gather, resume, communicator, &groups] {
    close(gather);
    if (forward) {
      resume();
      return;
    }
    // Backward: the K/V gradients travel back round the ring.
    const std::size_t scatter = record(0, "cp_reduce_scatter", i, parts_.cp_ring_bytes);
    const auto& rs =
        timer_->plan(CollectiveOp::ReduceScatter, CollectiveAlgo::Ring, cp_, parts_.cp_ring_bytes);
    run_groups(rs, groups, communicator + static_cast<uint32_t>(groups.size()),
               [this, scatter, resume] {
                 close(scatter);
                 resume();
               });
  });
}

}  // namespace syncsim::models
