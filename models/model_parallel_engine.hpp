#pragma once
// The event-driven model-parallel step's engine (models/model_parallel_step.hpp says what it
// models). Internal to its sources: model_parallel_step.cpp (the schedule, sends and data-parallel
// buckets), model_parallel_barriers.cpp (the collectives inside an operation),
// model_parallel_fsdp.cpp (FSDP's unit gathers and reduce-scatters), model_parallel_timing.cpp
// (live or idle-fabric collectives) and model_parallel_result.cpp (the step's result and the
// trace's communication slices).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/group_collectives.hpp"
#include "models/idle_collective_timer.hpp"
#include "models/parallelism.hpp"
#include "models/pipeline_schedule.hpp"
#include "models/processor_sharing.hpp"
#include "models/step_engine.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::models {

class ModelParallelStepEngine final : public StepEngine {
 public:
  ModelParallelStepEngine(TransferBackend& backend, const net::NetworkSpec& spec, Fidelity fidelity,
                          const StepConfig& config)
      : backend_(backend), spec_(spec), fidelity_(fidelity), config_(config) {}

  // With idle-fabric timing its collectives take their durations from idle copies of the fabric.
  bool loads_fabric() const override { return !config_.model_parallel_idle_fabric_timing; }

  void begin(std::function<void()> done) override;

  StepResult result() override { return result_; }

 private:
  using Groups = std::vector<std::vector<uint32_t>>;
  // Communicator numbers of the step's groups (CollectiveRunOptions::communicator): pipeline
  // pairs, expert groups, each stage's data-parallel groups and cross-host TP groups open their own
  // connections.
  static constexpr uint32_t kPipelineCommunicators = 0;
  static constexpr uint32_t kExpertCommunicators = 16384;
  static constexpr uint32_t kDataCommunicators = 32768;
  static constexpr uint32_t kReplicaCommunicators = 40960;  // HSDP's replicate groups
  static constexpr uint32_t kTensorCommunicators = 49152;
  static constexpr uint32_t kContextCommunicators = 57344;

  struct Unit {
    std::size_t next = 0;  // index into the rank's operation order
    bool busy = false;
    double multiplier = 1.0;             // the slowest of the unit's ranks
    std::vector<uint32_t> slowed_ranks;  // ranks with timed stragglers
    Time op_start = Time::zero();
    Time nominal = Time::zero();  // the running operation's duration without stragglers/barriers
    uint32_t piece = 0;           // the running operation's compute piece
    uint32_t sub_piece = 0;       // FSDP with live TP / CP: the piece's stretch between barriers
  };
  struct Comm {
    bool gather = false;  // distributed optimizer's parameter all-gather, else the bucket's sync
    std::size_t bucket = 0;
  };
  // FSDP's collectives on one of a stage's two streams, one at a time, every group at once.
  struct FsdpComm {
    CollectiveOp op = CollectiveOp::AllGather;
    int64_t bytes = 0;
    bool root = false;
  };
  struct FsdpStream {
    std::deque<FsdpComm> queue;
    bool busy = false;
  };
  struct Stage {
    std::deque<Comm> queue;
    bool busy = false;
    std::size_t buckets_done = 0;
    std::size_t gathers_left = 0;
    std::vector<uint32_t> ready_count;     // per bucket: units that have it ready
    std::vector<BucketTiming> timings;     // per bucket
    std::vector<uint32_t> gather_waiters;  // units whose first forward waits for the gathers
    uint32_t units_done = 0;
    bool done = false;
    // Expert all-to-all barrier: units arrived, and those waiting.
    uint32_t ep_arrived = 0;
    std::vector<uint32_t> ep_waiting;
    // FSDP: the all-gather and reduce-scatter streams, the running operation's unit gathers
    // issued and finished, whether the root unit is gathered, and reduce-scatters not yet done.
    FsdpStream gathers;
    FsdpStream reduces;
    uint32_t op_gathers_issued = 0;
    uint32_t op_gathers_done = 0;
    bool root_gathered = true;
    bool waiting_for_gather = false;
    uint32_t reduces_left = 0;
  };

  Time now() const { return backend_.simulation().now(); }
  EventQueue& queue() { return backend_.simulation().queue(); }

  void prepare();

  // GPUs per host of the rank mapping: whether the first `span` ranks of a stage sit on more than
  // one host.
  bool spans_hosts_of(uint32_t span) const;

  uint32_t stage_of_gpu(uint32_t gpu);

  void reset();

  std::size_t unit_index(uint32_t stage, uint32_t u) const {
    return static_cast<std::size_t>(stage) * units_per_stage_ + u;
  }
  std::size_t input_index(uint32_t vstage, uint32_t j, uint32_t u) const {
    return (static_cast<std::size_t>(vstage) * m_ + j) * units_per_stage_ + u;
  }
  // Rank offsets inside a stage's block that unit u stands for: all of them (lockstep), or one
  // replica's TP group.
  std::vector<uint32_t> unit_offsets(uint32_t u) const;

  // The compute of one operation of virtual stage s (unscaled) and its fixed exposed TP / CP time.
  std::pair<Time, Time> op_work(uint32_t s, bool forward) const;

  // A collective an operation waits for inside its compute, every group of the stage at once: a
  // TP collective of the activations (live when TP groups span hosts), an expert all-to-all,
  // under EP x TP the all-gather / reduce-scatter over TP of the dispatched tokens (live with the
  // TP collectives, else at idle-fabric time in the operation's fixed time), or a block's K/V
  // ring beside its attention core (CP groups across hosts).
  enum class BarrierKind {
    TensorActivations,
    ExpertAllToAll,
    ExpertTensorGather,
    ExpertTensorScatter,
    ContextRing
  };
  struct Barrier {
    BarrierKind kind = BarrierKind::ExpertAllToAll;
    CollectiveOp op = CollectiveOp::AllToAll;
  };
  // The barriers of an operation of virtual stage s in the order it meets them, block by block
  // (backward walks the blocks in reverse): per block its TP collectives when live, then for a
  // MoE block each dispatch all-to-all, its TP all-gather when live, the TP reduce-scatter and
  // the combine all-to-all.
  std::vector<Barrier> barrier_plan(uint32_t s, bool forward) const;
  uint32_t barriers(uint32_t s, bool forward) const {
    return static_cast<uint32_t>(barrier_plans_[s * 2 + (forward ? 1 : 0)].size());
  }

  // When compute of `work` (unscaled) started now on unit (i, u) ends.
  Time compute_end(const Unit& unit, Time work);

  void try_start(uint32_t i, uint32_t u);

  // Runs the current operation's next compute piece: the operation is cut into equal pieces
  // around its barriers (expert all-to-alls and their TP gathers, TP collectives across hosts).
  void run_piece(uint32_t i, uint32_t u);

  void piece_done(uint32_t i, uint32_t u);

  // FSDP with TP or CP groups across hosts: a unit's compute runs in stretches between its
  // blocks' live TP collectives or K/V rings; the last stretch ends the piece.
  void run_fsdp_stretch(uint32_t i, uint32_t u);
  void fsdp_stretch_done(uint32_t i, uint32_t u);
  uint32_t fsdp_barriers(uint32_t layers, bool forward) const {
    if (tp_live_) return layers * (forward ? tp_forward_per_layer_ : tp_backward_per_layer_);
    return cp_live_ ? layers : 0;
  }

  // Data-parallel buckets the stage runs (none with FSDP, whose units carry the gradients).
  std::size_t dp_bucket_count(uint32_t i) const;
  uint32_t fsdp_units(uint32_t s) const;
  // Blocks of the q-th unit an operation of virtual stage s runs (backward walks them in reverse).
  uint32_t fsdp_unit_layers(uint32_t s, bool forward, uint32_t q) const;
  void fsdp_gather_unit(uint32_t i, uint32_t s, bool forward, uint32_t q);
  void fsdp_issue(uint32_t i, FsdpComm c);
  void fsdp_pump(uint32_t i, FsdpStream& stream);
  void fsdp_done(uint32_t i, FsdpComm c);

  void arrive_barrier(uint32_t i, uint32_t u, uint32_t index);
  // A unit waiting at a barrier goes on: its next FSDP stretch, or its next compute piece.
  void resume_unit(uint32_t i, uint32_t u);
  // A block's K/V ring beside its attention core, for the units waiting at the barrier: the
  // all-gather (forward), then the gradients' reduce-scatter too (backward); they resume when
  // both the ring and the slowest unit's attention are done.
  void context_parallel_ring(uint32_t i, bool forward, const std::vector<uint32_t>& waiting);
  // Every group of `groups` runs barrier collective `c`; then the waiting units go on.
  void run_barrier(uint32_t i, const char* kind, int64_t bytes,
                   const IdleCollectiveTimer::Collective& c, const Groups& groups,
                   uint32_t first_communicator, std::vector<uint32_t> waiting);

  void end_op(uint32_t i, uint32_t u);

  // The pipeline send from virtual stage `from` to `to` of micro-batch j for unit u: every GPU
  // pair the unit stands for, at once.
  void send(uint32_t from, uint32_t to, uint32_t j, uint32_t u, bool forward);

  void bucket_ready(uint32_t i, std::size_t k);

  // The stage's communication stream: one collective at a time, every group at once.
  void pump(uint32_t i);

  void comm_done(uint32_t i, Comm comm);

  void check_stage(uint32_t i);

  void finish_step();

  // Starts a communication slice for the trace (unit 0's only): its index, or npos.
  std::size_t record(uint32_t u, const char* kind, uint32_t stage, int64_t bytes);
  void close(std::size_t slice);

  // Every group of `groups` runs `c` at once: live on the fabric (GroupCollectives), or with
  // idle-fabric timing for the call's duration on the idle fabric, shared with the collectives
  // that overlap it on the same groups (one ProcessorSharing server per set of groups).
  void run_groups(const IdleCollectiveTimer::Collective& c, const Groups& groups,
                  uint32_t first_communicator, std::function<void()> done);

  TransferBackend& backend_;
  const net::NetworkSpec& spec_;
  Fidelity fidelity_;
  const StepConfig& config_;
  bool prepared_ = false;
  StepResult closed_;
  ParallelStepParts parts_;
  std::unique_ptr<IdleCollectiveTimer> timer_;
  IdleCollectiveTimer::Collective p2p_;  // a pipeline send between two GPUs
  uint32_t tp_ = 1, cp_ = 1, p_ = 1, v_ = 1, m_ = 1, dp_ = 1, block_ = 1, stages_total_ = 1;
  uint32_t units_per_stage_ = 1;
  std::vector<std::vector<PipelineOperation>> order_;
  std::vector<Unit> units_;
  std::vector<double> rank_multiplier_;
  std::vector<std::vector<uint32_t>> bucket_chunk_;
  std::vector<std::vector<double>> bucket_within_;
  std::vector<Groups> stage_ep_groups_;
  std::vector<std::vector<Barrier>> barrier_plans_;  // per virtual stage: backward, forward
  // TP groups across hosts: their collectives run live (tp_live_), per stage every TP group.
  bool tp_live_ = false;
  std::vector<Groups> stage_tp_groups_;
  // CP groups across hosts: each block's K/V ring runs live beside its attention core (cp_live_),
  // per stage every CP group.
  bool cp_live_ = false;
  std::vector<Groups> stage_cp_groups_;
  int64_t tp_bytes_ = 0;
  uint32_t tp_forward_per_layer_ = 0;
  uint32_t tp_backward_per_layer_ = 0;
  std::vector<uint32_t> gpu_stage_;
  std::vector<std::string> warnings_;
  // Per step.
  std::vector<bool> forward_in_;
  std::vector<bool> backward_in_;
  std::vector<Stage> stages_;
  std::vector<PipelineOperation> schedule_;
  std::vector<CommunicationSlice> communication_;
  std::vector<Time> stage_end_;
  std::vector<Time> rank_backward_start_;
  std::vector<Time> rank_backward_end_;
  uint32_t stages_left_ = 0;
  Time step_start_ = Time::zero();
  std::function<void()> done_;
  StepResult result_;
  GroupCollectives groups_{backend_};
  // Idle-fabric timing: the duration of each distinct call (by its groups' server, op, algorithm
  // and size), and one server per set of groups (keyed by the call's first group).
  struct TimedCall {
    std::size_t server = 0;
    CollectiveOp op = CollectiveOp::AllReduce;
    CollectiveAlgo algo = CollectiveAlgo::Ring;
    int64_t bytes = 0;
    auto operator<=>(const TimedCall&) const = default;
  };
  std::map<std::vector<uint32_t>, std::size_t> server_of_group_;
  std::vector<std::unique_ptr<ProcessorSharing>> servers_;
  std::map<TimedCall, Time> call_durations_;
};

}  // namespace syncsim::models
