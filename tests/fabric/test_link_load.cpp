// Bytes per egress port as each backend routes them, and the busiest tier's max/mean.
#include <doctest/doctest.h>

#include <memory>

#include "sim/backends/link_load.hpp"
#include "sim/backends/make_backend.hpp"
#include "spine_leaf_fixture.hpp"

using namespace syncsim;

TEST_CASE("link load: one cross-leaf transfer loads one uplink and one downlink of the tier") {
  // 2 leaves x 2 hosts, 2 spines: 4 leaf-spine cables = 8 fabric ports.
  const net::NetworkSpec spec = topo::build_fabric(testing::spine_leaf_100g(2, 2, 2));
  for (Fidelity f : {Fidelity::Analytic, Fidelity::Flow, Fidelity::Packet}) {
    CAPTURE(fidelity_name(f));
    Simulation sim(1);
    std::unique_ptr<TransferBackend> backend = make_backend(f, sim, spec);
    backend->count_port_bytes(true);
    backend->start(TransferRequest{0, 2, Bytes{1 << 20}, 0});
    sim.queue().run();
    // Every byte is counted on each of its 4 hops: NIC -> leaf0 -> spine -> leaf1 -> NIC.
    int64_t total = 0;
    for (int64_t b : backend->port_bytes()) total += b;
    CHECK(total == 4 * (int64_t{1} << 20));
    const std::vector<TierLoad> tiers = tier_loads(spec, backend->port_bytes());
    REQUIRE(tiers.size() == 1);  // host links are not a tier
    CHECK(tiers[0].tier == "fabric");
    CHECK(tiers[0].ports == 8u);
    CHECK(tiers[0].max_bytes == int64_t{1} << 20);
    CHECK(tiers[0].mean_bytes == doctest::Approx(2.0 * (1 << 20) / 8));
    CHECK(tiers[0].max_over_mean == doctest::Approx(4.0));
    REQUIRE(busiest_tier(tiers).has_value());
    CHECK(busiest_tier(tiers)->tier == "fabric");
  }
}

TEST_CASE("link load: off by default, and a transfer inside a leaf loads no tier") {
  const net::NetworkSpec spec = topo::build_fabric(testing::spine_leaf_100g(2, 2, 2));
  Simulation sim(1);
  std::unique_ptr<TransferBackend> backend = make_backend(Fidelity::Flow, sim, spec);
  backend->start(TransferRequest{0, 2, Bytes{1 << 20}, 0});
  sim.queue().run();
  CHECK(backend->port_bytes().empty());
  Simulation sim2(1);
  std::unique_ptr<TransferBackend> local = make_backend(Fidelity::Flow, sim2, spec);
  local->count_port_bytes(true);
  local->start(TransferRequest{0, 1, Bytes{1 << 20}, 0});  // hosts 0 and 1 share leaf 0
  sim2.queue().run();
  CHECK(tier_loads(spec, local->port_bytes()).empty());
  CHECK_FALSE(busiest_tier({}).has_value());
}
