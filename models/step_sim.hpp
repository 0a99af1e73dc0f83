#pragma once
// The event-driven DDP training step: each rank computes forward and backward (with optional noise
// and a straggler), gradients become ready bucket by bucket during the last micro-batch's backward,
// and each bucket's all-reduce runs through the collectives library on the scenario's network
// backend, one bucket at a time on the communication stream (a bucket starts when every rank has it
// ready and the previous bucket has finished). The optimizer runs when both backward and the last
// bucket are done.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/gpu.hpp"
#include "models/step_model.hpp"
#include "models/transformer.hpp"
#include "sim/backends/fidelity.hpp"
#include "sim/backends/transfer_backend.hpp"

namespace syncsim::models {

struct Perturbations {
  double compute_noise_cv = 0;        // per-rank compute multiplier ~ 1 + cv * N(0,1), floored at 0.5
  std::optional<uint32_t> straggler;  // a rank whose compute is slower by `straggler_slowdown`
  double straggler_slowdown = 0;      // 0.1 = 10% slower
};

struct StepConfig {
  TransformerShape model;
  GpuSpec gpu;
  ComputeParams compute;
  DdpParams ddp;
  uint32_t grad_accumulation = 1;       // micro-batches per step; gradients sync after the last
  std::optional<Time> optimizer;        // unset: Adam at HBM bandwidth, 28 bytes per parameter
  std::vector<uint32_t> rank_to_gpu;    // the data-parallel group
  CollectiveAlgo algorithm = CollectiveAlgo::Ring;
  uint32_t channels = 1;
  int64_t chunk_bytes = 0;
  uint32_t gpus_per_host = 1;           // for the hierarchical algorithm
  CollectiveRunOptions collective;
  Perturbations perturbations;
  uint64_t seed = 1;
  // Time each distinct bucket size once on an idle copy of the fabric and reuse it. Exact when the
  // bucket collectives are the only traffic (they run one at a time on one stream, so each starts on
  // an idle fabric); turn it off to run every bucket live, e.g. against background traffic.
  bool reuse_bucket_timings = true;
  bool zero_compute = false;            // communication only (a test limit)
  // When set, each bucket all-reduce takes this time for its byte size (a calibration profile's
  // fitted all_reduce line) instead of a simulated one, and buckets take the cached-duration path;
  // bytes sent still come from the plan. The app sets it only when bucket timings are reused: a
  // fitted idle-fabric time cannot see live contention.
  std::function<Time(int64_t)> calibrated_allreduce{};
};

struct BucketTiming {
  int64_t bytes = 0;
  Time ready = Time::zero();  // when the last rank has the bucket's gradients
  Time start = Time::zero();
  Time end = Time::zero();
};

struct StepResult {
  Time step = Time::zero();
  Time forward = Time::zero();    // all micro-batches' forward + all but the last backward, rank 0 unperturbed
  Time backward = Time::zero();   // the last micro-batch's backward, slowest rank
  Time optimizer = Time::zero();
  Time sync = Time::zero();       // sum of bucket all-reduce durations
  Time tail = Time::zero();       // communication after the slowest backward ends
  Time exposed_comm = Time::zero();
  Time closed_form_step = Time::zero();
  double mfu = 0;
  double hfu = 0;
  double tokens_per_s = 0;
  int64_t bytes_per_gpu = 0;      // bytes each GPU sends per step (all-reduce traffic)
  double memory_per_gpu_bytes = 0;
  std::vector<BucketTiming> buckets;
  std::vector<Time> rank_backward_start;  // the last micro-batch's backward, per rank
  std::vector<Time> rank_backward_end;
  std::vector<std::string> warnings;
};

// Runs one step on `backend` (whose simulation must be at time zero). `spec` and `fidelity` build the
// idle copies used to time buckets when reuse_bucket_timings is on.
StepResult simulate_ddp_step(TransferBackend& backend, const net::NetworkSpec& spec,
                             Fidelity fidelity, const StepConfig& config);

}  // namespace syncsim::models
