// Incremental max-min recomputation (the local region and the touched link-flow component) against
// the global recomputation of every active flow.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tests/fabric/flow_fixtures.hpp"

using namespace syncsim;

namespace {

// 6 leaves x 4 hosts x 2 GPUs/NICs at 100G. 2 spines: leaf uplinks are 4:1 oversubscribed, so flows
// crossing spines form large components and flows inside a leaf small ones. 8 spines: non-blocking,
// flows mostly limited by their NICs.
net::NetworkSpec fabric(uint32_t spines) {
  return topo::build_fabric(
      testing::flow_test_fabric(6, 4, spines, Bandwidth::gbps(100), Bandwidth::gbps(100), 2));
}

// Sizes from 4 KB to 64 MB (log-uniform); several arrivals share an instant.
std::vector<testing::Arrival> random_arrivals(uint64_t seed, std::size_t count, uint32_t gpus) {
  return testing::random_arrivals(seed, 7, count, gpus, 14.0, 200);
}
using testing::Arrival;
using testing::schedule_arrivals;

}  // namespace

TEST_CASE("flow incremental: rates equal a global recomputation at every instant") {
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    CAPTURE(seed);
    const bool non_blocking = seed > 2;
    const auto spec = fabric(non_blocking ? 8 : 2);
    const auto gpus = static_cast<uint32_t>(spec.gpus.size());
    const auto arrivals = random_arrivals(seed, 300, gpus);
    Simulation sl(1), sc(1), sg(1);
    FlowBackend local(sl, spec, FlowBackend::Recompute::Local);
    FlowBackend component(sc, spec, FlowBackend::Recompute::Component);
    FlowBackend global(sg, spec, FlowBackend::Recompute::Global);
    schedule_arrivals(sl, local, arrivals);
    schedule_arrivals(sc, component, arrivals);
    schedule_arrivals(sg, global, arrivals);
    std::size_t compared = 0;
    double worst_local = 0;
    std::size_t component_differs = 0;
    // Checkpoints every 2.5 us: half on arrival instants, half between (after completions).
    for (int64_t t = 0; !sl.queue().empty() || !sc.queue().empty() || !sg.queue().empty();
         t += 2500) {
      sl.queue().run(Time::ns(t));
      sc.queue().run(Time::ns(t));
      sg.queue().run(Time::ns(t));
      // Component mode against a fresh global filling of the same flows: bit-identical.
      const auto c = component.active_rates_bps();
      const auto c_scratch = component.global_rates_bps();
      REQUIRE(c.size() == c_scratch.size());
      for (std::size_t i = 0; i < c.size(); ++i) {
        if (c[i].first != c_scratch[i].first || c[i].second != c_scratch[i].second)
          ++component_differs;
      }
      // Local mode against a fresh global filling of its flows: within 1e-12 relative.
      const auto l = local.active_rates_bps();
      const auto l_scratch = local.global_rates_bps();
      REQUIRE(l.size() == l_scratch.size());
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (l[i].first != l_scratch[i].first || !(l[i].second > 0)) {
          FAIL("flow " << l[i].first << " has rate " << l[i].second);
        }
        worst_local = std::max(worst_local,
                               std::abs(l[i].second - l_scratch[i].second) / l_scratch[i].second);
        ++compared;
      }
      CHECK(local.active_flows() == global.active_flows());
    }
    CHECK(compared > 1000);
    CHECK(component_differs == 0);
    CHECK(worst_local <= 1e-12);
    // Component and global are the same run, to the picosecond; local within a picosecond.
    REQUIRE(global.transfers().size() == arrivals.size());
    std::size_t same_finish = 0;
    int64_t worst_local_ps = 0;
    for (std::size_t i = 0; i < arrivals.size(); ++i) {
      REQUIRE(global.transfers()[i].done);
      REQUIRE(local.transfers()[i].done);
      if (component.transfers()[i].finish == global.transfers()[i].finish) ++same_finish;
      worst_local_ps =
          std::max(worst_local_ps, std::abs(local.transfers()[i].finish.picoseconds() -
                                            global.transfers()[i].finish.picoseconds()));
    }
    CHECK(same_finish == arrivals.size());
    CHECK(worst_local_ps <= 1);
    CHECK(local.counters().bytes_delivered == global.counters().bytes_delivered);
    // ...with less work: components are smaller than the whole flow set, and on the non-blocking
    // fabric local regions are much smaller than components (on the oversubscribed one a change
    // propagates through the shared uplinks and regions approach whole components).
    CHECK(component.flows_recomputed() < global.flows_recomputed());
    if (non_blocking) CHECK(local.flows_recomputed() * 2 < component.flows_recomputed());
    MESSAGE("flows refilled: global "
            << global.flows_recomputed() << ", component " << component.flows_recomputed()
            << ", local " << local.flows_recomputed() << "; worst local rate error " << worst_local
            << ", finish " << worst_local_ps << " ps");
  }
}

TEST_CASE("flow incremental: disjoint flows do not recompute each other") {
  // Hosts under different leaves talking only inside their leaf share no link.
  const auto spec = fabric(2);
  Simulation sim(1);
  FlowBackend flow(sim, spec, FlowBackend::Recompute::Component);
  // GPU 2h+g is on host h; hosts 4l..4l+3 under leaf l. Leaf 0: GPU 0 -> 2; leaf 1: GPU 8 -> 10.
  flow.start(TransferRequest{0, 2, Bytes{1'000'000}, 0});
  sim.queue().run(Time::us(1));
  const uint64_t before = flow.flows_recomputed();
  flow.start(TransferRequest{8, 10, Bytes{50'000'000}, 0});
  sim.queue().run(Time::us(2));
  CHECK(flow.flows_recomputed() - before == 1);  // only the new flow's component (itself)
  // A flow sharing GPU 0's uplink joins its component: both are refilled.
  flow.start(TransferRequest{0, 4, Bytes{1'000'000}, 0});
  sim.queue().run(Time::us(3));
  CHECK(flow.flows_recomputed() - before == 3);
  CHECK(flow.rate_bps(0) == doctest::Approx(flow.rate_bps(2)));
  sim.queue().run();
  CHECK(flow.counters().bytes_delivered == 52'000'000);
  CHECK(flow.active_flows() == 0);
}
