// A DDP step's bucket all-reduces run the protocol NCCL would pick for their size, so a bucket
// takes as long inside the step as `syncsim collective` (auto protocol, same algorithm) takes on an
// idle copy of the same fabric; a pinned collective.protocol holds for both.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "run/collective_cmd.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::app;
using syncsim::testing::text_with;

namespace {

// 8 hosts x 8 H100 on a rail-optimized 400G fabric (the default scenario's, 8 hosts), DDP of a
// 2-layer GPT with 25 MB buckets; COLLECTIVE replaced per case.
const std::string kStep = R"(name: step-protocols
seed: 1
fidelity: flow
fabric:
  topology: rail_optimized
  rail_optimized: {groups: 1, hosts_per_group: 8, spines: 8}
  host: {gpus: 8, nics: 8}
  links:
    host:   {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}
    fabric: {bandwidth: 400Gbps, delay: 1us,   mtu: 4096B, header: 64B}
    nvlink: {delay: 100ns, mtu: 4096B, header: 32B}
workload:
  model: {preset: gpt3-1.3b, layers: 2, hidden: 1024, ffn: 4096, heads: 16, kv_heads: 16,
          vocab: 50257, sequence: 1024}
  gpu: h100
  micro_batch: 1
  parallelism: ddp
  ddp: {bucket_cap_mb: 25}
  algorithm: ring
COLLECTIVE)";

struct BucketVsCollective {
  int64_t bytes = 0;
  double step_us = 0;  // the bucket's all-reduce inside the step
  std::string step_protocol;
  double collective_us = 0;  // `syncsim collective` at its size
  std::string collective_protocol;
};

// The step's smallest bucket of at least 16 MiB, and `syncsim collective --op all_reduce` at its
// size on the same scenario.
BucketVsCollective bucket_vs_collective(const std::string& collective) {
  const Scenario s = load_scenario_text(text_with(kStep, "COLLECTIVE", collective), "t.yaml");
  const RunResult r = run_scenario(s, RunOptions{});
  REQUIRE(r.step);
  BucketVsCollective out;
  for (const models::BucketTiming& b : r.step->buckets) {
    if (b.bytes < (int64_t{16} << 20) || (out.bytes != 0 && b.bytes >= out.bytes)) continue;
    out.bytes = b.bytes;
    out.step_us = (b.end - b.start).microseconds();
    out.step_protocol = std::string(models::to_string(b.protocol));
  }
  REQUIRE(out.bytes > 0);
  CollectiveSweepOptions o;
  o.op = models::CollectiveOp::AllReduce;
  o.algo = models::CollectiveAlgo::Ring;  // the step's workload.algorithm
  o.sizes = {out.bytes};
  const CollectiveSweep sweep = run_collective_sweep(s, o);
  REQUIRE(sweep.rows.size() == 1);
  REQUIRE(sweep.rows[0].size == out.bytes);
  REQUIRE(sweep.rows[0].algorithm == "ring");
  out.collective_us = sweep.rows[0].out_of_place.time_us;
  out.collective_protocol = sweep.rows[0].protocol;
  MESSAGE(out.bytes << " B bucket: " << out.step_us << " us in the step (" << out.step_protocol
                    << "), " << out.collective_us << " us from syncsim collective ("
                    << out.collective_protocol << ")");
  return out;
}

}  // namespace

TEST_CASE("step protocols: a 25 MB bucket takes what `syncsim collective` takes at its size") {
  const BucketVsCollective automatic = bucket_vs_collective("");
  // NCCL's cost model runs a 25 MB ring all_reduce over 64 ranks with LL128.
  CHECK(automatic.collective_protocol == "LL128");
  CHECK(automatic.step_protocol == automatic.collective_protocol);
  CHECK(std::abs(automatic.step_us / automatic.collective_us - 1.0) < 0.03);

  // Pinned to Simple: the step as it ran before protocols were chosen, and `syncsim collective`
  // with the same pin.
  const BucketVsCollective simple = bucket_vs_collective("collective: {protocol: simple}\n");
  CHECK(simple.bytes == automatic.bytes);
  CHECK(simple.collective_protocol == "Simple");
  CHECK(simple.step_protocol == "Simple");
  CHECK(std::abs(simple.step_us / simple.collective_us - 1.0) < 0.03);
  // Simple's per-step latencies over 126 ring steps: well slower at this size.
  CHECK(simple.step_us > 1.3 * automatic.step_us);
}
