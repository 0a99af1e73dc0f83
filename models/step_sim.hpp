#pragma once
// The event-driven DDP training step: each rank computes forward and backward (with optional noise
// and a straggler), gradients become ready bucket by bucket during the last micro-batch's backward,
// and each bucket's all-reduce runs through the collectives library on the scenario's network
// backend, one bucket at a time on the communication stream (a bucket starts when every rank has it
// ready and the previous bucket has finished). The optimizer runs when both backward and the last
// bucket are done.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/compute_slowdown.hpp"
#include "models/gpu.hpp"
#include "models/pipeline_schedule.hpp"
#include "models/step_model.hpp"
#include "models/step_protocols.hpp"
#include "models/transformer.hpp"
#include "sim/backends/fidelity.hpp"
#include "sim/backends/transfer_backend.hpp"

namespace syncsim::models {

struct Perturbations {
  double compute_noise_cv = 0;  // per-rank compute multiplier ~ 1 + cv * N(0,1), floored at 0.5
  std::optional<uint32_t> straggler;  // a rank whose compute is slower by `straggler_slowdown`
  double straggler_slowdown = 0;      // 0.1 = 10% slower
  // Timed stragglers (`straggler` faults): a rank's compute slower from a time on
  // (compute_slowdown.hpp); the DDP and FSDP steps and the DDP closed form apply them.
  std::vector<ComputeSlowdown> slowdowns{};
};

// How gradients are synchronised across the data-parallel group.
enum class DataParallelism : uint8_t {
  Ddp,   // PyTorch DDP: replicated parameters, bucketed gradient all-reduce
  Fsdp,  // PyTorch FSDP (ZeRO-3, FULL_SHARD): sharded parameters, per-unit all-gather /
         // reduce-scatter
};
std::string_view to_string(DataParallelism p);

// PyTorch FSDP (v1) with its defaults: BACKWARD_PRE prefetch, limit_all_gathers, mixed precision
// with bf16 parameters and gradient reduction (models/fsdp.hpp).
struct FsdpParams {
  uint32_t layers_per_unit = 1;  // transformer blocks per FSDP unit (auto-wrap policy)
  // PyTorch issues all-gathers and reduce-scatters on two CUDA streams, so a reduce-scatter never
  // holds up the next all-gather; false puts both on one stream (in issue order).
  bool separate_streams = true;
  int64_t param_bytes = 2;     // bytes per gathered parameter (param_dtype bf16)
  int64_t gradient_bytes = 2;  // bytes per reduced gradient (reduce_dtype bf16)
  // Ranks that shard each parameter (PyTorch's HYBRID_SHARD device mesh (replicate, shard), shard
  // innermost; torchtitan's data_parallel_shard_degree). 0: all data-parallel ranks (FULL_SHARD).
  // Fewer: HSDP, each shard group of that many consecutive ranks gathers and reduce-scatters
  // within itself, and the replicas all-reduce each gradient shard after its reduce-scatter.
  uint32_t shard_degree = 0;
};

// Model parallelism composed with data parallelism (models/parallelism.hpp); all 1 = plain DP.
struct ParallelLayout {
  uint32_t tensor = 1;
  uint32_t context = 1;
  uint32_t pipeline = 1;
  bool sequence_parallel = false;
  // Megatron's interleaved 1F1B: each pipeline rank holds `virtual_pipeline` model chunks
  // (virtual_pipeline_model_parallel_size); 1 is the plain 1F1B schedule.
  uint32_t virtual_pipeline = 1;
  // Megatron-core's account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split:
  // the input embedding (first virtual stage) and the output head and loss (last virtual stage)
  // each take the place of one transformer layer when the layers are split over the stages.
  bool embedding_in_pipeline_split = false;
  bool loss_in_pipeline_split = false;
  // Megatron's tp_comm_overlap (Transformer Engine's userbuffers): each sequence-parallel
  // all-gather / reduce-scatter is pipelined with the GEMM it feeds or drains
  // (models/parallelism.hpp). Megatron allows it only with sequence parallelism.
  bool tp_comm_overlap = false;
  // Megatron's distributed optimizer (--use-distributed-optimizer, ZeRO-1 with sharded gradients
  // in its buffers): gradients are reduce-scattered over the data-parallel (x context-parallel)
  // group, each rank updates its 1/d of the parameters, and the updated parameters are all-gathered
  // overlapped with the next forward (overlap_param_gather). DDP only; closed form
  // (models/parallelism.hpp).
  bool distributed_optimizer = false;
  // Expert parallelism for mixture-of-experts models (models/expert_parallel.hpp): the routed
  // experts of each MoE layer split over `expert` ranks carved out of the data-parallel x
  // context-parallel ones (Megatron's --expert-model-parallel-size).
  uint32_t expert = 1;
  bool model_parallel() const { return tensor * context * pipeline > 1 || expert > 1; }
};

// How a bucket's idle-fabric all-reduce is timed (only when bucket timings are reused).
//   Exact: simulate the bucket's whole plan.
//   Extrapolate: for ring/tree all-reduces with pipelining chunks, simulate the same plan at k1 and
//     k2 = 2 k1 pipeline units of the real chunk size (a unit is one chunk per tree, or one chunk
//     per ring segment and channel) and extend the line through them to the bucket's size: once the
//     pipeline is full each further unit adds the same time, T(S) = T1 + (T2 - T1) (S - S1) / (S2 -
//     S1). Bytes sent scale exactly with S (every byte crosses each tree/ring edge the same number
//     of times), so they are the measured bytes per byte times S. The two samples serve every
//     bucket size. Falls back to Exact where the bucket is smaller than k2 units or the algorithm
//     is neither ring nor tree. k1 = 4 ceil(log2 ranks) (step_sim.cpp says why).
//     LL and LL128 buckets (small chunks, long fill) verify the line: their samples double (k1,
//     2 k1, 4 k1, ...) until the slopes of the last two intervals agree within 0.5%, and the line
//     goes through the last two; a bucket is simulated whole where the samples would cost more
//     units than it (at least 7 k1 units to start).
//   Auto: Extrapolate only where the bucket's exact plan would hold at least
//     `extrapolate_min_transfers` transfers; smaller runs stay exact.
enum class BucketTimingMode : uint8_t { Exact, Extrapolate, Auto };
std::string_view to_string(BucketTimingMode t);
BucketTimingMode parse_bucket_timing(std::string_view text);  // throws std::invalid_argument

// Where a DDP step stands, for a progress display: the step's simulated time so far (the start or
// end of the latest bucket all-reduce), buckets finished, and, while a bucket's idle-fabric time is
// being simulated in a private simulation (reuse_bucket_timings), its size (0 otherwise).
struct StepProgress {
  Time simulated = Time::zero();
  std::size_t buckets_done = 0;
  std::size_t buckets = 0;
  int64_t timing_bucket_bytes = 0;
  bool timing_extrapolated = false;  // the private simulation runs the extrapolation samples
};

struct StepConfig {
  TransformerShape model;
  GpuSpec gpu;
  ComputeParams compute;
  DdpParams ddp;
  uint32_t grad_accumulation = 1;     // micro-batches per step; gradients sync after the last
  std::optional<Time> optimizer;      // unset: Adam at HBM bandwidth, 28 bytes per parameter
  std::vector<uint32_t> rank_to_gpu;  // the data-parallel group
  CollectiveAlgo algorithm = CollectiveAlgo::Ring;
  uint32_t channels = 1;  // NCCL's (apply_nccl_step_setup sets them from models/nccl_channels.hpp)
  // Simple's chunk (a step's collectives run with the protocol NCCL picks for each: StepProtocols).
  int64_t chunk_bytes = 0;
  // Ring Simple: segments of one slice or less cut in NCCL's slices per chunk
  // (PlanOptions::min_pieces, min_piece_bytes); set by apply_nccl_step_setup.
  uint32_t ring_min_pieces = 1;
  int64_t ring_min_piece_bytes = 0;
  // Transfers in flight per connection (PlanOptions::connection_depth): NCCL's slices in flight
  // for the step's algorithm with Simple (ProtocolTiming::pipeline_depth: 4 for rings), set by
  // apply_nccl_step_setup, as `syncsim collective` runs them.
  uint32_t connection_depth = 1;
  uint32_t gpus_per_host = 1;  // ranks r..r+g-1 share a host (rings keep channels on rails)
  uint32_t nics_per_host = 0;  // 0: one per GPU (PlanOptions::nics_per_host)
  // CollNet (algorithm collnet_direct / collnet_chain, DDP): each NIC rail's SHARP tree over the
  // data-parallel group's hosts and the reductions in flight per tree (PlanOptions::collnet_trees,
  // SharpParams::outstanding_operations, a cap on connection_depth), as `syncsim collective`
  // runs them.
  std::vector<net::AggregationTree> collnet_trees;
  uint32_t collnet_outstanding = 0;
  // Simple's run options (wire factor, latencies), set by apply_nccl_step_setup with the fields
  // above; `protocols` holds LL's and LL128's and picks each collective's protocol.
  CollectiveRunOptions collective;
  StepProtocols protocols;
  Perturbations perturbations;
  uint64_t seed = 1;
  // Threads for the step's private idle-fabric simulations (the DDP buckets' timings, the closed
  // forms' collectives: IdleCollectiveTimer): each is a simulation of its own, so results are
  // identical for any count; peak memory grows with it.
  uint32_t threads = 1;
  // Time each distinct bucket size once on an idle copy of the fabric and reuse it. Exact when the
  // bucket collectives are the only traffic (they run one at a time on one stream, so each starts
  // on an idle fabric); turn it off to run every bucket live, e.g. against background traffic.
  bool reuse_bucket_timings = true;
  // The closed forms time one group of each symmetry class at analytic fidelity and reuse it for
  // the others (idle_collective_timer.hpp states the rule; exact there). Off: every group as
  // placed.
  bool time_symmetric_groups_once = true;
  BucketTimingMode bucket_timing = BucketTimingMode::Auto;  // see BucketTimingMode
  int64_t extrapolate_min_transfers = 1'000'000;  // Auto's threshold (exact plan's transfers)
  bool zero_compute = false;                      // communication only (a test limit)
  // When set, each bucket all-reduce takes this time for its byte size (a calibration profile's
  // fitted all_reduce line) instead of a simulated one, and buckets take the cached-duration path;
  // bytes sent still come from the plan. The app sets it only when bucket timings are reused: a
  // fitted idle-fabric time cannot see live contention.
  std::function<Time(int64_t)> calibrated_allreduce{};
  DataParallelism parallelism = DataParallelism::Ddp;
  FsdpParams fsdp;
  // Called on the simulating thread as the DDP step advances (see StepProgress); a few calls per
  // bucket, so a progress display costs nothing per event. Does not change the results.
  std::function<void(const StepProgress&)> on_progress{};
  // With model parallelism rank_to_gpu holds every rank (tensor x context x pipeline x data), in
  // Megatron order: rank = ((p * data + d) * context + c) * tensor + t (pipeline outermost).
  ParallelLayout layout;
  // Model-parallel layouts (and the distributed optimizer, MoE): run the event-driven engine
  // (models/model_parallel_step.hpp); false keeps the closed form (models/parallelism.hpp), the
  // quick estimate. FSDP composed with model parallelism always runs the closed form.
  bool model_parallel_event_driven = true;
  // The event-driven model-parallel engine's representative-rank rule: a stage's replicas advance
  // together (one operation stream per pipeline rank); false gives each replica its own stream.
  bool model_parallel_lockstep = true;
  // The event-driven model-parallel engine's collectives: false runs every group's transfers live
  // on the fabric; true takes each collective's duration from the idle fabric (every group of the
  // call at once, one group per symmetry class at analytic fidelity: IdleCollectiveTimer) and
  // shares it among the collectives that overlap on the same groups (ProcessorSharing). Nothing
  // else may share the fabric then; it is what makes 16k-GPU layouts tractable event by event.
  bool model_parallel_idle_fabric_timing = false;
  // Mixture of experts: each expert's buffer padded to capacity_factor times its balanced share of
  // the tokens (models/expert_parallel.hpp); unset: dropless, Megatron-Core's default.
  std::optional<double> capacity_factor;
};

// The CollNet parts of a step's plan `o` for a collective of `bytes` (o.algo a CollNet one): NCCL's
// CollNet chunk for that size, the step's SHARP trees and the reductions in flight per tree.
void set_step_collnet_options(PlanOptions& o, const StepConfig& config, int64_t bytes);

// BucketTimingMode's decision for one bucket of `bytes` all-reduced over `ranks` ranks (from the
// config's algorithm, channels, chunk_bytes, bucket_timing and extrapolate_min_transfers): the
// sizes of the k1- and k2-unit samples when its idle-fabric time is extrapolated, nullopt when its
// whole plan is simulated. LL and LL128 buckets (`verified`) start with k1, 2 k1 and 4 k1 and may
// double further (up to the bucket's own size in all), or end up simulated whole: which, only the
// samples' times tell. simulate_ddp_step applies it when bucket timings are reused and not
// calibrated; run/estimate.cpp uses it to size what will actually run.
struct BucketSamples {
  int64_t small_bytes = 0;
  int64_t large_bytes = 0;
  bool verified = false;
};
std::optional<BucketSamples> bucket_extrapolation(const StepConfig& config, uint32_t ranks,
                                                  int64_t bytes);

// One collective of the step (FSDP's per-unit all-gathers and reduce-scatters; the model-parallel
// collectives of the closed form): what, for which unit or layer (-1: not applicable), its size
// (nccl-tests' S) and when it was issued, started and finished.
struct CollectiveTiming {
  std::string kind;
  int32_t unit = -1;
  int64_t bytes = 0;
  Time ready = Time::zero();
  Time start = Time::zero();
  Time end = Time::zero();
  int64_t count = 1;  // closed form: occurrences per step of this collective (one row per kind)
  NcclProtocol protocol = NcclProtocol::Simple;  // what it ran (StepProtocols)
};

// A compute slice on rank 0 (FSDP: per unit), for the trace.
struct ComputeSlice {
  std::string name;
  Time start = Time::zero();
  Time end = Time::zero();
};

// One communication of the event-driven model-parallel step as it ran, on pipeline rank `stage`
// (its first replica's; in lockstep every replica's at once): `kind` is pp_send (activations or
// gradients to a neighbouring stage), ep_all_to_all, ep_tp_all_gather / ep_tp_reduce_scatter (the
// dispatched tokens over TP under EP x TP, when TP spans hosts), tp_all_gather /
// tp_reduce_scatter / tp_all_reduce (TP across hosts), dp_all_reduce / dp_reduce_scatter (a
// gradient bucket) or dp_param_all_gather (the distributed optimizer's), with its size per GPU
// pair or group (nccl-tests' S).
struct CommunicationSlice {
  std::string kind;
  uint32_t stage = 0;
  int64_t bytes = 0;
  Time start = Time::zero();
  Time end = Time::zero();
};

struct BucketTiming {
  int64_t bytes = 0;
  NcclProtocol protocol = NcclProtocol::Simple;  // what its all-reduce ran (StepProtocols)
  Time idle = Time::zero();   // its all-reduce alone on an idle fabric (the closed form's time)
  Time ready = Time::zero();  // when the last rank has the bucket's gradients
  Time start = Time::zero();
  Time end = Time::zero();
};

struct StepResult {
  Time step = Time::zero();
  Time forward =
      Time::zero();  // all micro-batches' forward + all but the last backward, rank 0 unperturbed
  Time backward = Time::zero();  // the last micro-batch's backward, slowest rank
  Time optimizer = Time::zero();
  Time sync = Time::zero();  // sum of bucket all-reduce durations
  Time tail = Time::zero();  // communication after the slowest backward ends
  Time exposed_comm = Time::zero();
  Time closed_form_step = Time::zero();
  double mfu = 0;
  double hfu = 0;
  double tokens_per_s = 0;
  // Sequences per optimizer step (micro-batch x micro-batches x data-parallel replicas) and the
  // tokens they hold.
  uint64_t global_batch = 0;
  double tokens_per_step = 0;
  uint32_t grad_accumulation = 0;  // micro-batches per step
  int64_t bytes_per_gpu = 0;       // bytes each GPU sends per step (all-reduce traffic)
  double memory_per_gpu_bytes = 0;
  // Of memory_per_gpu_bytes: NCCL's connection buffers and DDP's gradient buckets
  // (models/communication_memory.hpp).
  double communication_memory_bytes = 0;
  double gpu_memory_bytes = 0;  // the GPU's own memory (GpuSpec::memory_bytes), to compare with
  std::vector<BucketTiming> buckets;
  std::vector<Time> rank_backward_start;  // the last micro-batch's backward, per rank
  std::vector<Time> rank_backward_end;
  std::vector<std::string> warnings;
  // Bucket sizes whose idle-fabric time was extrapolated (BucketTimingMode), in bytes, ascending.
  std::vector<int64_t> extrapolated_bucket_sizes;
  // DDP: the private idle-fabric simulations run to time the buckets (whole ones and the
  // extrapolation's samples). Each distinct plan (protocol, chunk, bytes) runs once, so a whole
  // bucket that is another's sample counts once.
  std::size_t idle_simulations = 0;
  // Which engine produced the numbers: "event_driven" (DDP, FSDP) or "closed_form" (model
  // parallelism, whose step is not simulated event by event).
  std::string engine = "event_driven";
  DataParallelism parallelism = DataParallelism::Ddp;
  std::vector<CollectiveTiming> collectives;  // FSDP; model-parallel collectives per micro-batch
  std::vector<ComputeSlice> rank0_compute;    // FSDP
  // FSDP's dependencies, for exporting the step as a graph (run/chakra_export.hpp): per compute
  // slice the `collectives` row of the all-gather it waits for and of the reduce-scatter issued at
  // its end (-1: none); per row the one that follows it on its stream (HSDP's all-reduce, -1);
  // whether all-gathers and reduce-scatters have streams of their own; every rank's compute scale.
  std::vector<int32_t> fsdp_slice_gather;
  std::vector<int32_t> fsdp_slice_reduce;
  std::vector<int32_t> fsdp_comm_then;
  bool fsdp_separate_streams = true;
  std::vector<double> rank_compute_multiplier;
  // Model parallelism (closed form).
  ParallelLayout layout;
  uint32_t data_parallel = 0;
  uint32_t fsdp_shard_degree = 0;  // FSDP: ranks per shard group (= data_parallel: FULL_SHARD)
  // The 1F1B schedule of one step, operation by operation (models/pipeline_schedule.hpp), for
  // layouts with pipeline parallelism and no virtual stages; empty otherwise.
  std::vector<PipelineOperation> pipeline_schedule;
  // The event-driven model-parallel step's communication by kind and stage (empty otherwise).
  std::vector<CommunicationSlice> communication;
  Time pipeline_bubble = Time::zero();           // (m-1) t_max + sum of stage times - m t_max
  double bubble_fraction = 0;                    // bubble / (m t_max): (p-1)/m for equal stages
  Time tensor_parallel_comm = Time::zero();      // per step on one GPU, exposed (not overlapped)
  Time context_parallel_exposed = Time::zero();  // K/V ring time not hidden by attention
  Time pipeline_p2p = Time::zero();              // activation sends on one stage's critical path
  Time expert_all_to_all = Time::zero();  // EP dispatch/combine all-to-alls per step, exposed
  // One dense block's and the head's compute on one GPU of the step's layout (its TP / CP split),
  // per micro-batch: the per-layer breakdown by op class (block_forward_classes). Set by the app.
  std::optional<LayerCompute> layer_compute;
  uint32_t layer_count = 0;  // transformer blocks of the model
};

// Shared by the step engines.
// Per-rank compute multipliers from the perturbations (noise by seed and rank, the straggler).
std::vector<double> rank_compute_multipliers(const StepConfig& config, uint32_t ranks);
// Activation memory of one micro-batch on one GPU (FlashAttention, Korthikanti et al. 2022).
double activation_bytes(const TransformerShape& m, const ComputeParams& p);
// Mixed-precision Adam: about 28 bytes per parameter at HBM bandwidth.
Time adam_time(double params, const GpuSpec& gpu);
Time scaled(Time t, double factor);

// Fills r.mfu, r.hfu and r.tokens_per_s from r.step for `ranks` data-parallel ranks: MFU counts
// model FLOPs only (6N + attention per token), HFU adds recomputation (full: one more forward;
// selective: the attention score and softmax work, 4·L·h·s per token). Returns the model FLOPs of
// the step.
double fill_utilization(StepResult& r, const StepConfig& config, uint32_t ranks);

// Runs one step on `backend` (whose simulation must be at time zero). `spec` and `fidelity` build
// the idle copies used to time buckets when reuse_bucket_timings is on.
StepResult simulate_ddp_step(TransferBackend& backend, const net::NetworkSpec& spec,
                             Fidelity fidelity, const StepConfig& config);

}  // namespace syncsim::models
