// Idle-fabric bucket timing by extrapolation (BucketTimingMode): against exact simulation where
// that is affordable, on the flow and analytic backends, tree and ring all-reduce.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include "models/nccl_setup.hpp"
#include "models/step_sim.hpp"
#include "sim/backends/make_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

net::NetworkSpec fabric(uint32_t hosts) {
  topo::FabricParams p;
  p.spine_leaf.leaves = 4;
  p.spine_leaf.hosts_per_leaf = hosts / 4;
  p.spine_leaf.spines = hosts / 4;
  p.links.host.bandwidth = Bandwidth::gbps(400);
  p.links.fabric.bandwidth = Bandwidth::gbps(400);
  return topo::build_fabric(p);
}

// A short GPT-3 1.3B (the 206 MB embedding bucket plus a few large ones), communication only.
StepConfig config_for(uint32_t ranks, CollectiveAlgo algo, int64_t chunk, Bytes bucket_cap,
                      uint32_t layers) {
  StepConfig c;
  c.model = *transformer_preset("gpt3-1.3b");
  c.model.layers = layers;
  c.gpu = *gpu_preset("h100");
  c.ddp.bucket_cap = bucket_cap;
  c.algorithm = algo;
  c.chunk_bytes = chunk;
  c.zero_compute = true;
  c.collective.step_latency = Time::us(2);
  c.collective.launch_latency = Time::us(10);
  c.rank_to_gpu.resize(ranks);
  std::iota(c.rank_to_gpu.begin(), c.rank_to_gpu.end(), 0u);
  return c;
}

// The same step with NCCL's setup on `channels` channels and every bucket pinned to `protocol`
// (collective.protocol): its chunk (tree LL128's halved for the tree's depth), slices in flight and
// latencies, as a scenario's step runs it.
StepConfig pinned_protocol(uint32_t ranks, CollectiveAlgo algo, NcclProtocol protocol,
                           uint32_t channels, Bytes bucket_cap, uint32_t layers) {
  StepConfig c = config_for(ranks, algo, 0, bucket_cap, layers);
  c.collective = CollectiveRunOptions{};
  CollectiveConfig collective;
  collective.protocol = protocol;
  NcclChannels graph;
  graph.search_channels = channels;
  graph.search_bw_GBps = 48.0;
  graph.channels = graph.default_channels = channels;
  apply_nccl_step_setup(c, collective, graph);
  return c;
}

StepResult run(const net::NetworkSpec& spec, Fidelity fidelity, StepConfig c,
               BucketTimingMode mode) {
  c.bucket_timing = mode;
  Simulation sim(c.seed);
  auto backend = make_backend(fidelity, sim, spec);
  return simulate_ddp_step(*backend, spec, fidelity, c);
}

std::map<int64_t, Time> durations(const StepResult& r) {
  std::map<int64_t, Time> d;
  for (const auto& b : r.buckets) d.emplace(b.bytes, b.end - b.start);
  return d;
}

// Worst relative error of the extrapolated bucket durations against exact ones; sizes that were
// not extrapolated must be identical.
double worst_error(const StepResult& exact, const StepResult& extrapolated) {
  const auto e = durations(exact);
  const auto x = durations(extrapolated);
  double worst = 0;
  for (const auto& [bytes, t] : e) {
    const auto bucket_bytes = bytes;  // CAPTURE is a lambda: clang 14 cannot capture a binding
    CAPTURE(bucket_bytes);
    const bool was = std::find(extrapolated.extrapolated_bucket_sizes.begin(),
                               extrapolated.extrapolated_bucket_sizes.end(),
                               bytes) != extrapolated.extrapolated_bucket_sizes.end();
    if (!was) {
      CHECK(x.at(bytes) == t);
      continue;
    }
    const double err = std::abs(x.at(bytes).seconds() / t.seconds() - 1.0);
    MESSAGE("bucket " << bytes << " B: exact " << t.seconds() * 1e3 << " ms, extrapolated "
                      << x.at(bytes).seconds() * 1e3 << " ms, error " << err * 100 << "%");
    worst = std::max(worst, err);
  }
  return worst;
}

// The bounds asserted below. Measured (this file's cases, `-s` prints them): tree at most 0.5%;
// ring 1.4% (a 32.02-unit bucket cut into 33 pieces: see the latency-heavy case).
constexpr double kTreeBound = 0.01;
constexpr double kRingBound = 0.02;

}  // namespace

TEST_CASE("bucket extrapolation: tree all-reduce within 1% of exact, bytes exact (64 ranks)") {
  const auto spec = fabric(64);
  // depth 6: k1 = 24 units of 2 x 1 MiB; buckets from 2 k1 units (48 MiB) on are extrapolated.
  const auto c = config_for(64, CollectiveAlgo::Tree, 1 << 20, Bytes(128 << 20), 4);
  for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow}) {
    CAPTURE(static_cast<int>(f));
    const auto exact = run(spec, f, c, BucketTimingMode::Exact);
    const auto extra = run(spec, f, c, BucketTimingMode::Extrapolate);
    CHECK(exact.extrapolated_bucket_sizes.empty());
    REQUIRE(extra.extrapolated_bucket_sizes.size() >= 2);
    CHECK(worst_error(exact, extra) < kTreeBound);
    CHECK(extra.bytes_per_gpu == exact.bytes_per_gpu);
    CHECK(std::abs(extra.step.seconds() / exact.step.seconds() - 1.0) < kTreeBound);
    bool warned = false;
    for (const auto& w : extra.warnings)
      warned = warned || w.find("extrapolated") != std::string::npos;
    CHECK(warned);
  }
}

TEST_CASE("bucket extrapolation: ring all-reduce within 2% of exact, bytes exact (16 ranks)") {
  const auto spec = fabric(16);
  // depth 4: k1 = 16 units of 16 x 256 KiB (4 MiB); buckets from 2 k1 units (128 MiB) extrapolated.
  const auto c = config_for(16, CollectiveAlgo::Ring, 256 << 10, Bytes(160 << 20), 2);
  for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow}) {
    CAPTURE(static_cast<int>(f));
    const auto exact = run(spec, f, c, BucketTimingMode::Exact);
    const auto extra = run(spec, f, c, BucketTimingMode::Extrapolate);
    REQUIRE(extra.extrapolated_bucket_sizes.size() >= 2);
    CHECK(worst_error(exact, extra) < kRingBound);
    CHECK(extra.bytes_per_gpu == exact.bytes_per_gpu);
  }
}

// The known weakness: the line is in bytes, but the plan cuts a bucket into ceil(S / unit) pieces
// slightly smaller than a chunk, each paying the whole per-step latency. With latency-heavy chunks
// (64 KiB at 400G: 1.3 us on the wire against 2 us of step latency) and few units (44.02 -> 45
// pieces) the extrapolation runs short by ~1.7%; the bound shrinks with 1 / units and with the
// latency's share of a chunk's time (2 MiB chunks: 42 us on the wire).
TEST_CASE("bucket extrapolation: latency-heavy ring chunks, few units: within 2.5% (32 ranks)") {
  const auto spec = fabric(32);
  const auto c = config_for(32, CollectiveAlgo::Ring, 64 << 10, Bytes(96 << 20), 2);
  const auto exact = run(spec, Fidelity::Analytic, c, BucketTimingMode::Exact);
  const auto extra = run(spec, Fidelity::Analytic, c, BucketTimingMode::Extrapolate);
  REQUIRE_FALSE(extra.extrapolated_bucket_sizes.empty());
  CHECK(worst_error(exact, extra) < 0.025);
  CHECK(extra.bytes_per_gpu == exact.bytes_per_gpu);
}

// LL and LL128 buckets pipeline chunks of their own protocol (LL 32 KiB, LL128 72,000 or 144,000 B
// here after NCCL's tree halving, 576,000 B on rings), with their own latencies and 8 slices in
// flight per connection; their samples keep the bucket's protocol and chunk and double until the
// line has settled (step_sim.cpp). Sizes whose samples would cost more than the bucket stay exact
// (worst_error checks them bit for bit). Measured (`-s`): at most 0.012% where extrapolated; a line
// through k1 and 2 k1 units alone (the Simple rule) missed by up to 49% (tree LL128, analytic:
// 2.51 against 4.67 ms for the 214 MB bucket; ring LL128 on 8 ranks: 4.47 against 8.72 ms).
constexpr double kVerifiedBound = 0.001;

TEST_CASE("bucket extrapolation: LL and LL128 buckets within 0.1% of exact") {
  struct Case {
    uint32_t ranks;
    CollectiveAlgo algo;
    NcclProtocol protocol;
    uint32_t channels;
    int64_t bucket_cap;
  };
  // Tree on 64 ranks (depth 6, k1 = 24 units), rings on 8 ranks (k1 = 12 units of 8 chunks) and,
  // for LL128's 576,000 B chunk, on 4 (k1 = 8 units of 4 chunks).
  const Case cases[] = {
      {64, CollectiveAlgo::Tree, NcclProtocol::LL128, 2, 40 << 20},
      {64, CollectiveAlgo::Tree, NcclProtocol::LL, 2, 40 << 20},
      {4, CollectiveAlgo::Ring, NcclProtocol::LL128, 1, 160 << 20},
      {8, CollectiveAlgo::Ring, NcclProtocol::LL, 1, 40 << 20},
  };
  for (const Case& k : cases) {
    const auto spec = fabric(std::max(16u, k.ranks));
    const auto c = pinned_protocol(k.ranks, k.algo, k.protocol, k.channels, Bytes(k.bucket_cap), 2);
    for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow}) {
      CAPTURE(k.ranks);
      CAPTURE(static_cast<int>(k.protocol));
      CAPTURE(static_cast<int>(f));
      const auto exact = run(spec, f, c, BucketTimingMode::Exact);
      const auto extra = run(spec, f, c, BucketTimingMode::Extrapolate);
      for (const auto& b : extra.buckets) CHECK(b.protocol == k.protocol);
      REQUIRE_FALSE(extra.extrapolated_bucket_sizes.empty());
      CHECK(worst_error(exact, extra) < kVerifiedBound);
      CHECK(extra.bytes_per_gpu == exact.bytes_per_gpu);
      CHECK(std::abs(extra.step.seconds() / exact.step.seconds() - 1.0) < kVerifiedBound);
    }
  }
}

TEST_CASE("bucket extrapolation: auto below its threshold is bit-identical to exact") {
  const auto spec = fabric(64);
  const auto c = config_for(64, CollectiveAlgo::Tree, 1 << 20, Bytes(96 << 20), 4);
  const auto exact = run(spec, Fidelity::Flow, c, BucketTimingMode::Exact);
  const auto automatic = run(spec, Fidelity::Flow, c, BucketTimingMode::Auto);  // < 1e6 transfers
  CHECK(automatic.extrapolated_bucket_sizes.empty());
  CHECK(automatic.step == exact.step);
  CHECK(automatic.bytes_per_gpu == exact.bytes_per_gpu);
  REQUIRE(automatic.buckets.size() == exact.buckets.size());
  for (std::size_t i = 0; i < exact.buckets.size(); ++i) {
    CHECK(automatic.buckets[i].start == exact.buckets[i].start);
    CHECK(automatic.buckets[i].end == exact.buckets[i].end);
  }
  // With a threshold it crosses, auto extrapolates.
  auto low = c;
  low.extrapolate_min_transfers = 1000;
  CHECK_FALSE(
      run(spec, Fidelity::Flow, low, BucketTimingMode::Auto).extrapolated_bucket_sizes.empty());
}

TEST_CASE("bucket extrapolation: algorithms other than ring and tree stay exact") {
  const auto spec = fabric(16);
  const auto c = config_for(16, CollectiveAlgo::HalvingDoubling, 1 << 20, Bytes(96 << 20), 1);
  const auto exact = run(spec, Fidelity::Analytic, c, BucketTimingMode::Exact);
  const auto extra = run(spec, Fidelity::Analytic, c, BucketTimingMode::Extrapolate);
  CHECK(extra.extrapolated_bucket_sizes.empty());
  CHECK(extra.step == exact.step);
}

TEST_CASE("bucket extrapolation: mode names") {
  CHECK(parse_bucket_timing("exact") == BucketTimingMode::Exact);
  CHECK(parse_bucket_timing("extrapolate") == BucketTimingMode::Extrapolate);
  CHECK(parse_bucket_timing("auto") == BucketTimingMode::Auto);
  CHECK(to_string(BucketTimingMode::Extrapolate) == "extrapolate");
  CHECK_THROWS_AS(parse_bucket_timing("fast"), std::invalid_argument);
}

// The idle-fabric runs on threads (StepConfig::threads): whole buckets and the first samples run at
// once, each a private simulation, so the step is the same bit for bit for any thread count, with
// bucket timings reused or the buckets run live, Simple and LL128 extrapolations and exact buckets.
TEST_CASE("bucket timing on threads: bit-identical to one thread") {
  const auto spec = fabric(64);
  const StepConfig simple = config_for(64, CollectiveAlgo::Tree, 1 << 20, Bytes(128 << 20), 4);
  const StepConfig ll128 =
      pinned_protocol(64, CollectiveAlgo::Tree, NcclProtocol::LL128, 2, Bytes(40 << 20), 2);
  struct Case {
    const StepConfig& base;
    BucketTimingMode mode;
    bool reuse;
  };
  const Case cases[] = {{simple, BucketTimingMode::Extrapolate, true},
                        {simple, BucketTimingMode::Extrapolate, false},
                        {simple, BucketTimingMode::Exact, true},
                        {ll128, BucketTimingMode::Extrapolate, true}};
  for (const Case& k : cases) {
    const BucketTimingMode mode = k.mode;  // CAPTURE is a lambda: clang 14 cannot capture bindings
    const bool reuse = k.reuse;
    CAPTURE(static_cast<int>(mode));
    CAPTURE(reuse);
    StepConfig c = k.base;
    c.reuse_bucket_timings = reuse;
    const StepResult one = run(spec, Fidelity::Flow, c, mode);
    c.threads = 3;
    const StepResult three = run(spec, Fidelity::Flow, c, mode);
    CHECK(three.step == one.step);
    CHECK(three.closed_form_step == one.closed_form_step);
    CHECK(three.bytes_per_gpu == one.bytes_per_gpu);
    CHECK(three.extrapolated_bucket_sizes == one.extrapolated_bucket_sizes);
    CHECK(three.warnings == one.warnings);
    REQUIRE(three.buckets.size() == one.buckets.size());
    REQUIRE(one.buckets.size() >= 2);
    for (std::size_t i = 0; i < one.buckets.size(); ++i) {
      CHECK(three.buckets[i].start == one.buckets[i].start);
      CHECK(three.buckets[i].end == one.buckets[i].end);
      CHECK(three.buckets[i].idle == one.buckets[i].idle);
    }
    if (mode == BucketTimingMode::Extrapolate) CHECK_FALSE(one.extrapolated_bucket_sizes.empty());
  }
}

TEST_CASE("bucket timing: a whole bucket that is another's sample is simulated once") {
  const auto spec = fabric(4);
  // 4 ranks: k1 = 8 units of one chunk (one channel). With the chunk an eighth of a bucket B that
  // is timed whole (8 units, below 2 k1), the first sample of any bucket of 16 units or more is the
  // plan of B itself: the same protocol, chunk and bytes.
  StepConfig probe = config_for(4, CollectiveAlgo::Tree, 1 << 20, Bytes(64 << 20), 2);
  const StepResult sizes = run(spec, Fidelity::Analytic, probe, BucketTimingMode::Exact);
  std::vector<int64_t> bytes;
  for (const auto& b : sizes.buckets) bytes.push_back(b.bytes);
  std::sort(bytes.begin(), bytes.end());
  bytes.erase(std::unique(bytes.begin(), bytes.end()), bytes.end());
  // The smallest size B divisible by 8 with a bucket of at least 2 B.
  int64_t shared = 0;
  for (int64_t b : bytes) {
    if (b % 8 == 0 && bytes.back() >= 2 * b) {
      shared = b;
      break;
    }
  }
  REQUIRE(shared > 0);
  StepConfig c = config_for(4, CollectiveAlgo::Tree, shared / 8, Bytes(64 << 20), 2);
  for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow}) {
    CAPTURE(static_cast<int>(f));
    const StepResult exact = run(spec, f, c, BucketTimingMode::Exact);
    const StepResult extra = run(spec, f, c, BucketTimingMode::Extrapolate);
    REQUIRE_FALSE(extra.extrapolated_bucket_sizes.empty());
    // Distinct plans: the sizes timed whole and the two samples, less the one they share.
    std::size_t whole = 0;
    for (int64_t b : bytes) {
      whole +=
          std::find(extra.extrapolated_bucket_sizes.begin(), extra.extrapolated_bucket_sizes.end(),
                    b) == extra.extrapolated_bucket_sizes.end();
    }
    CHECK(exact.idle_simulations == bytes.size());
    CHECK(extra.idle_simulations == whole + 2 - 1);
    // B is timed whole, as exact times it, bit for bit.
    const auto d_exact = durations(exact);
    const auto d_extra = durations(extra);
    CHECK(d_extra.at(shared) == d_exact.at(shared));
    // The threads' prefetch shares the run too, and times everything alike.
    StepConfig threaded = c;
    threaded.threads = 3;
    threaded.bucket_timing = BucketTimingMode::Extrapolate;
    Simulation sim(threaded.seed);
    auto backend = make_backend(f, sim, spec);
    const StepResult three = simulate_ddp_step(*backend, spec, f, threaded);
    CHECK(three.idle_simulations == extra.idle_simulations);
    CHECK(durations(three) == d_extra);
    CHECK(three.step == extra.step);
  }
}
