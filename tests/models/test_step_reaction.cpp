// A training step run live on a packet fabric as partitions (run/runner.cpp): its windows last no
// longer than the soonest its collectives start a transfer after what it waited for
// (models::step_reaction), its results are the same on any number of threads and close to the
// one-queue run's, and a collective that would react sooner is refused rather than run wrong.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "collective_fixtures.hpp"
#include "models/collective_runner.hpp"
#include "models/gpu.hpp"
#include "models/step_reaction.hpp"
#include "models/step_sim.hpp"
#include "models/transformer.hpp"
#include "sim/backends/packet_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::four_leaves;
using collective_fixtures::identity;
using collective_fixtures::small_gpt_on_h100;

namespace {

// A small DDP step (~6.6 M parameters, two buckets) whose buckets run live on the fabric.
StepConfig live_step() {
  StepConfig c;
  small_gpt_on_h100(c);
  c.ddp.bucket_cap = Bytes(8 << 20);
  c.algorithm = CollectiveAlgo::Ring;
  c.collective.step_latency = Time::us(2);
  c.collective.net_step_latency = Time::us(3);
  c.collective.launch_latency = Time::us(10);
  c.connection_depth = 4;
  c.reuse_bucket_timings = false;
  c.rank_to_gpu = identity(8);
  return c;
}

}  // namespace

TEST_CASE("step reaction: the least step latency, no more than a freed slot's notice") {
  StepConfig c = live_step();
  // Cables of 1 us: a notice crosses two at least (2 us), the least step latency is 2 us.
  CHECK(step_reaction(c, four_leaves(Time::us(1))) == Time::us(2));
  c.collective.step_latency = Time::us(5);
  c.collective.net_step_latency = Time::us(4);
  CHECK(step_reaction(c, four_leaves(Time::us(1))) == Time::us(2));   // the notice binds
  CHECK(step_reaction(c, four_leaves(Time::us(10))) == Time::us(4));  // the latency between hosts
  c.collective.net_step_latency.reset();
  CHECK(step_reaction(c, four_leaves(Time::us(10))) == Time::us(5));
  c.collective.step_latency = Time::zero();
  CHECK(step_reaction(c, four_leaves(Time::us(1))) == Time::zero());
  // In-switch engines pass data on at once.
  c = live_step();
  for (const CollectiveAlgo a : {CollectiveAlgo::Nvls, CollectiveAlgo::NvlsTree,
                                 CollectiveAlgo::CollnetDirect, CollectiveAlgo::CollnetChain}) {
    c.algorithm = a;
    CHECK(step_reaction(c, four_leaves(Time::us(1))) == Time::zero());
  }
}

TEST_CASE("live packet-level step on partitions: the same on 1 and 2 threads, close to one queue") {
  StepConfig c = live_step();
  auto run = [&](bool partitioned, uint32_t threads) {
    net::NetworkSpec spec = four_leaves(Time::us(1));
    if (partitioned) {
      spec.execution.partitioned = true;
      spec.execution.threads = threads;
      spec.execution.min_window_events_per_thread = 0;  // every window on the threads
      spec.execution.reaction = step_reaction(c, spec);
    }
    c.threads = threads;
    Simulation sim(c.seed);
    PacketBackend backend(sim, spec);
    StepResult r = simulate_ddp_step(backend, spec, Fidelity::Packet, c);
    const BackendExecution e = backend.execution();
    if (partitioned) {
      CHECK(e.partitions == 4);
      CHECK(e.windows > 0);
      CHECK(backend.starts_ahead());
      CHECK(e.window == Time::us(1));  // the lookahead (a cable), below the reaction (2 us)
    }
    return r;
  };
  const StepResult one_queue = run(false, 1);
  const StepResult one = run(true, 1);
  const StepResult two = run(true, 2);
  REQUIRE(one.buckets.size() >= 2);
  CHECK(two.step == one.step);
  for (std::size_t b = 0; b < one.buckets.size(); ++b)
    CHECK(two.buckets[b].end == one.buckets[b].end);
  CHECK(two.bytes_per_gpu == one.bytes_per_gpu);
  // Only events of one picosecond in two partitions order differently from one queue.
  MESSAGE("one queue ", one_queue.step.seconds() * 1e3, " ms, partitioned ",
          one.step.seconds() * 1e3, " ms");
  CHECK(std::abs(one.step.seconds() / one_queue.step.seconds() - 1) < 1e-4);
  CHECK(one.bytes_per_gpu == one_queue.bytes_per_gpu);
}

TEST_CASE("live packet-level step on partitions: a collective that reacts sooner is refused") {
  // Windows sized for a 2 us reaction; the step's collectives claim only 0.5 us: the runner
  // refuses to start rather than hand over transfers into a partition's past.
  StepConfig c = live_step();
  net::NetworkSpec spec = four_leaves(Time::us(1));
  spec.execution.partitioned = true;
  spec.execution.reaction = Time::us(2);
  c.collective.step_latency = Time::ns(500);
  c.collective.net_step_latency = Time::ns(500);
  Simulation sim(c.seed);
  PacketBackend backend(sim, spec);
  std::string refusal;
  try {
    simulate_ddp_step(backend, spec, Fidelity::Packet, c);
  } catch (const std::logic_error& e) {
    refusal = e.what();
  }
  CHECK(refusal.find("start 500.0") != std::string::npos);
  CHECK(refusal.find("runs on partitions whose windows last 1000.0") != std::string::npos);
}
