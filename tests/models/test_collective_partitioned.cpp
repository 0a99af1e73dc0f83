// A collective on a packet network run as partitions in windows (sim/net/partition_windows.hpp):
// its transfers are handed to the network a step latency ahead (TransferRequest::start_at), so the
// windows run their whole lookahead; results are the same on any number of threads, and close to
// the one-queue run's. The reaction that makes it safe (models::least_reaction) and what happens
// when a callback breaks it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_backend.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/gpu.hpp"
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

struct Run {
  CollectiveResult result;
  net::NetworkCounters counters;
  BackendExecution execution;
  bool ahead = false;
};

// A ring all_reduce of 8 MiB over the 8 ranks, 2 channels, 4 chunks in flight per connection,
// NCCL-like step latencies; `threads` run the partitions when `partitioned`.
Run run_ring(bool partitioned, uint32_t threads, Time net_latency = Time::us(5)) {
  PlanOptions o = collective_fixtures::plan_options(CollectiveOp::AllReduce, CollectiveAlgo::Ring,
                                                    8, int64_t{8} << 20, 2);
  o.gpus_per_host = 1;
  o.chunk_bytes = 256 << 10;
  o.connection_depth = 4;
  const CollectivePlan plan = build_plan(o);
  CollectiveRunOptions ro;
  ro.step_latency = Time::ns(600);
  ro.net_step_latency = net_latency;
  ro.launch_latency = Time::us(6);
  net::NetworkSpec spec = four_leaves();
  spec.execution.partitioned = partitioned;
  spec.execution.threads = threads;
  spec.execution.min_window_events_per_thread = 0;  // every window on the threads
  spec.execution.reaction = least_reaction(plan, identity(8), ro, spec);
  Simulation sim(3);
  PacketBackend backend(sim, spec);
  backend.keep_finished_records(false);
  Run r;
  r.ahead = backend.starts_ahead();
  r.result = run_collective(backend, plan, identity(8), ro);
  r.counters = backend.counters();
  r.execution = backend.execution();
  return r;
}

}  // namespace

TEST_CASE("partitioned collective: the same on 1, 2 and 3 threads, close to one queue") {
  const Run one = run_ring(true, 1);
  REQUIRE(one.execution.partitions == 4);
  CHECK(one.ahead);
  CHECK(one.execution.windows > 100);
  CHECK(one.counters.bytes_delivered == one.counters.bytes_injected);
  CHECK(one.result.bytes_sent > 0);
  for (const uint32_t threads : {2U, 3U}) {
    CAPTURE(threads);
    const Run r = run_ring(true, threads);
    CHECK(r.result.finish == one.result.finish);
    CHECK(r.result.transfers == one.result.transfers);
    CHECK(r.execution.windows == one.execution.windows);
    CHECK(r.counters.packet_hops == one.counters.packet_hops);
    CHECK(r.counters.max_queue_bytes == one.counters.max_queue_bytes);
    CHECK(r.counters.bytes_delivered == one.counters.bytes_delivered);
  }
  // One queue orders simultaneous events of different partitions otherwise; nothing else differs.
  const Run queue = run_ring(false, 1);
  CHECK(queue.execution.partitions == 1);
  CHECK_FALSE(queue.ahead);
  CHECK(queue.counters.packet_hops == one.counters.packet_hops);
  const double a = one.result.duration().seconds();
  const double b = queue.result.duration().seconds();
  MESSAGE("ring all_reduce 8 MiB on 8 ranks: partitioned ", a * 1e6, " us, one queue ", b * 1e6,
          " us, ", one.execution.windows, " windows");
  CHECK(a == doctest::Approx(b).epsilon(0.01));
  // Transfers are handed over ahead, so windows run their whole 1 us lookahead rather than stop at
  // every start (thousands of transfers): about one window per microsecond simulated.
  CHECK(static_cast<double>(one.execution.windows) < 1.05 * one.result.finish.seconds() * 1e6);
}

TEST_CASE("partitioned collective: windows no longer than the least step latency") {
  // A NET latency below the links' 1 us lookahead bounds the windows: more of them, same result
  // on any thread count.
  const Run wide = run_ring(true, 1);
  const Run narrow = run_ring(true, 1, Time::ns(400));
  CHECK(narrow.execution.partitions == 4);
  CHECK(narrow.execution.windows > wide.execution.windows);
  const Run narrow2 = run_ring(true, 2, Time::ns(400));
  CHECK(narrow2.result.finish == narrow.result.finish);
}

TEST_CASE("least_reaction: the least step latency or slot notice, zero refuses partitions") {
  PlanOptions o = collective_fixtures::plan_options(CollectiveOp::AllReduce, CollectiveAlgo::Ring,
                                                    8, int64_t{1} << 20, 1);
  o.gpus_per_host = 1;
  const CollectivePlan plan = build_plan(o);
  const net::NetworkSpec spec = four_leaves();
  CollectiveRunOptions ro;
  ro.step_latency = Time::ns(600);
  ro.net_step_latency = Time::us(5);
  // Single-GPU hosts: every transfer crosses the network (5 us), and a freed slot's notice its two
  // host links at least (1 us each).
  CHECK(least_reaction(plan, identity(8), ro, spec) == Time::us(2));
  ro.net_step_latency = Time::ns(1500);
  CHECK(least_reaction(plan, identity(8), ro, spec) == Time::ns(1500));
  ro.net_step_latency.reset();
  CHECK(least_reaction(plan, identity(8), ro, spec) == Time::ns(600));
  ro.step_latency = Time::zero();
  CHECK(least_reaction(plan, identity(8), ro, spec) == Time::zero());
  net::NetworkSpec zero = spec;
  zero.execution.partitioned = true;
  zero.execution.reaction = Time::zero();
  Simulation sim(1);
  PacketBackend backend(sim, zero);
  CHECK(backend.execution().partitions == 1);
  CHECK(backend.execution().refusal.find("step latency of zero") != std::string::npos);
  CHECK_FALSE(backend.starts_ahead());
}

TEST_CASE("partitioned collective: a flow started sooner than the reaction stops the run") {
  // A callback that starts a transfer at once (not ahead) while the partitions ran on: refused.
  net::NetworkSpec spec = four_leaves();
  spec.execution.partitioned = true;
  spec.execution.reaction = Time::us(1);
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  REQUIRE(backend.starts_ahead());
  backend.start(TransferRequest{0, 7, Bytes{4096}, 0}, [&](TransferId, const TransferRecord&) {
    backend.start(TransferRequest{7, 0, Bytes{4096}, 0});
  });
  CHECK_THROWS_AS(sim.queue().run(), std::logic_error);
}

TEST_CASE("make_collective_backend: partitions at packet level on GPUDirect RoCE only") {
  PlanOptions o = collective_fixtures::plan_options(CollectiveOp::AllReduce, CollectiveAlgo::Ring,
                                                    8, int64_t{1} << 20, 1);
  o.gpus_per_host = 1;
  const CollectivePlan plan = build_plan(o);
  CollectiveRunOptions ro;
  ro.step_latency = Time::ns(600);
  ro.net_step_latency = Time::us(5);
  const net::NetworkSpec spec = four_leaves();
  Simulation s1(1);
  const CollectiveBackend packet =
      make_collective_backend(Fidelity::Packet, s1, spec, plan, {identity(8)}, ro, 2);
  CHECK(packet.partitioned_spec != nullptr);
  CHECK(packet->execution().partitions == 4);
  CHECK(packet->execution().threads == 2);
  CHECK(packet->starts_ahead());
  CHECK(packet->spec().execution.reaction == Time::us(2));
  // The least reaction over every placement of the plan: one placing two ranks on GPUs of one host
  // would lower it, one across hosts keeps it.
  std::vector<uint32_t> reversed = identity(8);
  std::reverse(reversed.begin(), reversed.end());
  Simulation s2(1);
  const CollectiveBackend two =
      make_collective_backend(Fidelity::Packet, s2, spec, plan, {identity(8), reversed}, ro, 1);
  CHECK(two->spec().execution.reaction == Time::us(2));
  ro.net_step_latency = Time::ns(1500);
  Simulation s3(1);
  const CollectiveBackend faster =
      make_collective_backend(Fidelity::Packet, s3, spec, plan, {identity(8)}, ro, 1);
  CHECK(faster->spec().execution.reaction == Time::ns(1500));
  // Flow level, and transports that start their parts themselves: make_backend's fabric as is.
  Simulation s4(1);
  const CollectiveBackend flow =
      make_collective_backend(Fidelity::Flow, s4, spec, plan, {identity(8)}, ro, 2);
  CHECK(flow.partitioned_spec == nullptr);
  CHECK(&flow->spec() == &spec);
  CHECK(flow->execution().partitions == 1);
  net::NetworkSpec tcp = spec;
  tcp.transport.kind = net::TransportKind::Tcp;
  Simulation s5(1);
  const CollectiveBackend staged =
      make_collective_backend(Fidelity::Packet, s5, tcp, plan, {identity(8)}, ro, 2);
  CHECK(staged.partitioned_spec == nullptr);
  CHECK(staged->execution().partitions == 1);
  CHECK_FALSE(staged->starts_ahead());
}

TEST_CASE("packet-level step: bucket timings on partitions, the same on 1 and 4 threads") {
  // Few bucket sizes (idle-fabric runs): 4 threads run them at once, each fabric's 4 partitions on
  // the threads left over.
  const net::NetworkSpec spec = four_leaves();
  StepConfig c;
  // A small model: 13 MB of gradients in one bucket past DDP's first.
  small_gpt_on_h100(c);
  c.ddp.bucket_cap = Bytes(64 << 20);
  c.algorithm = CollectiveAlgo::Tree;
  c.zero_compute = true;
  c.collective.step_latency = Time::us(2);
  c.collective.launch_latency = Time::us(10);
  c.rank_to_gpu = identity(8);
  auto run = [&](uint32_t threads) {
    c.threads = threads;
    Simulation sim(c.seed);
    PacketBackend backend(sim, spec);
    return simulate_ddp_step(backend, spec, Fidelity::Packet, c);
  };
  const StepResult one = run(1);
  const StepResult four = run(4);
  REQUIRE(!one.buckets.empty());
  MESSAGE("packet-level DDP step of ", one.buckets.size(), " buckets: ", one.step.seconds() * 1e3,
          " ms");
  CHECK(one.step > Time::zero());
  CHECK(four.step == one.step);
  CHECK(four.buckets[0].end == one.buckets[0].end);
  CHECK(four.bytes_per_gpu == one.bytes_per_gpu);
}
