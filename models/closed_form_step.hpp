#pragma once
// The closed-form step of a model-parallel layout (simulate_parallel_step, parallelism.hpp) as a
// class with one method per section, for models/parallelism.cpp (the model-parallel sections) and
// models/closed_form_data_parallel.cpp (FSDP, the stages, the gradient sync, the step and memory).
#include <cstdint>
#include <vector>

#include "models/idle_collective_timer.hpp"
#include "models/parallelism.hpp"

namespace syncsim::models::closed_form {

inline Time seconds(double s) { return Time::from_seconds(s); }

using Groups = std::vector<std::vector<uint32_t>>;

// The closed-form step of a TP x CP x PP x DP (x EP, FSDP) layout, one section per kind of
// parallelism: each section times its collectives on the idle fabric, adds its rows to the result
// and keeps the per-block or per-stage times the stage and step sections compose. Sections run in
// the order of simulate_parallel_step (later ones read earlier ones' times).
class ClosedFormStep {
 public:
  // `timer` times the collectives (it may be recording: idle_collective_timer.hpp).
  ClosedFormStep(const StepConfig& config, ParallelStepParts* parts, IdleCollectiveTimer& timer);
  StepResult run();

 private:
  uint32_t gpu_of(uint32_t t, uint32_t c, uint32_t p, uint32_t d) const {
    return config_.rank_to_gpu[megatron_rank(ParallelLayout{tp_, cp_, pp_, lay_.sequence_parallel},
                                             dp_, t, c, p, d)];
  }
  void add_row(const char* kind, int64_t bytes, Time duration, int64_t count,
               NcclProtocol protocol = NcclProtocol::Simple) {
    r_.collectives.push_back(
        CollectiveTiming{kind, -1, bytes, Time::zero(), Time::zero(), duration, count, protocol});
  }
  Groups tp_groups() const;
  Groups dp_groups(uint32_t stage) const;
  // HSDP's shard groups (replicate false) or replicate groups of a stage.
  Groups fsdp_groups(uint32_t stage, bool replicate) const;
  double root_shard_params(uint32_t stage) const;

  void time_tensor_parallel();
  void time_context_parallel();
  void time_pipeline_sends();
  void time_expert_parallel();
  void time_fsdp();
  // Stage times per micro-batch and the 1F1B pipeline over them.
  PipelineTime time_stages();
  // Each stage's gradient sync overlapped with its last backward; picks the critical stage.
  void time_gradient_sync(Time pipeline_total);
  void compose_step();
  void estimate_memory();

  const StepConfig& config_;
  ParallelStepParts* parts_;
  const ParallelLayout& lay_;
  const TransformerShape& model_;
  uint32_t tp_;
  uint32_t cp_;
  uint32_t pp_;
  uint32_t total_;
  uint32_t vp_;
  std::vector<uint32_t> rank_layers_;
  uint32_t dp_;
  uint32_t m_;
  int64_t mb_;
  int64_t vpi_;
  uint32_t layers_;  // the busiest pipeline rank's: per-step counts are reported for it
  uint32_t ep_ = 1;
  IdleCollectiveTimer& timer_;
  LayerCompute lc_;
  LayerCompute lc_moe_;
  std::vector<uint32_t> rank_moe_layers_;
  uint32_t moe_layers_ = 0;  // the busiest pipeline rank's
  double slowest_ = 1.0;
  CollectiveAlgo dp_algo_;
  StepResult r_;

  // Tensor parallel, per block and micro-batch.
  bool moe_block_mlp_tp_ = true;
  Time tp_fwd_ = Time::zero();
  Time tp_bwd_ = Time::zero();
  int64_t tp_bytes_per_gpu_ = 0;
  // What an MoE block's TP collectives take less than a dense block's (its MLP pair, when it has
  // none), per micro-batch.
  Time tp_moe_saved_fwd_ = Time::zero();
  Time tp_moe_saved_bwd_ = Time::zero();
  int64_t tp_moe_saved_bytes_ = 0;
  // Context parallel, per block and micro-batch.
  Time cp_fwd_exposed_ = Time::zero();
  Time cp_bwd_exposed_ = Time::zero();
  int64_t cp_bytes_per_gpu_ = 0;
  // Pipeline sends.
  Time p2p_ = Time::zero();
  int64_t p2p_bytes_per_gpu_ = 0;
  // Expert parallel, per MoE block and micro-batch.
  Time ep_fwd_ = Time::zero();
  Time ep_bwd_ = Time::zero();
  int64_t ep_bytes_per_gpu_ = 0;
  Time ep_tp_fwd_ = Time::zero();  // EP x TP: the dispatched tokens' gathers and scatters
  Time ep_tp_bwd_ = Time::zero();
  int64_t ep_tp_bytes_per_gpu_ = 0;
  // FSDP, per stage.
  bool fsdp_ = false;
  uint32_t shard_ = 1;
  uint32_t replicas_ = 1;
  double layer_shard_params_ = 0;
  double lpu_ = 1;
  std::vector<Time> fsdp_fwd_extra_;    // per micro-batch
  std::vector<Time> fsdp_bwd_extra_;    // per micro-batch
  std::vector<Time> fsdp_tail_;         // reduce-scatters after the last backward
  std::vector<Time> fsdp_root_gather_;  // once per step, before the first forward
  std::vector<int64_t> fsdp_bytes_;     // per GPU per step
  std::vector<Time> fsdp_busy_;         // the collectives' time per step
  // Stages, per micro-batch.
  std::vector<Time> stage_fwd_;
  std::vector<Time> stage_bwd_;
  // Gradient sync and its critical stage.
  bool sharded_optimizer_ = false;
  double tokens_ = 0;
  double model_flops_ = 0;
  double peak_ = 0;
  std::size_t critical_ = 0;
  std::vector<std::vector<GradientBucket>> stage_buckets_;
  std::vector<std::vector<Time>> stage_sync_;
  std::vector<std::vector<NcclProtocol>> stage_protocols_;  // per bucket (StepProtocols)
  std::vector<StepBreakdown> stage_step_;
  std::vector<Time> stage_gather_exposed_;
  double params_gpu_ = 0;
  std::vector<double> stage_dense_params_;   // MoE: the dense part of each stage
  std::vector<double> stage_expert_params_;  // ... and its routed experts
  int64_t dp_bytes_per_gpu_ = 0;
  double moe_state_bytes_ = 0;
};

}  // namespace syncsim::models::closed_form
