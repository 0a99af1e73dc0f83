#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sim/net/network_spec.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/fabric_params.hpp"

namespace {

using syncsim::Bandwidth;
using syncsim::Bytes;
using syncsim::net::kNoNode;
using syncsim::net::NetworkSpec;
using syncsim::net::NodeId;
using syncsim::net::NodeKind;
using syncsim::net::SwitchRole;
using syncsim::topo::build_fabric;
using syncsim::topo::FabricParams;
using syncsim::topo::TopologyError;
using syncsim::topo::TopologyKind;

NodeId node(const NetworkSpec& spec, const std::string& name) {
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    if (spec.nodes[i].name == name) {
      return static_cast<NodeId>(i);
    }
  }
  FAIL("no node named " << name);
  return kNoNode;
}

std::size_t count_role(const NetworkSpec& spec, SwitchRole role) {
  return static_cast<std::size_t>(std::count_if(spec.nodes.begin(), spec.nodes.end(),
                                                [&](const auto& n) { return n.role == role; }));
}

std::size_t count_kind(const NetworkSpec& spec, NodeKind kind) {
  return static_cast<std::size_t>(std::count_if(spec.nodes.begin(), spec.nodes.end(),
                                                [&](const auto& n) { return n.kind == kind; }));
}

// Switch hops from switch `from` to attachment switch `to`, read from the routing tables.
int hops(const NetworkSpec& spec, NodeId from, NodeId to) {
  const uint32_t c = spec.component_of[to];
  REQUIRE(c == spec.component_of[from]);
  const auto& comp = spec.components[c];
  REQUIRE(spec.attachment_index[to] != UINT32_MAX);
  return comp.hops[spec.attachment_index[to] * comp.switches.size() + spec.switch_index[from]];
}

// Cables leaving `from` toward a switch one hop closer to `to`: what ECMP spreads over.
int shortest_next_hops(const NetworkSpec& spec, NodeId from, NodeId to) {
  const int here = hops(spec, from, to);
  int n = 0;
  for (const auto& link : spec.links) {
    if (link.a != from && link.b != from) {
      continue;
    }
    const NodeId peer = link.a == from ? link.b : link.a;
    if (spec.nodes[peer].kind == NodeKind::Switch && hops(spec, peer, to) == here - 1) {
      ++n;
    }
  }
  return n;
}

// The switch a node's links reach (for NICs: the one switch they hang off).
std::vector<NodeId> neighbours(const NetworkSpec& spec, NodeId id) {
  std::vector<NodeId> out;
  for (const auto& link : spec.links) {
    if (link.a == id) {
      out.push_back(link.b);
    } else if (link.b == id) {
      out.push_back(link.a);
    }
  }
  return out;
}

// Every link's class matches the tiers it joins, whatever the topology.
void check_link_classes(const NetworkSpec& spec) {
  for (const auto& link : spec.links) {
    REQUIRE(link.link_class < spec.link_classes.size());
    const std::string& cls = spec.link_classes[link.link_class].name;
    const auto& a = spec.nodes[link.a];
    const auto& b = spec.nodes[link.b];
    if (cls == "host") {
      CHECK(a.kind == NodeKind::Nic);
      CHECK(b.role == SwitchRole::Leaf);
      CHECK(a.name.find(".nic") != std::string::npos);
    } else if (cls == "nvlink") {
      CHECK(a.kind == NodeKind::Nic);
      CHECK(b.role == SwitchRole::NvSwitch);
      CHECK(a.host == b.host);
    } else if (cls == "fabric") {
      CHECK(a.role == SwitchRole::Leaf);
      CHECK(b.role == SwitchRole::Spine);
    } else {
      CHECK(cls == "core");
      CHECK(a.role == SwitchRole::Spine);
      CHECK(b.role == SwitchRole::Core);
    }
  }
}

FabricParams spine_leaf(uint32_t leaves, uint32_t hosts_per_leaf, uint32_t spines) {
  FabricParams p;
  p.kind = TopologyKind::SpineLeaf;
  p.spine_leaf.leaves = leaves;
  p.spine_leaf.hosts_per_leaf = hosts_per_leaf;
  p.spine_leaf.spines = spines;
  return p;
}

FabricParams fat_tree_k(uint32_t k) {
  FabricParams p;
  p.kind = TopologyKind::FatTree;
  p.fat_tree.k = k;
  return p;
}

void check_error(const FabricParams& params, const std::string& path) {
  CAPTURE(path);
  try {
    (void)build_fabric(params);
    FAIL("expected TopologyError at " << path);
  } catch (const TopologyError& e) {
    CHECK(e.path() == path);
    CHECK(std::string{e.what()}.find("expected") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("topologies: spine-leaf connects every leaf to every spine") {
  const NetworkSpec spec = build_fabric(spine_leaf(8, 16, 16));
  CHECK(spec.hosts == 128);
  CHECK(count_role(spec, SwitchRole::Leaf) == 8);
  CHECK(count_role(spec, SwitchRole::Spine) == 16);
  CHECK(count_kind(spec, NodeKind::Nic) == 128);
  CHECK(spec.nodes.size() == 8 + 16 + 128);
  CHECK(spec.links.size() == 128 + 8 * 16);
  CHECK(spec.link_classes.size() == 2);  // no core, no nvlink with one GPU per host
  check_link_classes(spec);

  // Hosts fill leaves in order: host 17 is the second host of leaf 1.
  CHECK(neighbours(spec, node(spec, "host17.nic0")) == std::vector<NodeId>{node(spec, "leaf1")});
  CHECK(neighbours(spec, node(spec, "spine5")).size() == 8);

  const NodeId leaf0 = node(spec, "leaf0");
  const NodeId leaf7 = node(spec, "leaf7");
  CHECK(hops(spec, leaf0, leaf0) == 0);
  CHECK(hops(spec, leaf0, leaf7) == 2);
  CHECK(hops(spec, node(spec, "spine3"), leaf7) == 1);
  CHECK(shortest_next_hops(spec, leaf0, leaf7) == 16);
  CHECK(shortest_next_hops(spec, node(spec, "spine3"), leaf7) == 1);

  // One fabric component, leaves are its attachments, spines are not.
  REQUIRE(spec.components.size() == 1);
  CHECK(spec.components[0].switches.size() == 24);
  CHECK(spec.components[0].attachments.size() == 8);
  CHECK(spec.components[0].hops.size() == 8 * 24);
  CHECK(spec.attachment_index[node(spec, "spine0")] == UINT32_MAX);
  CHECK(spec.gpus.size() == 128);
  CHECK(spec.gpus[5].nvlink_port == kNoNode);
}

TEST_CASE("topologies: spine-leaf parallel uplinks multiply the equal-cost cables") {
  FabricParams p = spine_leaf(2, 1, 3);
  p.spine_leaf.uplinks_per_spine = 2;
  const NetworkSpec spec = build_fabric(p);
  CHECK(spec.links.size() == 2 + 2 * 3 * 2);
  CHECK(shortest_next_hops(spec, node(spec, "leaf0"), node(spec, "leaf1")) == 6);
}

TEST_CASE("topologies: spine-leaf derives the spine count from the oversubscription ratio") {
  FabricParams p;
  p.spine_leaf.leaves = 2;
  p.spine_leaf.hosts_per_leaf = 16;
  p.links.host.bandwidth = Bandwidth::gbps(100);
  p.links.fabric.bandwidth = Bandwidth::gbps(400);

  SUBCASE("ratio 2: 1600G down over 2 x 400G per spine") {
    p.spine_leaf.oversubscription = 2.0;
    CHECK(count_role(build_fabric(p), SwitchRole::Spine) == 2);
  }
  SUBCASE("unset: non-blocking 1:1") { CHECK(count_role(build_fabric(p), SwitchRole::Spine) == 4); }
  SUBCASE("ratio 3 rounds up") {
    p.spine_leaf.oversubscription = 3.0;
    CHECK(count_role(build_fabric(p), SwitchRole::Spine) == 2);
  }
  SUBCASE("parallel uplinks count as spine capacity") {
    p.spine_leaf.uplinks_per_spine = 2;
    CHECK(count_role(build_fabric(p), SwitchRole::Spine) == 2);
  }
  SUBCASE("all NICs of a host count as downlinks") {
    // The default scenario: 4 hosts x 8 x 400G per leaf, 400G uplinks, 2:1.
    p.spine_leaf.hosts_per_leaf = 4;
    p.host = {.gpus = 8, .nics = 8};
    p.links.host.bandwidth = Bandwidth::gbps(400);
    p.spine_leaf.oversubscription = 2.0;
    CHECK(count_role(build_fabric(p), SwitchRole::Spine) == 16);
  }
}

TEST_CASE("topologies: k=4 fat-tree has the textbook shape and path diversity") {
  const NetworkSpec spec = build_fabric(fat_tree_k(4));
  CHECK(spec.hosts == 16);
  CHECK(count_role(spec, SwitchRole::Leaf) == 8);
  CHECK(count_role(spec, SwitchRole::Spine) == 8);
  CHECK(count_role(spec, SwitchRole::Core) == 4);
  CHECK(count_kind(spec, NodeKind::Switch) == 20);
  CHECK(spec.links.size() == 48);  // 16 host + 16 leaf-spine + 16 spine-core
  CHECK(spec.link_classes.size() == 3);
  check_link_classes(spec);

  // Hosts are pod-major, then leaf: host 2 is on pod0.leaf1, host 4 on pod1.leaf0.
  CHECK(neighbours(spec, node(spec, "host2.nic0")) ==
        std::vector<NodeId>{node(spec, "pod0.leaf1")});
  CHECK(neighbours(spec, node(spec, "host4.nic0")) ==
        std::vector<NodeId>{node(spec, "pod1.leaf0")});
  // Spine j of every pod reaches core group j.
  std::vector<NodeId> up = neighbours(spec, node(spec, "pod3.spine1"));
  CHECK(std::count(up.begin(), up.end(), node(spec, "core2")) == 1);
  CHECK(std::count(up.begin(), up.end(), node(spec, "core3")) == 1);
  CHECK(std::count(up.begin(), up.end(), node(spec, "core0")) == 0);

  const NodeId src = node(spec, "pod0.leaf0");
  const NodeId same_pod = node(spec, "pod0.leaf1");
  const NodeId remote = node(spec, "pod2.leaf1");
  CHECK(hops(spec, src, same_pod) == 2);
  CHECK(hops(spec, src, remote) == 4);
  CHECK(hops(spec, node(spec, "core0"), remote) == 2);
  CHECK(shortest_next_hops(spec, src, remote) == 2);
  CHECK(shortest_next_hops(spec, node(spec, "pod0.spine0"), remote) == 2);  // its 2 cores
  CHECK(shortest_next_hops(spec, node(spec, "core0"), remote) == 1);
}

TEST_CASE("topologies: explicit fat-tree spreads spines over core groups") {
  FabricParams p;
  p.kind = TopologyKind::FatTree;
  p.fat_tree = {.k = std::nullopt,
                .pods = 3,
                .leaves_per_pod = 2,
                .spines_per_pod = 2,
                .hosts_per_leaf = 1,
                .cores = 6};
  const NetworkSpec spec = build_fabric(p);
  CHECK(spec.hosts == 6);
  CHECK(count_role(spec, SwitchRole::Core) == 6);
  CHECK(spec.links.size() == 6 + 3 * 2 * 2 + 3 * 2 * 3);
  CHECK(neighbours(spec, node(spec, "core4")).size() == 3);  // one spine per pod
  CHECK(shortest_next_hops(spec, node(spec, "pod0.leaf0"), node(spec, "pod2.leaf0")) == 2);
  CHECK(shortest_next_hops(spec, node(spec, "pod0.spine1"), node(spec, "pod2.leaf0")) == 3);
}

TEST_CASE("topologies: rail-optimized puts NIC i on rail leaf i of its group") {
  FabricParams p;
  p.kind = TopologyKind::RailOptimized;
  p.rail = {.groups = 2, .hosts_per_group = 4, .spines = 3, .uplinks_per_spine = 1};
  p.host = {.gpus = 8, .nics = 4};
  const NetworkSpec spec = build_fabric(p);
  CHECK(spec.hosts == 8);
  CHECK(count_role(spec, SwitchRole::Leaf) == 8);  // 2 groups x 4 rails
  CHECK(count_role(spec, SwitchRole::Spine) == 3);
  CHECK(count_role(spec, SwitchRole::NvSwitch) == 8);
  CHECK(spec.links.size() == 8 * 4 + 8 * 8 + 8 * 3);
  check_link_classes(spec);

  for (uint32_t h = 0; h < 8; ++h) {
    for (uint32_t i = 0; i < 4; ++i) {
      const std::string nic = "host" + std::to_string(h) + ".nic" + std::to_string(i);
      const std::string rail = "group" + std::to_string(h / 4) + ".rail" + std::to_string(i);
      CAPTURE(nic);
      CHECK(neighbours(spec, node(spec, nic)) == std::vector<NodeId>{node(spec, rail)});
    }
  }
  // 4 hosts share a rail leaf; different rails meet only through the spines.
  CHECK(neighbours(spec, node(spec, "group1.rail2")).size() == 4 + 3);
  CHECK(hops(spec, node(spec, "group0.rail0"), node(spec, "group0.rail1")) == 2);
  CHECK(shortest_next_hops(spec, node(spec, "group0.rail0"), node(spec, "group1.rail0")) == 3);
}

TEST_CASE("topologies: a rail fabric without spines must still be connected") {
  FabricParams p;
  p.kind = TopologyKind::RailOptimized;
  p.rail = {.groups = 1, .hosts_per_group = 4, .spines = 0};
  SUBCASE("one rail is a single-leaf fabric") {
    const NetworkSpec spec = build_fabric(p);
    CHECK(spec.links.size() == 4);
    CHECK(spec.components.size() == 1);
  }
  SUBCASE("two rails cannot reach each other") {
    p.host.nics = 2;
    check_error(p, "topology");
  }
}

TEST_CASE("topologies: GPUs use NIC floor(g * nics / gpus) of their host") {
  FabricParams p = spine_leaf(2, 2, 2);
  SUBCASE("8 GPUs, 4 NICs") {
    p.host = {.gpus = 8, .nics = 4};
    const NetworkSpec spec = build_fabric(p);
    REQUIRE(spec.gpus.size() == 32);
    CHECK(spec.gpus[3].nic == node(spec, "host0.nic1"));
    CHECK(spec.gpus[7].nic == node(spec, "host0.nic3"));
    const auto& g = spec.gpus[2 * 8 + 3];  // host 2, GPU 3
    CHECK(g.host == 2);
    CHECK(g.local_index == 3);
    CHECK(g.nic == node(spec, "host2.nic1"));
    CHECK(g.nvlink_port == node(spec, "host2.gpu3"));
  }
  SUBCASE("3 GPUs, 2 NICs: uneven split") {
    p.host = {.gpus = 3, .nics = 2};
    const NetworkSpec spec = build_fabric(p);
    CHECK(spec.gpus[0].nic == node(spec, "host0.nic0"));
    CHECK(spec.gpus[1].nic == node(spec, "host0.nic0"));
    CHECK(spec.gpus[2].nic == node(spec, "host0.nic1"));
  }
  SUBCASE("more NICs than GPUs leaves NICs unused but connected") {
    p.host = {.gpus = 2, .nics = 4};
    const NetworkSpec spec = build_fabric(p);
    CHECK(spec.gpus[1].nic == node(spec, "host0.nic2"));
    CHECK(neighbours(spec, node(spec, "host0.nic3")) == std::vector<NodeId>{node(spec, "leaf0")});
  }
}

TEST_CASE("topologies: each NVSwitch is its own routing component") {
  FabricParams p = spine_leaf(2, 2, 2);
  p.host = {.gpus = 4, .nics = 2};
  const NetworkSpec spec = build_fabric(p);
  CHECK(spec.link_classes.size() == 3);
  CHECK(spec.link_classes[2].name == "nvlink");
  REQUIRE(spec.components.size() == 1 + 4);
  CHECK(spec.components[0].switches.size() == 4);  // the fabric is component 0

  CHECK(spec.component_of.size() == spec.nodes.size());
  CHECK(spec.switch_index.size() == spec.nodes.size());
  CHECK(spec.attachment_index.size() == spec.nodes.size());
  CHECK(spec.attachment_of_nic.size() == spec.nodes.size());

  std::set<uint32_t> islands;
  for (uint32_t h = 0; h < 4; ++h) {
    const std::string prefix = "host" + std::to_string(h) + ".";
    const NodeId nvswitch = node(spec, prefix + "nvswitch");
    const uint32_t c = spec.component_of[nvswitch];
    CHECK(c == h + 1);
    islands.insert(c);
    const auto& comp = spec.components[c];
    CHECK(comp.switches == std::vector<NodeId>{nvswitch});
    CHECK(comp.attachments == std::vector<NodeId>{nvswitch});
    CHECK(comp.hops == std::vector<uint8_t>{0});
    const NodeId port = node(spec, prefix + "gpu3");
    CHECK(spec.attachment_of_nic[port] == nvswitch);
    CHECK(spec.component_of[port] == c);
    CHECK(spec.nodes[nvswitch].host == h);
    // The host's NICs belong to the fabric, not to the island.
    CHECK(spec.component_of[node(spec, prefix + "nic1")] == 0);
    CHECK(spec.attachment_of_nic[node(spec, prefix + "nic1")] ==
          node(spec, h < 2 ? "leaf0" : "leaf1"));
  }
  CHECK(islands.size() == 4);
  CHECK(spec.attachment_of_nic[node(spec, "leaf0")] == kNoNode);
  for (const auto& comp : spec.components) {
    CHECK(std::is_sorted(comp.switches.begin(), comp.switches.end()));
    CHECK(std::is_sorted(comp.attachments.begin(), comp.attachments.end()));
  }
}

TEST_CASE("topologies: switch and ECMP settings pass through") {
  FabricParams p = spine_leaf(2, 2, 2);
  p.switch_params = {.buffer = Bytes{1 << 20}, .priorities = 4};
  p.ecmp_hash_seed = 42;
  p.ecmp_per_switch_salt = true;
  const NetworkSpec spec = build_fabric(p);
  CHECK(spec.switch_params.buffer == Bytes{1 << 20});
  CHECK(spec.switch_params.priorities == 4);
  CHECK(spec.ecmp_hash_seed == 42);
  CHECK(spec.ecmp_per_switch_salt);
}

TEST_CASE("topologies: impossible parameters name the offending field") {
  SUBCASE("spine-leaf") {
    check_error(spine_leaf(0, 2, 2), "spine_leaf.leaves");
    check_error(spine_leaf(2, 0, 2), "spine_leaf.hosts_per_leaf");
    check_error(spine_leaf(2, 2, 0), "spine_leaf.spines");
    FabricParams p = spine_leaf(2, 2, 2);
    p.spine_leaf.uplinks_per_spine = 0;
    check_error(p, "spine_leaf.uplinks_per_spine");
    p = spine_leaf(2, 2, 2);
    p.spine_leaf.oversubscription = 2.0;
    check_error(p, "spine_leaf.oversubscription");  // both set
    p.spine_leaf.spines.reset();
    p.spine_leaf.oversubscription = 0.0;
    check_error(p, "spine_leaf.oversubscription");
    p.spine_leaf.oversubscription = -1.0;
    check_error(p, "spine_leaf.oversubscription");
  }
  SUBCASE("fat-tree") {
    check_error(fat_tree_k(3), "fat_tree.k");
    check_error(fat_tree_k(0), "fat_tree.k");
    FabricParams p;
    p.kind = TopologyKind::FatTree;
    p.fat_tree = {.k = std::nullopt,
                  .pods = 2,
                  .leaves_per_pod = 2,
                  .spines_per_pod = 2,
                  .hosts_per_leaf = 1,
                  .cores = 3};
    check_error(p, "fat_tree.cores");
    p.fat_tree.cores = 0;
    check_error(p, "fat_tree.cores");  // nothing joins the pods
    p.fat_tree.pods = 0;
    check_error(p, "fat_tree.pods");
    p.fat_tree = {.k = std::nullopt,
                  .pods = 2,
                  .leaves_per_pod = 2,
                  .spines_per_pod = 0,
                  .hosts_per_leaf = 1,
                  .cores = 2};
    check_error(p, "fat_tree.spines_per_pod");
  }
  SUBCASE("rail-optimized") {
    FabricParams p;
    p.kind = TopologyKind::RailOptimized;
    p.rail.groups = 0;
    check_error(p, "rail_optimized.groups");
    p.rail = {.groups = 1, .hosts_per_group = 0};
    check_error(p, "rail_optimized.hosts_per_group");
  }
  SUBCASE("hosts") {
    FabricParams p = spine_leaf(2, 2, 2);
    p.host.gpus = 0;
    check_error(p, "host.gpus");
    p.host = {.gpus = 1, .nics = 0};
    check_error(p, "host.nics");
  }
  SUBCASE("links") {
    FabricParams p = spine_leaf(2, 2, 2);
    p.links.host.bandwidth = Bandwidth::bps(0);
    check_error(p, "links.host.bandwidth");
    p = spine_leaf(2, 2, 2);
    p.links.host.mtu = Bytes{0};
    check_error(p, "links.host.mtu");
    p = spine_leaf(2, 2, 2);
    p.links.fabric.bandwidth = Bandwidth::gbps(-1);
    check_error(p, "links.fabric.bandwidth");
    p = fat_tree_k(4);
    p.links.core.bandwidth = Bandwidth::bps(0);
    check_error(p, "links.core.bandwidth");
    p = spine_leaf(2, 2, 2);
    p.host.gpus = 2;
    p.links.nvlink.mtu = Bytes{-1};
    check_error(p, "links.nvlink.mtu");
  }
  SUBCASE("unused link classes are not checked") {
    FabricParams p = spine_leaf(2, 2, 2);
    p.links.core.bandwidth = Bandwidth::bps(0);    // no cores in a spine-leaf
    p.links.nvlink.bandwidth = Bandwidth::bps(0);  // one GPU per host: no NVLink
    CHECK(build_fabric(p).links.size() == 8);
  }
  SUBCASE("switches") {
    FabricParams p = spine_leaf(2, 2, 2);
    p.switch_params.priorities = 0;
    check_error(p, "switch.priorities");
    p.switch_params.priorities = 9;
    check_error(p, "switch.priorities");
    p.switch_params = {.buffer = Bytes{0}};
    check_error(p, "switch.buffer");
  }
  SUBCASE("sizes that overflow 32-bit node ids") {
    check_error(spine_leaf(UINT32_MAX, UINT32_MAX, 2), "spine_leaf");
    check_error(spine_leaf(65536, 65536, 2), "spine_leaf");
    check_error(fat_tree_k(1u << 17), "fat_tree");
    FabricParams p = spine_leaf(1 << 16, 1, 1 << 16);  // fits ids, but a 16 GiB routing table
    check_error(p, "spine_leaf");
  }
}

TEST_SUITE("slow") {
  TEST_CASE("topologies: a 64k-GPU fat-tree builds with compact routing tables") {
    FabricParams p;
    p.kind = TopologyKind::FatTree;
    p.fat_tree = {.k = std::nullopt,
                  .pods = 32,
                  .leaves_per_pod = 32,
                  .spines_per_pod = 32,
                  .hosts_per_leaf = 8,
                  .cores = 1024};
    p.host = {.gpus = 8, .nics = 8};
    const auto start = std::chrono::steady_clock::now();
    const NetworkSpec spec = build_fabric(p);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    MESSAGE("64k-GPU fat-tree built in " << took.count() << " s");

    CHECK(spec.gpus.size() == 65536);
    CHECK(spec.hosts == 8192);
    REQUIRE(spec.components.size() == 1 + 8192);
    const auto& fabric = spec.components[0];
    CHECK(fabric.switches.size() == 3 * 1024);
    CHECK(fabric.attachments.size() == 1024);
    CHECK(fabric.hops.size() == 1024u * 3072u);
    CHECK(*std::max_element(fabric.hops.begin(), fabric.hops.end()) == 4);

    const NodeId src = node(spec, "pod0.leaf0");
    const NodeId dst = node(spec, "pod31.leaf31");
    CHECK(hops(spec, src, dst) == 4);
    CHECK(shortest_next_hops(spec, src, dst) == 32);
    CHECK(shortest_next_hops(spec, node(spec, "pod0.spine7"), dst) == 32);
    CHECK(spec.gpus[65535].nic == node(spec, "host8191.nic7"));
  }
}
