// Dropping finished transfer records (TransferBackend::keep_finished_records, used by
// `syncsim collective`) must not change any result: same collective times, counters and events.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/flow_backend.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;
using namespace syncsim::models;
using collective_fixtures::identity;

namespace {

struct Outcome {
  CollectiveResult result;
  BackendCounters counters;
  uint64_t events = 0;
  std::size_t records = 0;
  std::size_t started = 0;
};

Outcome run(const net::NetworkSpec& spec, const CollectivePlan& plan, bool keep) {
  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  backend.keep_finished_records(keep);
  CollectiveRunOptions ro;
  ro.step_latency = Time::ns(700);
  Outcome o;
  o.result = run_collective(backend, plan, identity(plan.ranks), ro);
  o.counters = backend.counters();
  o.events = sim.queue().executed();
  o.records = backend.transfers().size();
  o.started = backend.started();
  return o;
}

}  // namespace

TEST_CASE("collective records: dropping finished records changes no result (analytic)") {
  const uint32_t n = 12;
  const auto spec = topo::build_fabric(
      collective_fixtures::one_host_per_leaf(n, Bandwidth::gbps(100), Time::us(1)));
  for (CollectiveAlgo algo :
       {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::HalvingDoubling}) {
    CAPTURE(to_string(algo));
    PlanOptions po;
    po.algo = algo;
    po.ranks = algo == CollectiveAlgo::HalvingDoubling ? 8 : n;
    po.bytes = 3 << 20;
    po.chunk_bytes = 256 << 10;
    po.connection_depth = 2;
    const CollectivePlan plan = build_plan(po);
    const Outcome kept = run(spec, plan, true);
    const Outcome dropped = run(spec, plan, false);
    CHECK(kept.records == plan.transfer_count());
    CHECK(dropped.records == 0);
    CHECK(dropped.started == plan.transfer_count());
    CHECK(dropped.result.start == kept.result.start);
    CHECK(dropped.result.finish == kept.result.finish);
    CHECK(dropped.result.transfers == kept.result.transfers);
    CHECK(dropped.result.reductions == kept.result.reductions);
    CHECK(dropped.result.bytes_sent == kept.result.bytes_sent);
    CHECK(dropped.counters.packet_hops == kept.counters.packet_hops);
    CHECK(dropped.counters.bytes_delivered == kept.counters.bytes_delivered);
    CHECK(dropped.events == kept.events);
  }
}

TEST_CASE("collective records: set before the first transfer only; zero-size transfers complete") {
  const auto spec = topo::build_fabric(
      collective_fixtures::one_host_per_leaf(2, Bandwidth::gbps(100), Time::us(1)));
  Simulation sim(1);
  AnalyticBackend backend(sim, spec);
  backend.keep_finished_records(false);
  CHECK_FALSE(backend.keeps_finished_records());
  int calls = 0;
  TransferRecord seen;
  backend.start(TransferRequest{0, 1, Bytes{0}, 0}, [&](TransferId, const TransferRecord& r) {
    ++calls;
    seen = r;
  });
  backend.start(TransferRequest{1, 0, Bytes{4096}, 0});  // no callback: still completes
  CHECK_THROWS_AS(backend.keep_finished_records(true), std::logic_error);
  sim.queue().run();
  CHECK(calls == 1);
  CHECK(seen.done);
  CHECK(seen.request.dst_gpu == 1);
  CHECK(backend.transfers().empty());
  CHECK(backend.started() == 2);
  CHECK(backend.counters().bytes_delivered == 4096);
}

TEST_CASE("collective records: the flow backend keeps its records (it reads them by id)") {
  const auto spec = topo::build_fabric(
      collective_fixtures::one_host_per_leaf(4, Bandwidth::gbps(100), Time::us(1)));
  Simulation sim(1);
  FlowBackend backend(sim, spec);
  backend.keep_finished_records(false);
  CHECK(backend.keeps_finished_records());
  PlanOptions po;
  po.ranks = 4;
  po.bytes = 1 << 20;
  const CollectivePlan plan = build_plan(po);
  run_collective(backend, plan, identity(4));
  CHECK(backend.transfers().size() == plan.transfer_count());
}
