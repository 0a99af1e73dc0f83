#pragma once
// The DDP step's bucket timing by extrapolation (BucketTimingMode, step_sim.hpp), for
// models/step_sim.cpp: when a bucket is timed from short sample runs instead of whole, the samples'
// sizes, and the plan options of the step's all-reduces.
#include <cstdint>
#include <optional>

#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/step_sim.hpp"

namespace syncsim::models::bucket_timing {

// The extrapolation of one bucket size (BucketTimingMode::Extrapolate): its pipeline unit, its
// units and the first sample's units.
struct Extrapolation {
  int64_t unit = 0;   // bytes per pipeline unit
  int64_t units = 0;  // the bucket's, rounded up
  int64_t k1 = 0;     // units of the smaller sample
  // LL / LL128: the samples double from k1 until the line through the last two has settled
  // (settled_slope), within the bucket's own cost.
  bool verified = false;
  int64_t small() const { return k1 * unit; }
  int64_t large() const { return 2 * k1 * unit; }
};

// k1: pipeline units in the smaller sample, k2 = 2 k1 in the larger. An ideal pipeline is affine
// in its chunk count from the first chunk on, but until the first chunk has gone up and down the
// tree (2 depth chunk times) fewer flows share the links, so early chunks go faster than in steady
// state, and the slope between two short runs underestimates the real per-chunk time. Measured on
// the 256-GPU fat-tree (ddp-70b-16k.yaml, tree, flow): 2.1 GB bucket error -19% at k1 = 4 (=
// depth/2), -6.7% at 8, -0.4% at 32 (4 depth), -0.16% at 64, -0.04% at 120. k1 = 4 depth, with
// depth = ceil(log2 ranks) (for a ring, the number of chunks per segment needs no such margin, but
// we keep the same rule).
int64_t sample_units(uint32_t ranks);

// LL and LL128 move small chunks (LL 32 KiB; LL128 576,000 B, which NCCL halves for trees down to
// 36,000 B) with per-hop latencies larger than a chunk's time on the wire, so their fill lasts
// depth x (latency + chunk time) / chunk time chunk times, several times Simple's, and k1 = 4 depth
// does not cover it. Measured (tests/models/test_bucket_extrapolation.cpp, 64-rank tree, LL128 on
// 2 channels, analytic): the time is affine at 3.12 us a unit up to ~50 units, then at 6.24 us
// (the two channels' chunks meet in a shared connection's queue), so a line through 24 and 48
// units missed a 744-unit bucket by -46%. Their samples therefore double, k1, 2 k1, 4 k1, ...,
// until the slopes of the last two intervals agree within kSettledSlope, and the line goes
// through the last two samples; where the samples would cost more units than the bucket itself
// before that, the bucket is simulated whole. The first three must fit in the bucket: 7 k1 units.
inline constexpr double kSettledSlope = 0.005;
inline constexpr int64_t kVerifiedMinSampleUnits = 7;  // k1 + 2 k1 + 4 k1, in k1

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The plan options of the step's all-reduce of `bytes` with protocol `proto`; `run` (if given)
// receives the run options that go with them.
PlanOptions allreduce_options(const StepConfig& config, uint32_t n, int64_t bytes,
                              NcclProtocol proto, CollectiveRunOptions* run = nullptr);
// The protocol NCCL picks for the step's all-reduce of `bytes` over `n` ranks.
NcclProtocol bucket_protocol(const StepConfig& config, uint32_t n, int64_t bytes);
// The extrapolation of a bucket of `bytes`, or nullopt where it is timed whole. `chunk`: the chunk
// of the bucket's plan (its protocol's, `proto`).
std::optional<Extrapolation> extrapolation_for(const StepConfig& config, uint32_t n, int64_t bytes,
                                               int64_t chunk, NcclProtocol proto);

}  // namespace syncsim::models::bucket_timing
