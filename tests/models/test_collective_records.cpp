// Dropping finished transfer records (TransferBackend::keep_finished_records, used by
// `syncsim collective` and the step model's private idle-fabric simulations) must not change any
// result: same collective times, counters and events, at every fidelity.
#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "collective_fixtures.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/make_backend.hpp"
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

Outcome run(Fidelity fidelity, const net::NetworkSpec& spec, const CollectivePlan& plan,
            bool keep) {
  Simulation sim(1);
  const std::unique_ptr<TransferBackend> backend = make_backend(fidelity, sim, spec);
  backend->keep_finished_records(keep);
  CHECK(backend->keeps_finished_records() == keep);
  CollectiveRunOptions ro;
  ro.step_latency = Time::ns(700);
  Outcome o;
  o.result = run_collective(*backend, plan, identity(plan.ranks), ro);
  o.counters = backend->counters();
  o.events = sim.queue().executed();
  o.records = backend->transfers().size();
  o.started = backend->started();
  return o;
}

}  // namespace

TEST_CASE("collective records: dropping finished records changes no result, at every fidelity") {
  const uint32_t n = 12;
  const auto spec = topo::build_fabric(
      collective_fixtures::one_host_per_leaf(n, Bandwidth::gbps(100), Time::us(1)));
  for (Fidelity fidelity : {Fidelity::Analytic, Fidelity::Flow, Fidelity::Packet}) {
    for (CollectiveAlgo algo :
         {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::HalvingDoubling}) {
      CAPTURE(fidelity_name(fidelity));
      CAPTURE(to_string(algo));
      PlanOptions po;
      po.algo = algo;
      po.ranks = algo == CollectiveAlgo::HalvingDoubling ? 8 : n;
      po.bytes = fidelity == Fidelity::Packet ? 1 << 20 : 3 << 20;
      po.chunk_bytes = 256 << 10;
      po.connection_depth = 2;
      const CollectivePlan plan = build_plan(po);
      const Outcome kept = run(fidelity, spec, plan, true);
      const Outcome dropped = run(fidelity, spec, plan, false);
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
