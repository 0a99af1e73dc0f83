// How a DDP step times its big buckets by extrapolation (BucketTimingMode): the samples' rule and
// the plan options the step's all-reduces run with.
#include "models/bucket_extrapolation.hpp"

#include <bit>
#include <stdexcept>
#include <string>

#include "models/collective_cost.hpp"
#include "models/step_protocols.hpp"

namespace syncsim::models {

namespace bucket_timing {

int64_t sample_units(uint32_t ranks) { return 4 * static_cast<int64_t>(std::bit_width(ranks - 1)); }

// The plan options of the step's all-reduce of `bytes` with protocol `proto`; `run` (if given)
// receives the run options that go with them.
PlanOptions allreduce_options(const StepConfig& config, uint32_t n, int64_t bytes,
                              NcclProtocol proto, CollectiveRunOptions* run) {
  PlanOptions o;
  o.op = CollectiveOp::AllReduce;
  o.algo = config.algorithm;
  o.ranks = n;
  o.bytes = bytes;
  o.channels = config.channels;
  o.gpus_per_host = config.gpus_per_host;
  o.nics_per_host = config.nics_per_host;
  const CollectiveRunOptions options = shape_step_collective(config, proto, o);
  if (run != nullptr) *run = options;
  // NCCL's CollNet chunk for this bucket's size (the ring's slice would leave a 25 MB bucket a
  // handful of rounds, and the tree's hops little to pipeline).
  if (is_collnet(config.algorithm)) set_step_collnet_options(o, config, bytes);
  return o;
}

NcclProtocol bucket_protocol(const StepConfig& config, uint32_t n, int64_t bytes) {
  return step_protocol(config, CollectiveOp::AllReduce, config.algorithm, n, bytes);
}

// `chunk`: the chunk of the bucket's plan (its protocol's, `proto`).
std::optional<Extrapolation> extrapolation_for(const StepConfig& config, uint32_t n, int64_t bytes,
                                               int64_t chunk, NcclProtocol proto) {
  if (config.bucket_timing == BucketTimingMode::Exact || chunk <= 0 || n < 2) return std::nullopt;
  int64_t unit = 0;  // bytes per pipeline unit
  int64_t transfers_per_unit = 0;
  const auto edges = static_cast<int64_t>(n - 1);
  if (config.algorithm == CollectiveAlgo::Tree) {
    const auto trees = static_cast<int64_t>(config.channels);  // one tree per channel
    unit = trees * chunk;                                      // one chunk in each
    transfers_per_unit = trees * 2 * edges;                    // each: up and down every edge
  } else if (config.algorithm == CollectiveAlgo::Ring) {
    const auto segments = static_cast<int64_t>(config.channels) * n;
    unit = segments * chunk;                    // one chunk per segment of every channel
    transfers_per_unit = segments * 2 * edges;  // each segment: 2(n-1) hops
  } else {
    return std::nullopt;
  }
  const int64_t units = ceil_div(bytes, unit);
  const int64_t k1 = sample_units(n);
  const bool verified = proto != NcclProtocol::Simple;
  // Below k2 units the samples cost as much as the bucket. It also bounds the error of a partial
  // last chunk: the plan cuts S into ceil(S / unit) equal pieces, slightly smaller than a chunk,
  // each paying the full per-step latency, which a line in bytes misses by up to (latency share of
  // a chunk's time) / units (measured: -2.6% for a ring bucket of 28.01 units, 32 ranks).
  if (units < (verified ? kVerifiedMinSampleUnits : 2) * k1) return std::nullopt;
  if (config.bucket_timing == BucketTimingMode::Auto &&
      units * transfers_per_unit < config.extrapolate_min_transfers) {
    return std::nullopt;
  }
  return Extrapolation{unit, units, k1, verified};
}

}  // namespace bucket_timing

using bucket_timing::allreduce_options;
using bucket_timing::bucket_protocol;
using bucket_timing::Extrapolation;
using bucket_timing::extrapolation_for;

std::optional<BucketSamples> bucket_extrapolation(const StepConfig& config, uint32_t ranks,
                                                  int64_t bytes) {
  const NcclProtocol proto = bucket_protocol(config, ranks, bytes);
  const PlanOptions o = allreduce_options(config, ranks, bytes, proto);
  const std::optional<Extrapolation> e =
      extrapolation_for(config, ranks, bytes, o.chunk_bytes, proto);
  if (!e) return std::nullopt;
  return BucketSamples{e->small(), e->large(), e->verified};
}

std::string_view to_string(BucketTimingMode t) {
  switch (t) {
    case BucketTimingMode::Exact:
      return "exact";
    case BucketTimingMode::Extrapolate:
      return "extrapolate";
    case BucketTimingMode::Auto:
      return "auto";
  }
  return "auto";
}

BucketTimingMode parse_bucket_timing(std::string_view text) {
  if (text == "exact") return BucketTimingMode::Exact;
  if (text == "extrapolate") return BucketTimingMode::Extrapolate;
  if (text == "auto") return BucketTimingMode::Auto;
  throw std::invalid_argument("expected exact, extrapolate or auto");
}

}  // namespace syncsim::models
