#include "models/model_parallel_step.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <stdexcept>
#include <utility>

#include "models/group_collectives.hpp"
#include "models/idle_collective_timer.hpp"
#include "models/parallelism.hpp"
#include "models/pipeline_schedule.hpp"
#include "sim/core/simulation.hpp"

namespace syncsim::models {

namespace {

using Groups = std::vector<std::vector<uint32_t>>;

// Communicator numbers of the step's groups (CollectiveRunOptions::communicator): pipeline pairs,
// expert groups and each stage's data-parallel groups open their own connections.
constexpr uint32_t kPipelineCommunicators = 0;
constexpr uint32_t kExpertCommunicators = 16384;
constexpr uint32_t kDataCommunicators = 32768;
constexpr uint32_t kTensorCommunicators = 49152;

class ModelParallelStepEngine final : public StepEngine {
 public:
  ModelParallelStepEngine(TransferBackend& backend, const net::NetworkSpec& spec, Fidelity fidelity,
                          const StepConfig& config)
      : backend_(backend), spec_(spec), fidelity_(fidelity), config_(config) {}

  bool loads_fabric() const override { return true; }

  void begin(std::function<void()> done) override {
    if (!prepared_) prepare();
    reset();
    done_ = std::move(done);
    step_start_ = now();
    // The distributed optimizer's parameter all-gathers (the previous step's update), bucket by
    // bucket on each stage's communication stream.
    for (uint32_t i = 0; i < p_; ++i) {
      if (parts_.sharded_optimizer) {
        for (std::size_t k = 0; k < parts_.stage_buckets[i].size(); ++k) {
          stages_[i].queue.push_back(Comm{true, k});
        }
        stages_[i].gathers_left = parts_.stage_buckets[i].size();
      }
      pump(i);
      // FSDP: the root unit (embedding, head) is gathered before the stage's first forward.
      if (parts_.fsdp && parts_.fsdp_root_gather_bytes[i] > 0) {
        stages_[i].root_gathered = false;
        fsdp_issue(i, FsdpComm{CollectiveOp::AllGather, parts_.fsdp_root_gather_bytes[i], true});
      }
    }
    for (uint32_t i = 0; i < p_; ++i)
      for (uint32_t u = 0; u < units_per_stage_; ++u) try_start(i, u);
  }

  StepResult result() override { return result_; }

 private:
  struct Unit {
    std::size_t next = 0;  // index into the rank's operation order
    bool busy = false;
    double multiplier = 1.0;             // the slowest of the unit's ranks
    std::vector<uint32_t> slowed_ranks;  // ranks with timed stragglers
    Time op_start = Time::zero();
    Time nominal = Time::zero();  // the running operation's duration without stragglers/barriers
    uint32_t piece = 0;           // the running operation's compute piece
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

  void prepare() {
    if (const auto refusal = model_parallel_step_refusal(config_)) {
      throw std::invalid_argument(*refusal);
    }
    closed_ = simulate_parallel_step(spec_, fidelity_, config_, &parts_);
    timer_ = std::make_unique<IdleCollectiveTimer>(spec_, fidelity_, config_);
    const ParallelLayout& l = config_.layout;
    tp_ = std::max<uint32_t>(1, l.tensor);
    cp_ = std::max<uint32_t>(1, l.context);
    p_ = std::max<uint32_t>(1, l.pipeline);
    v_ = std::max<uint32_t>(1, l.virtual_pipeline);
    m_ = std::max<uint32_t>(1, config_.grad_accumulation);
    dp_ = parts_.data_parallel;
    block_ = tp_ * cp_ * dp_;
    stages_total_ = p_ * v_;
    units_per_stage_ = config_.model_parallel_lockstep || parts_.fsdp ? 1 : cp_ * dp_;
    if (parts_.fsdp && !config_.model_parallel_lockstep) {
      warnings_.push_back(
          "lockstep_replicas: false is not modelled with FSDP (its gathers and reduce-scatters "
          "span the replicas); the replicas of a stage advance together");
    }
    order_ = pipeline_operation_order(p_, v_, m_);
    // Units: the ranks each stands for, their slowest multiplier and timed stragglers.
    const std::vector<double> multiplier = rank_compute_multipliers(config_, p_ * block_);
    units_.assign(static_cast<std::size_t>(p_) * units_per_stage_, Unit{});
    for (uint32_t i = 0; i < p_; ++i) {
      for (uint32_t u = 0; u < units_per_stage_; ++u) {
        Unit& unit = units_[unit_index(i, u)];
        for (const uint32_t o : unit_offsets(u)) {
          const uint32_t rank = i * block_ + o;
          unit.multiplier = std::max(unit.multiplier, multiplier[rank]);
          for (const ComputeSlowdown& s : config_.perturbations.slowdowns) {
            if (s.rank == rank) unit.slowed_ranks.push_back(rank);
          }
        }
        std::sort(unit.slowed_ranks.begin(), unit.slowed_ranks.end());
        unit.slowed_ranks.erase(std::unique(unit.slowed_ranks.begin(), unit.slowed_ranks.end()),
                                unit.slowed_ranks.end());
      }
    }
    rank_multiplier_ = multiplier;
    // Each bucket's place in the last micro-batch's backward: the chunk whose backward makes it
    // ready (buckets fill from the last layers), and the fraction of that chunk's backward.
    bucket_chunk_.resize(p_);
    bucket_within_.resize(p_);
    for (uint32_t i = 0; i < p_; ++i) {
      for (const StageBucket& b : parts_.stage_buckets[i]) {
        const double at = std::clamp(b.bucket.ready_at, 0.0, 1.0) * v_;
        const auto k = std::min<uint32_t>(v_ - 1, static_cast<uint32_t>(std::floor(at)));
        bucket_chunk_[i].push_back(v_ - 1 - k);
        bucket_within_[i].push_back(at - k);
      }
    }
    // A pipeline send is one transfer per GPU pair. NCCL moves it in chunks of a few hundred KiB,
    // several in flight, so on a path it has to itself it runs at the path's rate after one
    // chunk's latency; the closed form times that chunked plan, the engine one transfer, which
    // the flow and packet models share with the other traffic as the chunks would be (the two
    // differ by the pipeline's fill, one chunk's time per send). Far fewer transfers: a 16 MiB
    // send is one instead of 32.
    if (parts_.p2p_bytes > 0) {
      PlanOptions o;
      o.op = CollectiveOp::SendRecv;
      o.algo = CollectiveAlgo::Pairwise;
      o.ranks = 2;
      o.bytes = parts_.p2p_bytes;
      o.channels = config_.channels;
      o.gpus_per_host = config_.gpus_per_host;
      o.nics_per_host = config_.nics_per_host;
      p2p_.protocol = NcclProtocol::Simple;
      p2p_.run = shape_step_collective(config_, NcclProtocol::Simple, o);
      o.chunk_bytes = parts_.p2p_bytes;
      o.root = 0;
      o.peer = 1;
      p2p_.plan = build_plan(o);
    }
    // The stage's expert groups: EP groups whose ranks lie in stage i.
    stage_ep_groups_.assign(p_, {});
    for (const auto& g : parts_.ep_groups) {
      if (g.empty()) continue;
      stage_ep_groups_[stage_of_gpu(g.front())].push_back(g);
    }
    if (tp_ > 1 && spans_hosts_of(tp_)) {
      if (!parts_.fsdp && !config_.layout.tp_comm_overlap) {
        // A TP group across hosts: its collectives run live, per block, as barriers inside the
        // operation (every TP group of the stage at once).
        tp_live_ = true;
        tp_bytes_ = tp_activation_bytes(config_.model, config_.compute, config_.layout);
        const auto [forward, backward] = tp_collectives_per_layer(config_.compute);
        const int pairs = config_.layout.sequence_parallel ? 2 : 1;  // all-gather + reduce-scatter
        tp_forward_per_layer_ = static_cast<uint32_t>(forward * pairs);
        tp_backward_per_layer_ = static_cast<uint32_t>(backward * pairs);
        stage_tp_groups_.assign(p_, {});
        for (uint32_t i = 0; i < p_; ++i) {
          for (uint32_t r = 0; r < cp_ * dp_; ++r) {
            std::vector<uint32_t> g;
            for (uint32_t t = 0; t < tp_; ++t) {
              g.push_back(config_.rank_to_gpu[i * block_ + r * tp_ + t]);
            }
            stage_tp_groups_[i].push_back(std::move(g));
          }
        }
      } else {
        warnings_.push_back(
            "tensor-parallel groups span hosts: with FSDP or tp_comm_overlap their collectives "
            "are timed on an idle fabric and do not load the shared one");
      }
    }
    if (cp_ > 1 && spans_hosts_of(tp_ * cp_)) {
      warnings_.push_back(
          "context-parallel groups span hosts: their K/V exchange is timed on an idle fabric and "
          "does not load the shared one");
    }
    prepared_ = true;
  }

  // GPUs per host of the rank mapping: whether the first `span` ranks of a stage sit on more than
  // one host.
  bool spans_hosts_of(uint32_t span) const {
    const uint32_t per_host = std::max<uint32_t>(1, config_.gpus_per_host);
    const uint32_t first = config_.rank_to_gpu[0] / per_host;
    for (uint32_t r = 1; r < span && r < config_.rank_to_gpu.size(); ++r) {
      if (config_.rank_to_gpu[r] / per_host != first) return true;
    }
    return false;
  }

  uint32_t stage_of_gpu(uint32_t gpu) {
    if (gpu_stage_.empty()) {
      gpu_stage_.assign(
          *std::max_element(config_.rank_to_gpu.begin(), config_.rank_to_gpu.end()) + 1, 0);
      for (uint32_t r = 0; r < config_.rank_to_gpu.size(); ++r) {
        gpu_stage_[config_.rank_to_gpu[r]] = r / block_;
      }
    }
    return gpu_stage_[gpu];
  }

  void reset() {
    const std::size_t inputs = static_cast<std::size_t>(stages_total_) * m_ * units_per_stage_;
    forward_in_.assign(inputs, false);
    backward_in_.assign(inputs, false);
    for (Unit& u : units_) {
      u.next = 0;
      u.busy = false;
    }
    stages_.assign(p_, Stage{});
    for (uint32_t i = 0; i < p_; ++i) {
      const auto n = parts_.stage_buckets[i].size();
      stages_[i].ready_count.assign(n, 0);
      stages_[i].timings.assign(n, BucketTiming{});
      for (std::size_t k = 0; k < n; ++k) {
        stages_[i].timings[k].bytes = parts_.stage_buckets[i][k].bucket.size.count();
      }
    }
    schedule_.clear();
    communication_.clear();
    stage_end_.assign(p_, Time::zero());
    stages_left_ = p_;
    rank_backward_start_.assign(p_, Time::zero());
    rank_backward_end_.assign(p_, Time::zero());
  }

  std::size_t unit_index(uint32_t stage, uint32_t u) const {
    return static_cast<std::size_t>(stage) * units_per_stage_ + u;
  }
  std::size_t input_index(uint32_t vstage, uint32_t j, uint32_t u) const {
    return (static_cast<std::size_t>(vstage) * m_ + j) * units_per_stage_ + u;
  }
  // Rank offsets inside a stage's block that unit u stands for: all of them (lockstep), or one
  // replica's TP group.
  std::vector<uint32_t> unit_offsets(uint32_t u) const {
    std::vector<uint32_t> o;
    if (units_per_stage_ == 1) {
      o.resize(block_);
      for (uint32_t k = 0; k < block_; ++k) o[k] = k;
    } else {
      for (uint32_t t = 0; t < tp_; ++t) o.push_back(u * tp_ + t);
    }
    return o;
  }

  // The compute of one operation of virtual stage s (unscaled) and its fixed exposed TP / CP time.
  std::pair<Time, Time> op_work(uint32_t s, bool forward) const {
    const uint32_t n = parts_.virtual_stage_layers[s];
    const uint32_t moe = parts_.virtual_stage_moe_layers[s];
    const auto dense = static_cast<int64_t>(n - moe);
    const auto moe_n = static_cast<int64_t>(moe);
    Time compute = forward ? parts_.dense_forward * dense + parts_.moe_forward * moe_n
                           : parts_.dense_backward * dense + parts_.moe_backward * moe_n;
    if (s + 1 == stages_total_) compute += forward ? parts_.head_forward : parts_.head_backward;
    const Time tp = tp_live_ ? Time::zero() : (forward ? parts_.tp_forward : parts_.tp_backward);
    const Time fixed =
        (tp + (forward ? parts_.cp_forward : parts_.cp_backward)) * static_cast<int64_t>(n);
    return {compute, fixed};
  }

  // The collectives an operation of virtual stage s waits for inside its compute: the live TP
  // collectives of its blocks, or its MoE blocks' expert all-to-alls (EP with TP > 1 is refused).
  uint32_t all_to_alls(uint32_t s, bool forward) const {
    if (tp_live_) {
      return parts_.virtual_stage_layers[s] *
             (forward ? tp_forward_per_layer_ : tp_backward_per_layer_);
    }
    if (parts_.ep_bytes <= 0) return 0;
    const int per_layer = forward ? parts_.ep_forward_count : parts_.ep_backward_count;
    return parts_.virtual_stage_moe_layers[s] * static_cast<uint32_t>(per_layer);
  }

  // When compute of `work` (unscaled) started now on unit (i, u) ends.
  Time compute_end(const Unit& unit, Time work) {
    const Time start = now();
    Time end = start + scaled(work, unit.multiplier);
    for (const uint32_t rank : unit.slowed_ranks) {
      end = std::max(end, compute_finish(config_.perturbations.slowdowns, rank, start,
                                         scaled(work, rank_multiplier_[rank])));
    }
    return end;
  }

  void try_start(uint32_t i, uint32_t u) {
    Unit& unit = units_[unit_index(i, u)];
    if (unit.busy || unit.next >= order_[i].size()) return;
    const PipelineOperation& op = order_[i][unit.next];
    const uint32_t s = op.virtual_stage(p_);
    const uint32_t j = op.micro_batch;
    const bool ready = op.forward ? (s == 0 || forward_in_[input_index(s, j, u)])
                                  : (s + 1 == stages_total_ || backward_in_[input_index(s, j, u)]);
    if (!ready) return;
    unit.busy = true;
    unit.op_start = now();
    unit.piece = 0;
    const auto [work, fixed] = op_work(s, op.forward);
    unit.nominal = scaled(work, unit.multiplier) + fixed;
    if (parts_.fsdp) {
      // The operation's first unit is gathered now (exposed); each later one while the unit
      // before it computes (prefetch one ahead).
      stages_[i].op_gathers_issued = 0;
      stages_[i].op_gathers_done = 0;
      fsdp_gather_unit(i, s, op.forward, 0);
    }
    if (!op.forward && j + 1 == m_) {
      if (u == 0) rank_backward_start_[i] = std::max(rank_backward_start_[i], now());
      // Gradient buckets of this chunk become ready during its last backward.
      for (std::size_t k = 0; k < dp_bucket_count(i) && k < bucket_chunk_[i].size(); ++k) {
        if (bucket_chunk_[i][k] != op.chunk) continue;
        const Time at = now() + scaled(unit.nominal, bucket_within_[i][k]);
        queue().schedule_fn(at, [this, i, k] { bucket_ready(i, k); });
      }
    }
    run_piece(i, u);
  }

  // Runs the current operation's next compute piece: the operation is cut into equal pieces
  // around its expert all-to-alls.
  void run_piece(uint32_t i, uint32_t u) {
    Unit& unit = units_[unit_index(i, u)];
    const PipelineOperation& op = order_[i][unit.next];
    const uint32_t s = op.virtual_stage(p_);
    if (parts_.fsdp) {
      // FSDP: unit `piece` (in forward order, reversed in backward) once it is gathered.
      Stage& st = stages_[i];
      if (st.op_gathers_done <= unit.piece || !st.root_gathered) {
        st.waiting_for_gather = true;
        return;
      }
      if (unit.piece + 1 < fsdp_units(s)) fsdp_gather_unit(i, s, op.forward, unit.piece + 1);
      const uint32_t layers = fsdp_unit_layers(s, op.forward, unit.piece);
      const bool head = s + 1 == stages_total_ &&
                        (op.forward ? unit.piece + 1 == fsdp_units(s) : unit.piece == 0);
      Time work = (op.forward ? parts_.dense_forward : parts_.dense_backward) * layers;
      if (head) work += op.forward ? parts_.head_forward : parts_.head_backward;
      const Time fixed = (op.forward ? parts_.tp_forward + parts_.cp_forward
                                     : parts_.tp_backward + parts_.cp_backward) *
                         static_cast<int64_t>(layers);
      const Time end = std::max(compute_end(unit, work) + fixed, now());
      queue().schedule_fn(end, [this, i, u] { piece_done(i, u); });
      return;
    }
    const auto [work, fixed] = op_work(s, op.forward);
    const auto pieces = static_cast<int64_t>(all_to_alls(s, op.forward)) + 1;
    const Time end = std::max(compute_end(unit, work / pieces) + fixed / pieces, now());
    queue().schedule_fn(end, [this, i, u] { piece_done(i, u); });
  }

  void piece_done(uint32_t i, uint32_t u) {
    Unit& unit = units_[unit_index(i, u)];
    const PipelineOperation& op = order_[i][unit.next];
    if (parts_.fsdp) {
      const uint32_t s = op.virtual_stage(p_);
      if (!op.forward) {
        // The unit's gradients are reduce-scattered on their own stream.
        ++stages_[i].reduces_left;
        fsdp_issue(i, FsdpComm{CollectiveOp::ReduceScatter,
                               parts_.fsdp_layer_reduce_bytes *
                                   static_cast<int64_t>(fsdp_unit_layers(s, false, unit.piece)),
                               false});
      }
      if (++unit.piece < fsdp_units(s)) {
        run_piece(i, u);
        return;
      }
      end_op(i, u);
      return;
    }
    if (unit.piece < all_to_alls(op.virtual_stage(p_), op.forward)) {
      ++unit.piece;
      arrive_all_to_all(i, u, unit.piece - 1);
      return;
    }
    // The stage's first forward ends no earlier than its parameter all-gathers.
    if (unit.next == 0 && stages_[i].gathers_left > 0) {
      stages_[i].gather_waiters.push_back(u);
      return;
    }
    end_op(i, u);
  }

  // Data-parallel buckets the stage runs (none with FSDP, whose units carry the gradients).
  std::size_t dp_bucket_count(uint32_t i) const {
    return parts_.fsdp ? 0 : parts_.stage_buckets[i].size();
  }
  uint32_t fsdp_units(uint32_t s) const {
    const uint32_t lpu = std::max<uint32_t>(1, parts_.fsdp_layers_per_unit);
    return (parts_.virtual_stage_layers[s] + lpu - 1) / lpu;
  }
  // Blocks of the q-th unit an operation of virtual stage s runs (backward walks them in reverse).
  uint32_t fsdp_unit_layers(uint32_t s, bool forward, uint32_t q) const {
    const uint32_t lpu = std::max<uint32_t>(1, parts_.fsdp_layers_per_unit);
    const uint32_t units = fsdp_units(s);
    const uint32_t x = forward ? q : units - 1 - q;
    return std::min(lpu, parts_.virtual_stage_layers[s] - x * lpu);
  }
  void fsdp_gather_unit(uint32_t i, uint32_t s, bool forward, uint32_t q) {
    Stage& st = stages_[i];
    if (q < st.op_gathers_issued) return;
    st.op_gathers_issued = q + 1;
    fsdp_issue(i, FsdpComm{CollectiveOp::AllGather,
                           parts_.fsdp_layer_gather_bytes *
                               static_cast<int64_t>(fsdp_unit_layers(s, forward, q)),
                           false});
  }
  void fsdp_issue(uint32_t i, FsdpComm c) {
    Stage& st = stages_[i];
    FsdpStream& stream = c.op == CollectiveOp::AllGather ? st.gathers : st.reduces;
    stream.queue.push_back(c);
    fsdp_pump(i, stream);
  }
  void fsdp_pump(uint32_t i, FsdpStream& stream) {
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
  void fsdp_done(uint32_t i, FsdpComm c) {
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

  void arrive_all_to_all(uint32_t i, uint32_t u, uint32_t index) {
    Stage& st = stages_[i];
    st.ep_waiting.push_back(u);
    if (++st.ep_arrived < units_per_stage_) return;
    st.ep_arrived = 0;
    std::vector<uint32_t> waiting;
    waiting.swap(st.ep_waiting);
    if (tp_live_) {
      // Megatron's sequence parallelism: an all-gather, then (after the GEMMs) a reduce-scatter;
      // without it all-reduces.
      const CollectiveOp op = !config_.layout.sequence_parallel ? CollectiveOp::AllReduce
                              : index % 2 == 0                  ? CollectiveOp::AllGather
                                                                : CollectiveOp::ReduceScatter;
      const char* kind = op == CollectiveOp::AllReduce   ? "tp_all_reduce"
                         : op == CollectiveOp::AllGather ? "tp_all_gather"
                                                         : "tp_reduce_scatter";
      const std::size_t slice = record(0, kind, i, tp_bytes_);
      auto resume = [this, i, waiting, slice] {
        close(slice);
        for (const uint32_t w : waiting) run_piece(i, w);
      };
      const auto& c = timer_->plan(op, CollectiveAlgo::Ring, tp_, tp_bytes_);
      run_groups(c, stage_tp_groups_[i],
                 kTensorCommunicators + i * static_cast<uint32_t>(stage_tp_groups_[i].size()),
                 std::move(resume));
      return;
    }
    const auto& groups = stage_ep_groups_[i];
    const auto ranks = static_cast<uint32_t>(groups.empty() ? 0 : groups.front().size());
    const std::size_t slice = record(0, "ep_all_to_all", i, parts_.ep_bytes);
    auto resume = [this, i, waiting, slice] {
      close(slice);
      for (const uint32_t w : waiting) run_piece(i, w);
    };
    if (ranks < 2) {
      queue().schedule_fn(now(), resume);
      return;
    }
    const auto& c =
        timer_->plan(CollectiveOp::AllToAll, CollectiveAlgo::Pairwise, ranks, parts_.ep_bytes);
    run_groups(c, groups, kExpertCommunicators + i * static_cast<uint32_t>(groups.size()),
               std::move(resume));
  }

  void end_op(uint32_t i, uint32_t u) {
    Unit& unit = units_[unit_index(i, u)];
    const PipelineOperation op = order_[i][unit.next];
    const uint32_t s = op.virtual_stage(p_);
    if (u == 0) {
      PipelineOperation done = op;
      done.start = unit.op_start - step_start_;
      done.end = now() - step_start_;
      schedule_.push_back(done);
      if (!op.forward && op.micro_batch + 1 == m_) {
        rank_backward_end_[i] = std::max(rank_backward_end_[i], now());
      }
    }
    if (op.forward && s + 1 < stages_total_) send(s, s + 1, op.micro_batch, u, true);
    if (!op.forward && s > 0) send(s, s - 1, op.micro_batch, u, false);
    unit.busy = false;
    ++unit.next;
    if (unit.next == order_[i].size() && parts_.fsdp && parts_.fsdp_root_reduce_bytes[i] > 0) {
      ++stages_[i].reduces_left;
      fsdp_issue(i, FsdpComm{CollectiveOp::ReduceScatter, parts_.fsdp_root_reduce_bytes[i], true});
    }
    if (unit.next == order_[i].size()) {
      ++stages_[i].units_done;
      check_stage(i);
    }
    try_start(i, u);
  }

  // The pipeline send from virtual stage `from` to `to` of micro-batch j for unit u: every GPU
  // pair the unit stands for, at once.
  void send(uint32_t from, uint32_t to, uint32_t j, uint32_t u, bool forward) {
    const uint32_t rank_from = from % p_;
    const uint32_t rank_to = to % p_;
    const std::size_t slice = record(u, "pp_send", rank_from, parts_.p2p_bytes);
    auto arrived = [this, to, j, u, forward, rank_to, slice] {
      close(slice);
      (forward ? forward_in_ : backward_in_)[input_index(to, j, u)] = true;
      try_start(rank_to, u);
    };
    if (parts_.p2p_bytes <= 0) {
      queue().schedule_fn(now(), arrived);
      return;
    }
    Groups pairs;
    for (const uint32_t o : unit_offsets(u)) {
      pairs.push_back(
          {config_.rank_to_gpu[rank_from * block_ + o], config_.rank_to_gpu[rank_to * block_ + o]});
    }
    run_groups(p2p_, pairs, kPipelineCommunicators + std::min(rank_from, rank_to),
               std::move(arrived));
  }

  void bucket_ready(uint32_t i, std::size_t k) {
    Stage& st = stages_[i];
    if (++st.ready_count[k] < units_per_stage_) return;
    st.timings[k].ready = now() - step_start_;
    st.queue.push_back(Comm{false, k});
    pump(i);
  }

  // The stage's communication stream: one collective at a time, every group at once.
  void pump(uint32_t i) {
    Stage& st = stages_[i];
    if (st.busy || st.queue.empty()) return;
    const Comm comm = st.queue.front();
    st.queue.pop_front();
    st.busy = true;
    const StageBucket& b = parts_.stage_buckets[i][comm.bucket];
    const Groups& groups = b.expert ? parts_.stage_expert_groups[i] : parts_.stage_dense_groups[i];
    const auto ranks = static_cast<uint32_t>(groups.empty() ? 0 : groups.front().size());
    const CollectiveOp op = comm.gather                ? CollectiveOp::AllGather
                            : parts_.sharded_optimizer ? CollectiveOp::ReduceScatter
                                                       : CollectiveOp::AllReduce;
    const CollectiveAlgo algo =
        op == CollectiveOp::AllReduce ? parts_.dp_algorithm : CollectiveAlgo::Ring;
    if (!comm.gather) {
      st.timings[comm.bucket].start = now() - step_start_;
      st.timings[comm.bucket].protocol =
          step_protocol(config_, op, algo, ranks, b.bucket.size.count());
    }
    const char* kind = comm.gather                ? "dp_param_all_gather"
                       : parts_.sharded_optimizer ? "dp_reduce_scatter"
                                                  : "dp_all_reduce";
    const std::size_t slice = record(0, kind, i, b.bucket.size.count());
    auto finished = [this, i, comm, slice] {
      close(slice);
      comm_done(i, comm);
    };
    if (ranks < 2) {
      queue().schedule_fn(now(), finished);
      return;
    }
    const auto& c = timer_->plan(op, algo, ranks, b.bucket.size.count());
    run_groups(
        c, groups,
        kDataCommunicators + (i * 2 + (b.expert ? 1 : 0)) * static_cast<uint32_t>(groups.size()),
        std::move(finished));
  }

  void comm_done(uint32_t i, Comm comm) {
    Stage& st = stages_[i];
    st.busy = false;
    if (comm.gather) {
      if (--st.gathers_left == 0) {
        std::vector<uint32_t> waiters;
        waiters.swap(st.gather_waiters);
        for (const uint32_t u : waiters) end_op(i, u);
      }
    } else {
      st.timings[comm.bucket].end = now() - step_start_;
      ++st.buckets_done;
    }
    pump(i);
    check_stage(i);
  }

  void check_stage(uint32_t i) {
    Stage& st = stages_[i];
    if (st.done || st.units_done < units_per_stage_ || st.buckets_done < dp_bucket_count(i) ||
        st.gathers_left > 0 || st.reduces_left > 0) {
      return;
    }
    st.done = true;
    stage_end_[i] = now();
    if (--stages_left_ > 0) return;
    // Every stage is done: the optimizer, then the step ends.
    queue().schedule_fn(now() + closed_.optimizer, [this] { finish_step(); });
  }

  void finish_step() {
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

  // Starts a communication slice for the trace (unit 0's only): its index, or npos.
  std::size_t record(uint32_t u, const char* kind, uint32_t stage, int64_t bytes) {
    if (u != 0) return static_cast<std::size_t>(-1);
    communication_.push_back(
        CommunicationSlice{kind, stage, bytes, now() - step_start_, now() - step_start_});
    return communication_.size() - 1;
  }
  void close(std::size_t slice) {
    if (slice < communication_.size()) communication_[slice].end = now() - step_start_;
  }

  // Every group of `groups` runs `c` at once (GroupCollectives).
  void run_groups(const IdleCollectiveTimer::Collective& c, const Groups& groups,
                  uint32_t first_communicator, std::function<void()> done) {
    groups_.run(c.plan, c.run, groups, first_communicator, std::move(done));
  }

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
  // TP groups across hosts: their collectives run live (tp_live_), per stage every TP group.
  bool tp_live_ = false;
  std::vector<Groups> stage_tp_groups_;
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
};

}  // namespace

std::optional<std::string> model_parallel_step_refusal(const StepConfig& config) {
  if (config.parallelism == DataParallelism::Fsdp && config.fsdp.shard_degree != 0 &&
      config.fsdp.shard_degree != config.rank_to_gpu.size()) {
    return "HSDP composed with model parallelism is not modelled";
  }
  return std::nullopt;
}

std::unique_ptr<StepEngine> make_model_parallel_step_engine(TransferBackend& backend,
                                                            const net::NetworkSpec& spec,
                                                            Fidelity fidelity,
                                                            const StepConfig& config) {
  return std::make_unique<ModelParallelStepEngine>(backend, spec, fidelity, config);
}

StepResult simulate_model_parallel_step(TransferBackend& backend, const net::NetworkSpec& spec,
                                        Fidelity fidelity, const StepConfig& config) {
  auto engine = make_model_parallel_step_engine(backend, spec, fidelity, config);
  return run_step_to_end(*engine, backend);
}

}  // namespace syncsim::models
