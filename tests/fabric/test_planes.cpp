// Multi-plane fabrics (FabricParams::planes): the layout, traffic pinned to its NIC's plane or
// sprayed over the planes, and N planes of 1/N the bandwidth against one plane.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/backends/flow_backend.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

constexpr uint32_t kHostsPerLeaf = 4;

// 2 leaves x 4 hosts per plane, one spine per plane whose uplinks carry all 4 hosts (no ECMP
// choice, so nothing but the planes differs), host links of `host_gbps`.
topo::FabricParams planes_fabric(uint32_t planes, uint32_t gpus, uint32_t nics, int64_t host_gbps,
                                 topo::PlaneSelection selection) {
  topo::FabricParams p = testing::spine_leaf_100g(2, kHostsPerLeaf, 1);
  p.planes = planes;
  p.plane_selection = selection;
  p.host.gpus = gpus;
  p.host.nics = nics;
  p.links.host.bandwidth = Bandwidth::gbps(host_gbps);
  p.links.fabric.bandwidth = Bandwidth::gbps(host_gbps * kHostsPerLeaf * nics / planes);
  return p;
}

// Which plane a node belongs to: its NIC's plane, a rail leaf's rail mod planes, or its switch's
// "plane<p>." prefix.
uint32_t plane_of(const net::NetworkSpec& spec, net::NodeId n) {
  if (spec.nodes[n].kind == net::NodeKind::Nic) return spec.plane_of_nic(n);
  const std::string& name = spec.nodes[n].name;
  if (const auto rail = name.find(".rail"); rail != std::string::npos) {
    return static_cast<uint32_t>(std::stoul(name.substr(rail + 5))) % spec.planes;
  }
  return name.starts_with("plane") ? static_cast<uint32_t>(std::stoul(name.substr(5))) : 0;
}

// Every GPU of leaf 0's hosts sends `size` to the GPU of the same index on leaf 1's hosts;
// returns the last finish and fills `port_bytes`.
Time permutation(const net::NetworkSpec& spec, Fidelity fidelity, int64_t size,
                 std::vector<int64_t>* port_bytes = nullptr) {
  Simulation sim(1);
  const std::unique_ptr<TransferBackend> backend = make_backend(fidelity, sim, spec);
  backend->count_port_bytes(true);
  const auto half = static_cast<uint32_t>(spec.gpus.size() / 2);
  for (uint32_t g = 0; g < half; ++g) backend->start(TransferRequest{g, half + g, Bytes{size}, 0});
  sim.queue().run();
  Time last = Time::zero();
  for (const TransferRecord& r : backend->transfers()) {
    REQUIRE(r.done);
    last = std::max(last, r.finish);
  }
  if (port_bytes != nullptr) *port_bytes = backend->port_bytes();
  return last;
}

}  // namespace

TEST_CASE("planes: each plane is a copy of the switch fabric, NIC i on plane i mod planes") {
  const topo::FabricParams p = planes_fabric(2, 2, 4, 100, topo::PlaneSelection::Pinned);
  const net::NetworkSpec spec = topo::build_fabric(p);
  const topo::FabricSize size = topo::fabric_size(p);
  const auto switches = static_cast<uint64_t>(
      std::count_if(spec.nodes.begin(), spec.nodes.end(), [](const net::NodeSpec& n) {
        return n.kind == net::NodeKind::Switch && n.role != net::SwitchRole::NvSwitch;
      }));
  CHECK(switches == 2 * 3);  // 2 leaves + 1 spine per plane
  CHECK(size.switches == switches);
  CHECK(size.links == spec.links.size());
  CHECK(size.nodes == spec.nodes.size());
  CHECK(spec.nodes[3].name == "plane1.leaf0");
  for (uint32_t h = 0; h < spec.hosts; ++h) {
    for (uint32_t i = 0; i < 4; ++i) {
      const net::NodeId nic = spec.host_first_nic[h] + i;
      CHECK(spec.plane_of_nic(nic) == i % 2);
      CHECK(plane_of(spec, spec.attachment_of_nic[nic]) == i % 2);
    }
  }
  // Rail-optimized: rails keep their leaves, each plane gets its own spines.
  topo::FabricParams rail;
  rail.kind = topo::TopologyKind::RailOptimized;
  rail.rail = {.groups = 2, .hosts_per_group = 2, .spines = 2, .uplinks_per_spine = 1};
  rail.host.nics = 2;
  rail.planes = 2;
  const net::NetworkSpec r = topo::build_fabric(rail);
  CHECK(topo::fabric_size(rail).links == r.links.size());
  uint64_t fabric_links = 0;
  for (const net::LinkSpec& l : r.links) {
    if (r.nodes[l.a].kind == net::NodeKind::Switch && r.nodes[l.b].kind == net::NodeKind::Switch) {
      CHECK(plane_of(r, l.a) == plane_of(r, l.b));
      ++fabric_links;
    }
  }
  CHECK(fabric_links == 4 * 2);  // 4 rail leaves, each to its plane's 2 spines
  topo::FabricParams odd = p;
  odd.planes = 3;
  CHECK_THROWS_AS(topo::build_fabric(odd), topo::TopologyError);
}

TEST_CASE("planes: a NIC's traffic stays on its plane") {
  // GPU 0 of every host is on NIC 0 (plane 0); its transfers to GPU 1 elsewhere (NIC 1, plane 1)
  // arrive through the destination host's plane-0 NIC.
  const net::NetworkSpec spec =
      topo::build_fabric(planes_fabric(2, 2, 2, 100, topo::PlaneSelection::Pinned));
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  backend.count_port_bytes(true);
  const uint32_t hosts = spec.hosts;
  for (uint32_t h = 0; h < hosts; ++h) {
    backend.start(TransferRequest{2 * h, 2 * ((h + kHostsPerLeaf) % hosts) + 1, Bytes{1 << 20}, 0});
  }
  sim.queue().run();
  for (const TransferRecord& r : backend.transfers()) CHECK(r.done);
  int64_t plane0 = 0;
  const net::Routing routing(spec);
  for (net::PortId p = 0; p < routing.ports().size(); ++p) {
    const int64_t bytes = backend.port_bytes()[p];
    if (routing.link_of(p).name == "nvlink") continue;
    if (plane_of(spec, routing.ports()[p].owner) == 1) CHECK(bytes == 0);
    if (plane_of(spec, routing.ports()[p].owner) == 0) plane0 += bytes;
  }
  // Four hops each (NIC, leaf, spine, leaf), every byte on plane 0.
  CHECK(plane0 == int64_t{4} * hosts * (1 << 20));
}

TEST_CASE("planes: N planes of 1/N the bandwidth match one plane") {
  const int64_t size = 4 << 20;
  for (const Fidelity fidelity : {Fidelity::Packet, Fidelity::Flow}) {
    CAPTURE(static_cast<int>(fidelity));
    // One GPU per host: one 100G NIC, against 2 x 50G NICs on 2 planes sprayed.
    const Time one =
        permutation(topo::build_fabric(planes_fabric(1, 1, 1, 100, topo::PlaneSelection::Pinned)),
                    fidelity, size);
    std::vector<int64_t> bytes;
    const net::NetworkSpec two_spec =
        topo::build_fabric(planes_fabric(2, 1, 2, 50, topo::PlaneSelection::Spray));
    const Time two = permutation(two_spec, fidelity, size, &bytes);
    CHECK(two.seconds() == doctest::Approx(one.seconds()).epsilon(0.02));
    // The spray put half of every transfer on each plane.
    const net::Routing routing(two_spec);
    int64_t per_plane[2] = {0, 0};
    for (net::PortId p = 0; p < routing.ports().size(); ++p) {
      per_plane[plane_of(two_spec, routing.ports()[p].owner)] += bytes[p];
    }
    CHECK(per_plane[0] == per_plane[1]);
    CHECK(per_plane[0] == int64_t{4} * kHostsPerLeaf * size / 2);
    // Two GPUs per host: one 100G NIC shared, against each GPU pinned to its own 50G plane.
    const Time shared =
        permutation(topo::build_fabric(planes_fabric(1, 2, 1, 100, topo::PlaneSelection::Pinned)),
                    fidelity, size);
    const Time pinned =
        permutation(topo::build_fabric(planes_fabric(2, 2, 2, 50, topo::PlaneSelection::Pinned)),
                    fidelity, size);
    CHECK(pinned.seconds() == doctest::Approx(shared.seconds()).epsilon(0.02));
  }
}
