// Collective plans: symbolic data-flow verification of every (op, algorithm) for 2..17 ranks.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "models/collective_plan.hpp"

using namespace syncsim::models;

namespace {

struct Combo {
  CollectiveOp op;
  CollectiveAlgo algo;
};

const Combo kCombos[] = {
    {CollectiveOp::AllReduce, CollectiveAlgo::Ring},
    {CollectiveOp::ReduceScatter, CollectiveAlgo::Ring},
    {CollectiveOp::AllGather, CollectiveAlgo::Ring},
    {CollectiveOp::Broadcast, CollectiveAlgo::Ring},
    {CollectiveOp::Reduce, CollectiveAlgo::Ring},
    {CollectiveOp::AllReduce, CollectiveAlgo::Tree},
    {CollectiveOp::Broadcast, CollectiveAlgo::Tree},
    {CollectiveOp::Reduce, CollectiveAlgo::Tree},
    {CollectiveOp::AllReduce, CollectiveAlgo::HalvingDoubling},
    {CollectiveOp::ReduceScatter, CollectiveAlgo::HalvingDoubling},
    {CollectiveOp::AllGather, CollectiveAlgo::HalvingDoubling},
    {CollectiveOp::AllToAll, CollectiveAlgo::Pairwise},
    {CollectiveOp::SendRecv, CollectiveAlgo::Pairwise},
};

// A plan's steps with their dependencies as separate vectors, for tests that break plans.
struct EditableStep {
  PlanStep step;
  std::vector<uint32_t> deps;
};
std::vector<EditableStep> steps_of(const CollectivePlan& plan) {
  std::vector<EditableStep> out;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    const auto d = plan.deps(i);
    out.push_back(EditableStep{plan.steps[i], std::vector<uint32_t>(d.begin(), d.end())});
  }
  return out;
}
CollectivePlan with_steps(const CollectivePlan& plan, const std::vector<EditableStep>& steps) {
  CollectivePlan out = plan;
  out.steps.clear();
  out.dep_offsets.assign(1, 0);
  out.dep_list.clear();
  for (const EditableStep& s : steps) out.add_step(s.step, s.deps);
  return out;
}

}  // namespace

TEST_CASE("collective plan: every op and algorithm is data-flow correct for 2..17 ranks") {
  for (const Combo& combo : kCombos) {
    for (uint32_t n = 2; n <= 17; ++n) {
      for (uint32_t channels : {1u, 3u}) {
        for (int64_t chunk : {int64_t{0}, int64_t{1000}}) {
          PlanOptions o;
          o.op = combo.op;
          o.algo = combo.algo;
          o.ranks = n;
          o.bytes = 12'345 + n;  // not divisible by n: uneven parts must still be right
          o.channels = channels;
          o.chunk_bytes = chunk;
          o.root = n / 2;
          o.peer = n - 1 == o.root ? 0 : n - 1;
          CAPTURE(std::string(to_string(combo.op)));
          CAPTURE(std::string(to_string(combo.algo)));
          CAPTURE(n);
          CAPTURE(channels);
          CAPTURE(chunk);
          const CollectivePlan plan = build_plan(o);
          const PlanCheck check = verify_plan(plan);
          CAPTURE(check.error);
          REQUIRE(check.ok);
          int64_t total = 0;
          for (int64_t b : plan.chunk_bytes) total += b;
          const int64_t expected_total = combo.op == CollectiveOp::AllToAll ? o.bytes * n : o.bytes;
          CHECK(total == expected_total);
        }
      }
    }
  }
}

TEST_CASE("collective plan: hierarchical all_reduce is correct for nodes x gpus up to 17 ranks") {
  for (uint32_t g : {1u, 2u, 3u, 4u, 8u}) {
    for (uint32_t nodes = 1; nodes * g <= 17; ++nodes) {
      if (nodes * g < 2) continue;
      for (uint32_t channels : {1u, 2u}) {
        PlanOptions o;
        o.op = CollectiveOp::AllReduce;
        o.algo = CollectiveAlgo::Hierarchical;
        o.ranks = nodes * g;
        o.gpus_per_host = g;
        o.channels = channels;
        o.bytes = 100'003;
        CAPTURE(g);
        CAPTURE(nodes);
        const PlanCheck check = verify_plan(build_plan(o));
        CAPTURE(check.error);
        CHECK(check.ok);
      }
    }
  }
}

TEST_CASE("collective plan: step counts match the textbook algorithms") {
  PlanOptions o;
  o.ranks = 8;
  o.bytes = 1 << 20;
  o.algo = CollectiveAlgo::Ring;
  CHECK(build_plan(o).transfer_count() == 2 * 7 * 8);  // 2(n-1) steps, n senders
  o.op = CollectiveOp::AllGather;
  CHECK(build_plan(o).transfer_count() == 7 * 8);
  o.op = CollectiveOp::AllReduce;
  o.algo = CollectiveAlgo::HalvingDoubling;
  CHECK(build_plan(o).transfer_count() == 2 * 3 * 8);  // 2 log2(n) rounds
  o.ranks = 6;  // fold: 2 extra ranks in, 4 halving-doubling ranks, 2 out
  CHECK(build_plan(o).transfer_count() == 2 + 2 * 2 * 4 + 2);
  o.op = CollectiveOp::AllToAll;
  o.algo = CollectiveAlgo::Pairwise;
  CHECK(build_plan(o).transfer_count() == 6 * 5);
}

TEST_CASE("collective plan: the verifier catches broken plans") {
  PlanOptions o;
  o.ranks = 5;
  o.bytes = 5000;
  CollectivePlan plan = build_plan(o);
  REQUIRE(verify_plan(plan).ok);

  SUBCASE("a missing transfer leaves a rank without a contribution") {
    // Drop the last transfer (an all-gather step): its receiver misses one reduced segment.
    auto steps = steps_of(plan);
    steps.pop_back();
    CHECK_FALSE(verify_plan(with_steps(plan, steps)).ok);
  }
  SUBCASE("a dropped dependency is a race") {
    auto steps = steps_of(plan);
    // The first transfers have no deps; clear those of a reducing transfer that had some.
    bool cleared_one = false;
    for (auto& s : steps) {
      if (s.step.kind == PlanStep::Kind::Transfer && !s.deps.empty() && s.step.reduce) {
        s.deps.clear();
        cleared_one = true;
        break;
      }
    }
    REQUIRE(cleared_one);
    const PlanCheck check = verify_plan(with_steps(plan, steps));
    CHECK_FALSE(check.ok);
    CHECK(check.error.find("without depending") != std::string::npos);
  }
  SUBCASE("a duplicated reduction double counts") {
    auto steps = steps_of(plan);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      if (steps[i].step.kind == PlanStep::Kind::Transfer && steps[i].step.reduce) {
        EditableStep t = steps[i];
        EditableStep r = steps[i + 1];
        t.deps = {static_cast<uint32_t>(i + 1)};
        const auto ti = static_cast<uint32_t>(steps.size());
        steps.push_back(t);
        r.step.source_step = ti;
        r.deps = {ti};
        steps.push_back(r);
        break;
      }
    }
    CHECK_FALSE(verify_plan(with_steps(plan, steps)).ok);
  }
  SUBCASE("dependency arrays that do not match the steps are rejected") {
    CollectivePlan broken = plan;
    broken.dep_offsets.pop_back();
    CHECK_FALSE(verify_plan(broken).ok);
  }
}

TEST_CASE("collective plan: unsupported combinations and bad parameters are rejected") {
  PlanOptions o;
  o.ranks = 4;
  o.op = CollectiveOp::AllToAll;
  o.algo = CollectiveAlgo::Ring;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  o.op = CollectiveOp::AllReduce;
  o.algo = CollectiveAlgo::Hierarchical;
  o.gpus_per_host = 3;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  o.algo = CollectiveAlgo::Ring;
  o.ranks = 1;
  CHECK_THROWS_AS(build_plan(o), std::invalid_argument);
  CHECK(parse_collective_op("reduce_scatter") == CollectiveOp::ReduceScatter);
  CHECK(parse_collective_algo("halving_doubling") == CollectiveAlgo::HalvingDoubling);
  CHECK_THROWS_AS(parse_collective_op("allreduce"), std::invalid_argument);
}

TEST_CASE("collective plan: nccl-tests bus bandwidth factors") {
  CHECK(bus_bandwidth_factor(CollectiveOp::AllReduce, 8) == doctest::Approx(14.0 / 8.0));
  CHECK(bus_bandwidth_factor(CollectiveOp::AllGather, 8) == doctest::Approx(7.0 / 8.0));
  CHECK(bus_bandwidth_factor(CollectiveOp::ReduceScatter, 4) == doctest::Approx(0.75));
  CHECK(bus_bandwidth_factor(CollectiveOp::AllToAll, 4) == doctest::Approx(0.75));
  CHECK(bus_bandwidth_factor(CollectiveOp::Broadcast, 4) == 1.0);
  CHECK(bus_bandwidth_factor(CollectiveOp::Reduce, 4) == 1.0);
}
