// Tree/ring crossover in simulation, end to end through `syncsim collective`'s sweep: on a 64-rank
// spine-leaf, small all_reduces are faster with the double binary tree (log2 n latency), large ones
// with the ring (bandwidth-optimal), and `--algo auto` (NCCL's cost model) picks one that the
// simulation finds within 10% of the faster.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "run/collective_cmd.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;
using namespace syncsim::app;

namespace {

// 16 leaves x 4 single-GPU hosts, 4 spines: non-blocking (4 x 100G down, 4 x 100G up per leaf).
constexpr const char* kSixtyFour =
    "name: crossover\nseed: 1\nfidelity: flow\n"
    "fabric:\n"
    "  topology: spine_leaf\n"
    "  spine_leaf: {leaves: 16, hosts_per_leaf: 4, spines: 4}\n"
    "  links:\n    host: {bandwidth: 100Gbps, delay: 1us}\n    fabric: {bandwidth: 100Gbps, delay: "
    "1us}\n"
    "traffic:\n  - {pattern: permutation, size: 1KiB}\n";

// Ring and tree sweeps with each algorithm's best protocol, and auto's choices from the cost
// model alone (the nccl_model fidelity makes the same choice per size without simulating).
struct Crossover {
  CollectiveSweep ring, tree, choice;
};
Crossover sweep_both(int64_t min_bytes, int64_t max_bytes, int64_t factor) {
  const Scenario s = load_scenario_text(kSixtyFour, "inline");
  CollectiveSweepOptions o;
  o.min_bytes = min_bytes;
  o.max_bytes = max_bytes;
  o.step_factor = factor;
  o.auto_protocol = true;  // each algorithm with its best protocol, as NCCL tunes them
  Crossover c;
  o.algo = models::CollectiveAlgo::Ring;
  c.ring = run_collective_sweep(s, o);
  o.algo = models::CollectiveAlgo::Tree;
  c.tree = run_collective_sweep(s, o);
  o.algo.reset();
  o.auto_algo = true;
  o.nccl_model = true;
  c.choice = run_collective_sweep(s, o);
  REQUIRE(c.ring.rows.size() == c.tree.rows.size());
  REQUIRE(c.ring.rows.size() == c.choice.rows.size());
  return c;
}

// Checks auto's pick against the simulated times; returns (tree won a size, ring won a size).
std::pair<bool, bool> check_auto(const Crossover& c) {
  bool tree_won = false, ring_won = false;
  for (std::size_t i = 0; i < c.ring.rows.size(); ++i) {
    const double r = c.ring.rows[i].out_of_place.time_us;
    const double t = c.tree.rows[i].out_of_place.time_us;
    const bool picks_ring = c.choice.rows[i].algorithm == "ring";
    const double a = picks_ring ? r : t;
    MESSAGE(c.ring.rows[i].size, " B: ring ", r, " us (", c.ring.rows[i].protocol, "), tree ", t,
            " us (", c.tree.rows[i].protocol, "), auto picks ", c.choice.rows[i].algorithm);
    CAPTURE(c.ring.rows[i].size);
    CHECK(c.choice.rows[i].protocol ==
          (picks_ring ? c.ring.rows[i].protocol : c.tree.rows[i].protocol));
    CHECK(a <= 1.10 * std::min(r, t));
    if (t < r) tree_won = true;
    if (r < t) ring_won = true;
  }
  return {tree_won, ring_won};
}

}  // namespace

TEST_CASE("tree/ring crossover in simulation: small all_reduces are faster with the tree") {
  const Crossover c = sweep_both(8, int64_t{256} << 10, 8);
  const auto [tree_won, ring_won] = check_auto(c);
  CHECK(tree_won);
  CHECK_FALSE(ring_won);  // up to 256 KiB the ring's 2(n-1) step latencies dominate
  // `--algo auto` simulates exactly the picked algorithm with its protocol.
  const Scenario s = load_scenario_text(kSixtyFour, "inline");
  CollectiveSweepOptions o;
  o.min_bytes = o.max_bytes = 4096;
  o.auto_algo = true;
  o.auto_protocol = true;
  const CollectiveSweep simulated = run_collective_sweep(s, o);
  CHECK(simulated.rows[0].algorithm == "tree");
  CHECK(simulated.rows[0].out_of_place.time_us == c.tree.rows[3].out_of_place.time_us);
}

// About 35 s in Release: the flow backend recomputes max-min rates at every flow event, and a
// 64-rank tree of 128 MiB in LL128's ~280 KB chunks is ~60 k transfers, most of them concurrent.
TEST_CASE(
    "tree/ring crossover in simulation: large all_reduces are faster with the ring and auto "
    "follows" *
    doctest::test_suite("slow")) {
  const Crossover c = sweep_both(int64_t{2} << 20, int64_t{128} << 20, 64);
  const auto [tree_won, ring_won] = check_auto(c);
  CHECK(tree_won);  // 2 MiB: still the tree
  CHECK(ring_won);  // 128 MiB: the ring
  CHECK(c.ring.rows.back().out_of_place.time_us < c.tree.rows.back().out_of_place.time_us);
}

TEST_CASE("nccl chunk: tree LL128 halves its chunk until the tree pipelines") {
  using models::CollectiveAlgo;
  using models::NcclProtocol;
  const models::ProtocolTiming ll128 = models::protocol_timing(
      CollectiveAlgo::Tree, NcclProtocol::LL128, models::CollectiveConfig{});
  CHECK(ll128.chunk_bytes == 576000);  // 4800 KiB * 120/128 / 8 slots
  // 64 nodes of 1 GPU: nsteps = 1 + 6 + 0.1 = 7.1; 64 * 7.1 = 454 and 16 * 7.1 = 113.6 pieces.
  auto chunk = [&](CollectiveAlgo a, NcclProtocol p, int64_t bytes) {
    return models::nccl_chunk_bytes(a, p, 576000, bytes, 1, 64, 64);
  };
  CHECK(chunk(CollectiveAlgo::Tree, NcclProtocol::LL128, int64_t{2} << 20) == 18000);
  CHECK(chunk(CollectiveAlgo::Tree, NcclProtocol::LL128, int64_t{128} << 20) == 288000);
  CHECK(chunk(CollectiveAlgo::Ring, NcclProtocol::LL128, int64_t{2} << 20) == 576000);
  CHECK(chunk(CollectiveAlgo::Tree, NcclProtocol::Simple, int64_t{2} << 20) == 576000);
}
