// Incremental max-min recomputation (only the link-flow component an arrival or completion touches)
// against the global recomputation of every active flow.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "sim/backends/flow_backend.hpp"
#include "sim/core/rng.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

net::NetworkSpec oversubscribed_fabric() {
  // 6 leaves x 4 hosts x 2 GPUs/NICs, 2 spines: leaf uplinks are 4:1 oversubscribed, so flows
  // crossing spines form large components and flows inside a leaf small ones.
  topo::FabricParams p;
  p.spine_leaf.leaves = 6;
  p.spine_leaf.hosts_per_leaf = 4;
  p.spine_leaf.spines = 2;
  p.host.gpus = 2;
  p.host.nics = 2;
  p.links.host.bandwidth = Bandwidth::gbps(100);
  p.links.fabric.bandwidth = Bandwidth::gbps(100);
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->delay = Time::us(1);
    l->mtu = Bytes{4096};
    l->header = Bytes{64};
  }
  return topo::build_fabric(p);
}

struct Arrival {
  Time at;
  TransferRequest request;
};

std::vector<Arrival> random_arrivals(uint64_t seed, std::size_t count, uint32_t gpus) {
  RngStream rng(seed, 7);
  std::vector<Arrival> out;
  for (std::size_t i = 0; i < count; ++i) {
    const auto src = static_cast<uint32_t>(rng.below(gpus));
    auto dst = static_cast<uint32_t>(rng.below(gpus - 1));
    if (dst >= src) ++dst;
    // Sizes from 4 KB to 64 MB (log-uniform); several arrivals share an instant.
    const double size = 4096.0 * std::pow(2.0, 14.0 * rng.uniform());
    const Time at = Time::us(static_cast<int64_t>(rng.below(200)) * 5);
    out.push_back(Arrival{at, TransferRequest{src, dst, Bytes{static_cast<int64_t>(size)}, 0}});
  }
  return out;
}

void schedule_arrivals(Simulation& sim, FlowBackend& backend, const std::vector<Arrival>& arrivals) {
  for (const Arrival& a : arrivals) {
    sim.queue().schedule_fn(a.at, [&backend, r = a.request] { backend.start(r); });
  }
}

}  // namespace

TEST_CASE("flow incremental: rates equal a global recomputation at every instant") {
  const auto spec = oversubscribed_fabric();
  const auto gpus = static_cast<uint32_t>(spec.gpus.size());
  for (uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const auto arrivals = random_arrivals(seed, 300, gpus);
    Simulation si(1), sg(1);
    FlowBackend incremental(si, spec, FlowBackend::Recompute::Incremental);
    FlowBackend global(sg, spec, FlowBackend::Recompute::Global);
    schedule_arrivals(si, incremental, arrivals);
    schedule_arrivals(sg, global, arrivals);
    std::size_t compared = 0;
    double worst = 0;
    // Checkpoints every 2.5 us: half on arrival instants, half between (after completions).
    for (int64_t t = 0; !si.queue().empty() || !sg.queue().empty(); t += 2500) {
      si.queue().run(Time::ns(t));
      sg.queue().run(Time::ns(t));
      const auto a = incremental.active_rates_bps();
      const auto b = global.active_rates_bps();
      const auto from_scratch = incremental.global_rates_bps();
      REQUIRE(a.size() == b.size());
      REQUIRE(a.size() == from_scratch.size());
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].first != from_scratch[i].first || !(a[i].second > 0)) {
          FAIL("flow " << a[i].first << " has rate " << a[i].second);
        }
        worst = std::max(worst, std::abs(a[i].second - from_scratch[i].second) / from_scratch[i].second);
        ++compared;
      }
      // Same flows in flight in both modes (slots may be assigned alike; compare as multisets of ids).
      std::vector<TransferId> ia, ib;
      for (const auto& [id, rate] : a) ia.push_back(id);
      for (const auto& [id, rate] : b) ib.push_back(id);
      std::sort(ia.begin(), ia.end());
      std::sort(ib.begin(), ib.end());
      if (ia != ib) FAIL("different flows in flight at t = " << t << " ns");
    }
    CHECK(compared > 1000);
    CHECK(worst <= 1e-12);
    // The runs are the same run: every finish time to the picosecond.
    REQUIRE(incremental.transfers().size() == arrivals.size());
    std::size_t same_finish = 0;
    for (std::size_t i = 0; i < arrivals.size(); ++i) {
      if (incremental.transfers()[i].done &&
          incremental.transfers()[i].finish == global.transfers()[i].finish) {
        ++same_finish;
      }
    }
    CHECK(same_finish == arrivals.size());
    CHECK(incremental.counters().bytes_delivered == global.counters().bytes_delivered);
    // ...with less work: components are smaller than the whole flow set.
    CHECK(incremental.flows_recomputed() < global.flows_recomputed());
  }
}

TEST_CASE("flow incremental: disjoint flows do not recompute each other") {
  // Hosts under different leaves talking only inside their leaf share no link.
  const auto spec = oversubscribed_fabric();
  Simulation sim(1);
  FlowBackend flow(sim, spec);
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
