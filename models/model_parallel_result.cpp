// The event-driven model-parallel step's result: step time against the closed form, exposed
// communication, bubble, buckets with their idle-fabric times, and the trace's communication
// slices.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "models/model_parallel_engine.hpp"

namespace syncsim::models {

void ModelParallelStepEngine::finish_step() {
  StepResult r = closed_;
  r.engine = "event_driven";
  r.closed_form_step = closed_.step;
  r.step = now() - step_start_;
  for (const std::string& w : warnings_) r.warnings.push_back(w);
  // The critical stage: the one that finished last.
  const auto critical = static_cast<uint32_t>(
      std::max_element(stage_end_.begin(), stage_end_.end()) - stage_end_.begin());
  r.forward = rank_backward_start_[critical] - step_start_;
  r.backward = rank_backward_end_[critical] - rank_backward_start_[critical];
  r.tail = stage_end_[critical] - rank_backward_end_[critical];
  r.buckets = stages_[critical].timings;
  r.buckets.resize(dp_bucket_count(critical));
  // Each bucket's time alone on the idle fabric (every group of the stage at once), which the
  // fault report compares the live times with.
  for (std::size_t k = 0; k < r.buckets.size(); ++k) {
    const StageBucket& b = parts_.stage_buckets[critical][k];
    const Groups& groups =
        b.expert ? parts_.stage_expert_groups[critical] : parts_.stage_dense_groups[critical];
    if (groups.empty() || groups.front().size() < 2) continue;
    const CollectiveOp op =
        parts_.sharded_optimizer ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
    const CollectiveAlgo algo =
        op == CollectiveOp::AllReduce ? parts_.dp_algorithm : CollectiveAlgo::Ring;
    r.buckets[k].idle = timer_->time(op, algo, groups, b.bucket.size.count()).duration;
  }
  r.sync = Time::zero();
  for (const BucketTiming& t : r.buckets) r.sync += t.end - t.start;
  std::sort(schedule_.begin(), schedule_.end(),
            [](const PipelineOperation& a, const PipelineOperation& b) {
              return a.stage != b.stage ? a.stage < b.stage : a.start < b.start;
            });
  r.pipeline_schedule = schedule_;
  r.communication = communication_;
  // Exposed communication: what the step takes beyond the same schedule with no communication
  // (compute only, the bubble included) and the optimizer.
  std::vector<Time> vf(stages_total_);
  std::vector<Time> vb(stages_total_);
  double slowest = 1.0;
  for (const Unit& u : units_) slowest = std::max(slowest, u.multiplier);
  for (uint32_t s = 0; s < stages_total_; ++s) {
    vf[s] = scaled(op_work(s, true).first, slowest);
    vb[s] = scaled(op_work(s, false).first, slowest);
  }
  const Time compute_only = schedule_end(schedule_pipeline(vf, vb, p_, m_));
  r.exposed_comm = std::max(Time::zero(), r.step - r.optimizer - compute_only);
  // The bubble, as the closed form defines it: what the compute-only schedule takes beyond the
  // busiest rank's work, as a fraction of that work.
  Time busiest = Time::zero();
  for (uint32_t i = 0; i < p_; ++i) {
    Time busy = Time::zero();
    for (uint32_t c = 0; c < v_; ++c) busy += vf[c * p_ + i] + vb[c * p_ + i];
    busiest = std::max(busiest, busy * static_cast<int64_t>(m_));
  }
  r.pipeline_bubble = compute_only - busiest;
  r.bubble_fraction =
      busiest > Time::zero() ? r.pipeline_bubble.seconds() / busiest.seconds() : 0.0;
  const double ratio = closed_.step.seconds() / r.step.seconds();
  r.mfu = closed_.mfu * ratio;
  r.hfu = closed_.hfu * ratio;
  r.tokens_per_s = closed_.tokens_per_s * ratio;
  const std::size_t total = config_.rank_to_gpu.size();
  r.rank_backward_start.assign(total, Time::zero());
  r.rank_backward_end.assign(total, Time::zero());
  for (std::size_t rank = 0; rank < total; ++rank) {
    const auto i = static_cast<uint32_t>(rank / block_);
    r.rank_backward_start[rank] = rank_backward_start_[i] - step_start_;
    r.rank_backward_end[rank] = rank_backward_end_[i] - step_start_;
  }
  result_ = std::move(r);
  if (done_) {
    auto done = std::move(done_);
    done_ = nullptr;
    done();
  }
}

std::size_t ModelParallelStepEngine::record(uint32_t u, const char* kind, uint32_t stage,
                                            int64_t bytes) {
  if (u != 0) return static_cast<std::size_t>(-1);
  communication_.push_back(
      CommunicationSlice{kind, stage, bytes, now() - step_start_, now() - step_start_});
  return communication_.size() - 1;
}

void ModelParallelStepEngine::close(std::size_t slice) {
  if (slice < communication_.size()) communication_[slice].end = now() - step_start_;
}

}  // namespace syncsim::models
