// `fabric.load_balancing`, `fabric.flowlet_gap` and `fabric.transport.go_back_n.out_of_order`:
// values read, bad values rejected at their key, and the warnings where a fidelity ignores them.
#include <doctest/doctest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;
using syncsim::testing::scenario_error_of;

namespace {

const std::string kBase = R"(name: t
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  load_balancing: packet_spray
  flowlet_gap: 50us
  transport: {go_back_n: {out_of_order: true}}
traffic:
  - {pattern: permutation, size: 1MiB}
)";

std::string with(const std::string& from, const std::string& to) {
  return syncsim::testing::text_with(kBase, from, to);
}

}  // namespace

TEST_CASE("scenario: load balancing keys are read") {
  const app::Scenario s = app::load_scenario_text(kBase, "t.yaml");
  CHECK(s.fabric.load_balancing.mode == net::LoadBalancing::PacketSpray);
  CHECK(s.fabric.load_balancing.flowlet_gap == Time::us(50));
  CHECK(s.network.transport.gbn.out_of_order);
  const app::Scenario d = app::load_scenario_text(
      with("  load_balancing: packet_spray\n  flowlet_gap: 50us\n", ""), "t.yaml");
  CHECK(d.fabric.load_balancing.mode == net::LoadBalancing::Ecmp);
  CHECK(d.fabric.load_balancing.flowlet_gap == Time::us(500));
}

TEST_CASE("scenario: bad load balancing values are errors at their key") {
  CHECK(scenario_error_of(with("packet_spray", "spray")) ==
        "t.yaml:5:19: fabric.load_balancing: expected one of: ecmp, packet_spray, flowlet, "
        "adaptive; got \"spray\"");
  CHECK(scenario_error_of(with("50us", "0us")) ==
        "t.yaml:6:16: fabric.flowlet_gap: expected a positive time, got 0us");
  CHECK(scenario_error_of(with("out_of_order: true", "out_of_order: 2"))
            .find("fabric.transport.go_back_n.out_of_order: expected") != std::string::npos);
}

TEST_CASE("scenario: load balancing warns where a fidelity ignores it") {
  const auto warnings = [](const std::string& yaml) {
    return app::load_scenario_text(yaml, "t.yaml").load_warnings;
  };
  const auto mentions = [](const std::vector<std::string>& w, const std::string& what) {
    for (const std::string& line : w) {
      if (line.find(what) != std::string::npos) return true;
    }
    return false;
  };
  CHECK_FALSE(mentions(warnings(kBase), "fabric.load_balancing"));
  CHECK_FALSE(mentions(warnings("fidelity: flow\n" + kBase), "fabric.load_balancing"));
  CHECK(mentions(warnings("fidelity: analytic\n" + kBase),
                 "fabric.load_balancing: packet_spray does nothing at analytic fidelity"));
  CHECK(mentions(warnings("fidelity: flow\n" + with("packet_spray", "flowlet")),
                 "fabric.load_balancing: flowlet switching does nothing at flow fidelity"));
}

TEST_CASE("scenario: planes and plane_selection are read and checked") {
  const std::string planes = with("  flowlet_gap: 50us\n",
                                  "  flowlet_gap: 50us\n  planes: 2\n"
                                  "  plane_selection: spray\n"
                                  "  host: {gpus: 2, nics: 4}\n");
  const app::Scenario s = app::load_scenario_text(planes, "t.yaml");
  CHECK(s.fabric.planes == 2);
  CHECK(s.fabric.plane_selection == topo::PlaneSelection::Spray);
  CHECK(scenario_error_of(syncsim::testing::text_with(planes, "planes: 2", "planes: 3")) ==
        "t.yaml:7:11: fabric.planes: expected a plane count >= 1 that divides fabric.host.nics "
        "(4; NIC i sits on plane i mod planes), got 3");
  CHECK(scenario_error_of(syncsim::testing::text_with(planes, "planes: 2", "planes: 0")) ==
        "t.yaml:7:11: fabric.planes: expected an integer in 1..4294967295, got 0");
  CHECK(scenario_error_of(syncsim::testing::text_with(planes, "plane_selection: spray",
                                                      "plane_selection: round_robin")) ==
        "t.yaml:8:20: fabric.plane_selection: expected one of: pinned, spray; got \"round_robin\"");
  // Pinned, each GPU has one NIC: more NICs than GPUs is the usual error.
  CHECK(scenario_error_of(syncsim::testing::text_with(planes, "plane_selection: spray",
                                                      "plane_selection: pinned"))
            .find("fabric.host.nics: expected at most one NIC per GPU") != std::string::npos);
}
