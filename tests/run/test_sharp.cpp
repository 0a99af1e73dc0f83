// SHARP end to end: `syncsim collective` runs CollNet where the fabric's switches reduce and says
// why not where they cannot (one tree per switch, no SHARP), `auto` takes it where NCCL's model
// does, and a DDP step's bucket all-reduces run over it.
#include <doctest/doctest.h>

#include <cstdint>
#include <optional>
#include <string>

#include "run/collective_cmd.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::app;
using syncsim::testing::text_with;

namespace {

// 8 single-GPU hosts on 2 leaves of an NDR fat tree with 2 spines (4 cables each: non-blocking),
// SHARP on; KEYS replaced per case.
const std::string kSharp = R"(name: sharp
seed: 1
fidelity: flow
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 4, spines: 2, uplinks_per_spine: 2}
  link_layer: infiniband
  host: {gpus: 1, nics: 1, gpu: h100}
  links:
    host: {preset: ndr, delay: 100ns}
    fabric: {preset: ndr, delay: 100ns}
  infiniband:
    sharp: {KEYS}
traffic:
  - {pattern: permutation, size: 1KiB}
)";

Scenario sharp(const std::string& keys = "enabled: true") {
  return load_scenario_text(text_with(kSharp, "KEYS", keys), "t.yaml");
}

CollectiveSweep one_size(const Scenario& s, std::optional<models::CollectiveAlgo> algo,
                         int64_t bytes) {
  CollectiveSweepOptions o;
  o.min_bytes = bytes;
  o.max_bytes = bytes;
  o.algo = algo;
  o.auto_algo = !algo;
  return run_collective_sweep(s, o);
}

}  // namespace

TEST_CASE("sharp collective: CollNet moves S once per NIC, the ring 2 (n - 1) / n S") {
  const Scenario s = sharp();
  const int64_t bytes = int64_t{64} << 20;
  const CollectiveSweep ring = one_size(s, models::CollectiveAlgo::Ring, bytes);
  const CollectiveSweep direct = one_size(s, models::CollectiveAlgo::CollnetDirect, bytes);
  const CollectiveSweep chain = one_size(s, models::CollectiveAlgo::CollnetChain, bytes);
  const double t_ring = ring.rows[0].out_of_place.time_us;
  const double t_direct = direct.rows[0].out_of_place.time_us;
  MESSAGE("8 hosts, 64 MiB: ring " << t_ring << " us, collnet_direct " << t_direct
                                   << " us, collnet_chain " << chain.rows[0].out_of_place.time_us
                                   << " us");
  CHECK(direct.rows[0].out_of_place.wrong == 0);
  CHECK(direct.collnet_unavailable.empty());
  CHECK(direct.channels.collnet_heads == 1);
  // Closed forms at NDR's payload rate (4096 B per 4122 B packet): SHARP S / B, the ring
  // 2 (n - 1) / n S / B = 1.75 S / B. The ring's 14-step pipeline hides its fill; CollNet's
  // rounds cross 4 hops each (NCCL's 512 KiB chunk, 16 rounds per channel here), measured 15 %
  // over its closed form.
  const double payload_Bps = 400e9 / 8 * 4096.0 / (4096.0 + 26.0);
  const double closed_us = static_cast<double>(bytes) / payload_Bps * 1e6;
  CHECK(t_direct >= closed_us);
  CHECK(t_direct <= closed_us * 1.2);
  CHECK(t_ring >= 1.75 * closed_us);
  CHECK(t_ring <= 1.75 * closed_us * 1.03);
  CHECK(t_ring / t_direct > 1.45);
  // NCCL's cost model takes CollNet for the large size, and the auto sweep runs it.
  const CollectiveSweep chosen = one_size(s, std::nullopt, bytes);
  CHECK(chosen.rows[0].algorithm.rfind("collnet_", 0) == 0);
}

TEST_CASE("sharp collective: no resources, no SHARP: refused by name, auto falls back") {
  // QM8700-class switches serve one tree each; 8 single-NIC hosts need one tree: fine.
  CHECK(one_size(sharp("trees_per_switch: 1"), models::CollectiveAlgo::CollnetDirect, 1 << 20)
            .collnet_unavailable.empty());
  // Without SHARP: refused, and auto never picks it.
  const Scenario off = sharp("enabled: false");
  CHECK_THROWS_WITH_AS(one_size(off, models::CollectiveAlgo::CollnetDirect, 1 << 20),
                       doctest::Contains("collnet_direct needs SHARP switches"),
                       CollectiveUsageError);
  const CollectiveSweep fallback = one_size(off, std::nullopt, int64_t{64} << 20);
  CHECK(fallback.rows[0].algorithm.rfind("collnet_", 0) == std::string::npos);
  CHECK(fallback.collnet_unavailable.find("needs SHARP switches") != std::string::npos);
}

TEST_CASE("sharp collective: two rails' trees in one switch that serves one") {
  // 2 NICs per host: two rail trees, both through each leaf.
  std::string text = text_with(kSharp, "KEYS", "trees_per_switch: 1");
  text =
      text_with(text, "host: {gpus: 1, nics: 1, gpu: h100}", "host: {gpus: 2, nics: 2, gpu: h100}");
  const Scenario s = load_scenario_text(text, "t.yaml");
  CHECK_THROWS_WITH_AS(one_size(s, models::CollectiveAlgo::CollnetDirect, 1 << 20),
                       doctest::Contains("has no SHARP resources: 2 rail trees meet in leaf0"),
                       CollectiveUsageError);
}

TEST_CASE("sharp step: a DDP step's buckets over CollNet expose less communication") {
  const std::string workload = R"(workload:
  model: {preset: gpt3-1.3b, layers: 2, hidden: 1024, ffn: 4096, heads: 16, kv_heads: 16,
          vocab: 50257, sequence: 1024}
  gpu: h100
  micro_batch: 1
  ddp: {bucket_cap_mb: 25}
  algorithm: ALGO
)";
  auto step = [&](const std::string& algo) {
    std::string text = text_with(kSharp, "KEYS", "enabled: true");
    text = text_with(text, "traffic:\n  - {pattern: permutation, size: 1KiB}\n",
                     text_with(workload, "ALGO", algo));
    return run_scenario(load_scenario_text(text, "t.yaml"), RunOptions{});
  };
  const RunResult ring = step("ring");
  const RunResult direct = step("collnet_direct");
  REQUIRE(ring.step);
  REQUIRE(direct.step);
  MESSAGE("DDP step: ring " << ring.step->step.microseconds() << " us (buckets "
                            << ring.step->sync.microseconds() << " us), collnet_direct "
                            << direct.step->step.microseconds() << " us (buckets "
                            << direct.step->sync.microseconds() << " us)");
  // The buckets' all-reduces: S once per NIC instead of 1.75 S (minus their latencies).
  CHECK(direct.step->sync.seconds() * 1.3 < ring.step->sync.seconds());
  CHECK(direct.step->step <= ring.step->step);
  CHECK(direct.step->exposed_comm <= ring.step->exposed_comm);
}

TEST_CASE("sharp step: FSDP's all-gathers and reduce-scatters over CollNet Direct") {
  const std::string workload = R"(workload:
  model: {preset: gpt3-1.3b, layers: 2, hidden: 1024, ffn: 4096, heads: 16, kv_heads: 16,
          vocab: 50257, sequence: 1024}
  gpu: h100
  micro_batch: 1
  parallelism: fsdp
  algorithm: ALGO
)";
  auto text_for = [&](const std::string& algo, const std::string& extra = "") {
    std::string text = text_with(kSharp, "KEYS", "enabled: true");
    return text_with(text, "traffic:\n  - {pattern: permutation, size: 1KiB}\n",
                     text_with(workload, "ALGO", algo) + extra);
  };
  auto step = [&](const std::string& algo) {
    return run_scenario(load_scenario_text(text_for(algo), "t.yaml"), RunOptions{});
  };
  const RunResult ring = step("ring");
  const RunResult direct = step("collnet_direct");
  REQUIRE(ring.step);
  REQUIRE(direct.step);
  MESSAGE("FSDP step: ring " << ring.step->step.microseconds() << " us (communication "
                             << ring.step->sync.microseconds() << " us), collnet_direct "
                             << direct.step->step.microseconds() << " us (communication "
                             << direct.step->sync.microseconds() << " us)");
  // Per NIC CollNet moves S (the whole input up, reduce_scatter; the whole array down,
  // all_gather) against the ring's (n - 1) / n S = 7/8 S on these 8 hosts, in two tree hops
  // instead of 7 ring steps: the same order of time, not SHARP's all_reduce halving.
  CHECK(direct.step->sync.seconds() > 0.5 * ring.step->sync.seconds());
  CHECK(direct.step->sync.seconds() < 1.5 * ring.step->sync.seconds());
  CHECK(direct.step->sync != ring.step->sync);
  // Chain has no reduce_scatter / all_gather in NCCL; HSDP and fewer NICs than GPUs are refused.
  CHECK_THROWS_WITH_AS(load_scenario_text(text_for("collnet_chain"), "t.yaml"),
                       doctest::Contains("workload.algorithm: expected collnet_chain where SHARP "
                                         "can run it: collnet_direct for FSDP"),
                       ScenarioError);
  CHECK_THROWS_WITH_AS(
      load_scenario_text(text_for("collnet_direct", "  fsdp: {shard_degree: 4}\n"), "t.yaml"),
      doctest::Contains("FULL_SHARD"), ScenarioError);
  std::string two_gpus =
      text_with(text_for("collnet_direct"), "host: {gpus: 1, nics: 1, gpu: h100}",
                "host: {gpus: 2, nics: 1, gpu: h100}");
  CHECK_THROWS_WITH_AS(load_scenario_text(two_gpus, "t.yaml"), doctest::Contains("a NIC per GPU"),
                       ScenarioError);
}
