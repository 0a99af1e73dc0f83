// Flow-level fidelity: max-min fair sharing against hand-computed rates, the analytic model on idle
// paths, and the packet model on the reference scenarios.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/flow_backend.hpp"
#include "tests/fabric/flow_fixtures.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

topo::FabricParams fabric(uint32_t leaves, uint32_t hosts_per_leaf, uint32_t spines,
                          Bandwidth host_bw, Bandwidth fabric_bw) {
  return testing::flow_test_fabric(leaves, hosts_per_leaf, spines, host_bw, fabric_bw);
}

constexpr double kPayloadShare = 4096.0 / (4096.0 + 64.0);

}  // namespace

TEST_CASE("flow: an uncontended transfer finishes exactly when the analytic model says") {
  const auto spec = topo::build_fabric(fabric(2, 2, 1, Bandwidth::gbps(100), Bandwidth::gbps(400)));
  for (int64_t size : {int64_t{1}, int64_t{5000}, int64_t{1'000'000}, int64_t{64} << 20}) {
    CAPTURE(size);
    Simulation a(1), f(1);
    AnalyticBackend analytic(a, spec);
    FlowBackend flow(f, spec);
    analytic.start(TransferRequest{0, 3, Bytes{size}, 0});
    flow.start(TransferRequest{0, 3, Bytes{size}, 0});
    a.queue().run();
    f.queue().run();
    const auto ta = analytic.transfers()[0].finish.picoseconds();
    const auto tf = flow.transfers()[0].finish.picoseconds();
    CHECK(std::abs(ta - tf) <= 1);  // the fluid drain is rounded up to a picosecond
  }
}

TEST_CASE("flow: rates are max-min fair, not an equal split") {
  // Hosts 0..3 on leaf 0, 4..7 on leaf 1; 400G fabric links never bind. Three senders incast into
  // host 0 (each gets a third of its 100G link); sender 1 also sends to host 2, and gets the two
  // thirds of its own uplink that its incast flow leaves unused.
  const auto spec = topo::build_fabric(fabric(2, 4, 1, Bandwidth::gbps(100), Bandwidth::gbps(400)));
  Simulation sim(1);
  FlowBackend flow(sim, spec);
  const Bytes big{int64_t{1} << 30};
  const TransferId a = flow.start(TransferRequest{1, 0, big, 0});
  const TransferId b = flow.start(TransferRequest{2, 0, big, 0});
  const TransferId c = flow.start(TransferRequest{4, 0, big, 0});
  const TransferId d = flow.start(TransferRequest{1, 2, big, 0});
  sim.queue().run(Time::us(1));  // the rate recomputation runs at t = 0
  const double link = 100e9 * kPayloadShare;
  CHECK(flow.rate_bps(a) == doctest::Approx(link / 3));
  CHECK(flow.rate_bps(b) == doctest::Approx(link / 3));
  CHECK(flow.rate_bps(c) == doctest::Approx(link / 3));
  CHECK(flow.rate_bps(d) == doctest::Approx(link * 2 / 3));
  // No link is over-subscribed: host 1's uplink carries a + d = the full link.
  CHECK(flow.rate_bps(a) + flow.rate_bps(d) == doctest::Approx(link));
  sim.queue().run();
  CHECK(flow.counters().bytes_delivered == 4 * big.count());
  CHECK(flow.rate_recomputations() >= 2);
}

TEST_CASE("flow: an incast's flows finish together at N times the single-flow drain time") {
  const auto spec = topo::build_fabric(fabric(1, 9, 1, Bandwidth::gbps(200), Bandwidth::gbps(200)));
  Simulation sim(1);
  FlowBackend flow(sim, spec);
  const int64_t size = 10'000'000;
  for (uint32_t s = 1; s <= 8; ++s) flow.start(TransferRequest{s, 0, Bytes{size}, 0});
  sim.queue().run();
  const double drain = 8.0 * static_cast<double>(size) * 8 / (200e9 * kPayloadShare);
  for (const auto& t : flow.transfers()) {
    CHECK(t.finish.seconds() == doctest::Approx(drain).epsilon(0.001));
  }
}

TEST_CASE("flow: agrees with the packet model on the reference scenarios within 5%" *
          doctest::test_suite("slow")) {
  for (const char* name : {"ring-next-leaf-128", "ring-next-leaf-1024", "ring-shift-8gpu"}) {
    CAPTURE(name);
    const std::string file = std::string(SYNCSIM_SOURCE_DIR "/scenarios/") + name + ".yaml";
    app::LoadOptions flow_opts;
    flow_opts.overrides = {{"fidelity", "flow"}};
    const auto packet = app::run_scenario(app::load_scenario_file(file));
    const auto flow = app::run_scenario(app::load_scenario_file(file, flow_opts));
    REQUIRE(packet.messages_completed == packet.messages);
    CHECK(flow.fct.mean_s == doctest::Approx(packet.fct.mean_s).epsilon(0.05));
    CHECK(flow.fct.max_s == doctest::Approx(packet.fct.max_s).epsilon(0.05));
    CHECK(flow.fct.min_s == doctest::Approx(packet.fct.min_s).epsilon(0.05));
    CHECK(flow.events * 100 < packet.events);
  }
}
