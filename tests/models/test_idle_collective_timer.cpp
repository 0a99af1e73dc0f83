// The idle-fabric collective timer's symmetry rule (idle_collective_timer.hpp): at analytic
// fidelity one group of each translation class is simulated, with results identical to simulating
// every group as placed.
#include <doctest/doctest.h>

#include <vector>

#include "models/idle_collective_timer.hpp"
#include "models/parallelism.hpp"
#include "step_fixtures.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

using Groups = std::vector<std::vector<uint32_t>>;

// `hosts` hosts of 8 GPUs (8 NICs) on a 2-pod fat tree: 2 leaves of 2 hosts and 2 spines per pod.
net::NetworkSpec two_pod_fat_tree(uint32_t hosts_per_leaf = 2) {
  topo::FabricParams p;
  p.kind = topo::TopologyKind::FatTree;
  p.fat_tree.pods = 2;
  p.fat_tree.leaves_per_pod = 2;
  p.fat_tree.spines_per_pod = 2;
  p.fat_tree.hosts_per_leaf = hosts_per_leaf;
  p.fat_tree.cores = 2;
  p.host.gpus = 8;
  p.host.nics = 8;
  return topo::build_fabric(p);
}

StepConfig config_for(const char* model, uint32_t ranks, ParallelLayout layout) {
  StepConfig c = step_fixtures::step_config(model, ranks);
  c.layout = layout;
  c.gpus_per_host = 8;
  c.channels = 8;
  return c;
}

// One group per host: its 8 GPUs.
Groups per_host_groups(uint32_t hosts) {
  Groups g(hosts);
  for (uint32_t h = 0; h < hosts; ++h)
    for (uint32_t l = 0; l < 8; ++l) g[h].push_back(h * 8 + l);
  return g;
}

}  // namespace

TEST_CASE("idle timer: the builders state their translation period") {
  CHECK(two_pod_fat_tree().translation_period_hosts == 4);  // a pod: 2 leaves x 2 hosts
  CHECK(step_fixtures::eight_gpu_hosts(4).translation_period_hosts == 2);  // a leaf
}

TEST_CASE("idle timer: groups inside hosts are simulated once at analytic fidelity") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = config_for("llama2-7b", 32, {});
  IdleCollectiveTimer symmetric(spec, Fidelity::Analytic, c);
  const auto a =
      symmetric.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, per_host_groups(4), 64 << 20);
  CHECK(symmetric.simulated_groups() == 1);

  StepConfig every = c;
  every.time_symmetric_groups_once = false;
  IdleCollectiveTimer placed(spec, Fidelity::Analytic, every);
  const auto b =
      placed.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, per_host_groups(4), 64 << 20);
  CHECK(placed.simulated_groups() == 4);
  CHECK(a.duration == b.duration);
  CHECK(a.bytes_per_gpu == b.bytes_per_gpu);
  CHECK(a.duration > Time::zero());

  // At flow fidelity groups share links as placed, so every one is simulated.
  IdleCollectiveTimer flow(spec, Fidelity::Flow, c);
  flow.time(CollectiveOp::AllGather, CollectiveAlgo::Ring, per_host_groups(4), 64 << 20);
  CHECK(flow.simulated_groups() == 4);
}

TEST_CASE("idle timer: groups one period apart share a timing and others do not") {
  // Two hosts per leaf (the period): {hosts 0, 1} and {hosts 2, 3} are one leaf apart; {1, 2}
  // crosses the spines and is a class of its own.
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  const StepConfig c = config_for("llama2-7b", 32, {});
  IdleCollectiveTimer timer(spec, Fidelity::Analytic, c);
  const std::vector<uint32_t> leaf0 = {0, 8}, leaf1 = {16, 24}, across = {8, 16};
  const auto inside =
      timer.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, {leaf0, leaf1}, 16 << 20);
  CHECK(timer.simulated_groups() == 1);
  const auto crossing =
      timer.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, {across}, 16 << 20);
  CHECK(timer.simulated_groups() == 2);
  // The same call moved by one period is answered from the first.
  timer.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, {leaf1}, 16 << 20);
  CHECK(timer.simulated_groups() == 2);
  // Inside a leaf a hop is host-leaf-host; across, host-leaf-spine-leaf-host: more latency.
  CHECK(crossing.duration > inside.duration);
}

TEST_CASE("idle timer: host staging keeps groups that share hosts together") {
  // roce_host_staged couples groups through each host's memory: the two groups of local GPUs 0 and
  // 1 are simulated together (2 groups), and the whole call one leaf on is answered from the first.
  auto p = step_fixtures::eight_gpu_host_params(4, Bandwidth::gbps(400));
  auto spec = topo::build_fabric(p);
  spec.transport.kind = net::TransportKind::RoceHostStaged;
  const StepConfig c = config_for("llama2-7b", 32, {});
  IdleCollectiveTimer timer(spec, Fidelity::Analytic, c);
  timer.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, {{0, 8}, {1, 9}}, 16 << 20);
  CHECK(timer.simulated_groups() == 2);
  timer.time(CollectiveOp::AllReduce, CollectiveAlgo::Ring, {{16, 24}, {17, 25}}, 16 << 20);
  CHECK(timer.simulated_groups() == 2);
}

TEST_CASE("idle timer: a 3D-parallel FSDP step is identical with and without the symmetry rule") {
  // FSDP x TP 8 x PP 2 on 2 pods of 4 hosts: each pipeline stage is one pod, so the second stage's
  // data-parallel groups are the first's one period on.
  const auto spec = two_pod_fat_tree();
  StepConfig c = config_for("llama2-13b", 64, ParallelLayout{.tensor = 8, .pipeline = 2});
  c.parallelism = DataParallelism::Fsdp;
  c.layout.sequence_parallel = true;
  c.grad_accumulation = 4;
  const StepResult fast = simulate_parallel_step(spec, Fidelity::Analytic, c);
  c.time_symmetric_groups_once = false;
  const StepResult every = simulate_parallel_step(spec, Fidelity::Analytic, c);
  CHECK(fast.step == every.step);
  CHECK(fast.exposed_comm == every.exposed_comm);
  CHECK(fast.tail == every.tail);
  REQUIRE(fast.collectives.size() == every.collectives.size());
  for (std::size_t i = 0; i < fast.collectives.size(); ++i) {
    CAPTURE(fast.collectives[i].kind);
    CHECK(fast.collectives[i].end - fast.collectives[i].start ==
          every.collectives[i].end - every.collectives[i].start);
    CHECK(fast.collectives[i].count == every.collectives[i].count);
    CHECK(fast.collectives[i].bytes == every.collectives[i].bytes);
  }
}

// StepConfig::threads: a first pass notes the step's collectives, the timer runs them at once, the
// second pass reads them. Every field comes out as on one thread, with and without the symmetry
// rule and at flow fidelity (every group as placed).
TEST_CASE("idle timer: the closed form on threads is identical to one thread") {
  const auto spec = two_pod_fat_tree();
  StepConfig fsdp = config_for("llama2-13b", 64, ParallelLayout{.tensor = 8, .pipeline = 2});
  fsdp.parallelism = DataParallelism::Fsdp;
  fsdp.layout.sequence_parallel = true;
  fsdp.grad_accumulation = 4;
  StepConfig placed = fsdp;
  placed.time_symmetric_groups_once = false;
  StepConfig ddp = config_for("llama2-13b", 64, ParallelLayout{.tensor = 4, .pipeline = 2});
  ddp.layout.distributed_optimizer = true;
  struct Case {
    StepConfig config;
    Fidelity fidelity;
  };
  for (const Case& k : {Case{fsdp, Fidelity::Analytic}, Case{placed, Fidelity::Analytic},
                        Case{ddp, Fidelity::Flow}}) {
    CAPTURE(static_cast<int>(k.fidelity));
    StepConfig c = k.config;
    const StepResult one = simulate_parallel_step(spec, k.fidelity, c);
    c.threads = 3;
    const StepResult three = simulate_parallel_step(spec, k.fidelity, c);
    CHECK(three.step == one.step);
    CHECK(three.exposed_comm == one.exposed_comm);
    CHECK(three.sync == one.sync);
    CHECK(three.tail == one.tail);
    CHECK(three.bytes_per_gpu == one.bytes_per_gpu);
    CHECK(three.memory_per_gpu_bytes == one.memory_per_gpu_bytes);
    CHECK(three.warnings == one.warnings);
    REQUIRE(three.collectives.size() == one.collectives.size());
    REQUIRE(one.collectives.size() >= 2);
    for (std::size_t i = 0; i < one.collectives.size(); ++i) {
      CAPTURE(one.collectives[i].kind);
      CHECK(three.collectives[i].kind == one.collectives[i].kind);
      CHECK(three.collectives[i].end == one.collectives[i].end);
      CHECK(three.collectives[i].count == one.collectives[i].count);
      CHECK(three.collectives[i].protocol == one.collectives[i].protocol);
    }
    REQUIRE(three.buckets.size() == one.buckets.size());
    for (std::size_t i = 0; i < one.buckets.size(); ++i) {
      CHECK(three.buckets[i].end == one.buckets[i].end);
    }
  }
}
