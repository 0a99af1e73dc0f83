// Range rules of the builders' parameter structs, alone and as build_fabric reports them.
#include <doctest/doctest.h>

#include <string>

#include "topologies/fabric_builder.hpp"
#include "topologies/fabric_params.hpp"

using syncsim::Bandwidth;
using syncsim::Bytes;
using syncsim::topo::build_fabric;
using syncsim::topo::FabricParams;
using syncsim::topo::HostParams;
using syncsim::topo::TopologyError;

namespace {

// The TopologyError build_fabric throws for `p`, as "path: message".
std::string build_error(const FabricParams& p) {
  try {
    (void)build_fabric(p);
  } catch (const TopologyError& e) {
    return e.path() + ": " + e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("HostParams::check: one GPU and one NIC at least; every NIC used is the stricter rule") {
  CHECK(HostParams{}.check().empty());
  CHECK(HostParams{}.check_every_nic_used().empty());
  CHECK(HostParams{.gpus = 8, .nics = 8}.check_every_nic_used().empty());
  const auto none = HostParams{.gpus = 0, .nics = 0}.check();
  REQUIRE(none.size() == 2);
  CHECK(none[0].field == "gpus");
  CHECK(none[1].text() == "expected at least 1 NIC per host, got 0");
  const HostParams idle_nics{.gpus = 2, .nics = 4};
  CHECK(idle_nics.check().empty());  // build_fabric builds it
  REQUIRE(idle_nics.check_every_nic_used().size() == 1);
  CHECK(idle_nics.check_every_nic_used().front().field == "nics");
  CHECK(idle_nics.check_every_nic_used().front().text().ends_with(
      "give one NIC the combined rate instead), got 4"));
}

TEST_CASE("build_fabric: host, link and switch rules at their section.field") {
  FabricParams p;
  p.host.gpus = 0;
  CHECK(build_error(p) == "host.gpus: expected at least 1 GPU per host, got 0");
  p = FabricParams{};
  p.links.fabric.mtu = Bytes{0};
  CHECK(build_error(p) == "links.fabric.mtu: expected an MTU > 0 bytes, got 0");
  p = FabricParams{};
  p.links.host.bandwidth = Bandwidth::bps(0);
  CHECK(build_error(p) == "links.host.bandwidth: expected a bandwidth > 0, got 0 bit/s");
  // A class the topology does not use is not checked (no core in a spine-leaf).
  p = FabricParams{};
  p.links.core.mtu = Bytes{0};
  CHECK(build_error(p) == "<no error>");
  p = FabricParams{};
  p.switch_params.priorities = 9;
  CHECK(build_error(p) == "switch.priorities: expected 1 to 8 priorities, got 9");
}
