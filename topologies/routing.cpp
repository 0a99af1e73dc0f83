// Routing tables for ECMP over all shortest paths, computed on the switch-only graph: NICs are
// endpoints, never transit, so a path through another host's NIC must not count as a route.
//
// Memory: the table is per component, attachments x switches of uint8. A 64k-GPU fat-tree has 1024
// attachment leaves and 3072 switches (3 MiB); a nodes x nodes table would be ~20 GB.
#include "topologies/routing.hpp"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/visitors.hpp>
#include <boost/pending/queue.hpp>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/check.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::topo::detail {
namespace {

using net::kNoNode;
using net::NodeId;
using net::NodeKind;

// vecS/vecS: vertices are dense switch indices, so property maps are plain vectors.
using SwitchGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
using Vertex = SwitchGraph::vertex_descriptor;

constexpr uint32_t kNone = UINT32_MAX;
// uint8 hops, 255 reserved for "unreachable".
constexpr uint32_t kMaxHops = 254;

bool is_switch(const net::NetworkSpec& spec, NodeId id) {
  return spec.nodes[id].kind == NodeKind::Switch;
}

}  // namespace

void fill_routing(net::NetworkSpec& spec) {
  const std::size_t node_count = spec.nodes.size();

  std::vector<uint32_t> vertex_of(node_count, kNone);
  std::vector<NodeId> switch_nodes;
  for (std::size_t id = 0; id < node_count; ++id) {
    if (spec.nodes[id].kind == NodeKind::Switch) {
      vertex_of[id] = static_cast<uint32_t>(switch_nodes.size());
      switch_nodes.push_back(static_cast<NodeId>(id));
    }
  }

  SwitchGraph graph(switch_nodes.size());
  std::vector<NodeId> nic_peer(node_count, kNoNode);
  for (const net::LinkSpec& link : spec.links) {
    const bool a_switch = is_switch(spec, link.a);
    const bool b_switch = is_switch(spec, link.b);
    if (a_switch && b_switch) {
      boost::add_edge(vertex_of[link.a], vertex_of[link.b], graph);
      continue;
    }
    SIM_CHECK(a_switch || b_switch, "a link joins two NICs: " + spec.nodes[link.a].name + " - " +
                                        spec.nodes[link.b].name);
    const NodeId nic = a_switch ? link.b : link.a;
    SIM_CHECK(nic_peer[nic] == kNoNode, "NIC " + spec.nodes[nic].name + " has more than one link");
    nic_peer[nic] = a_switch ? link.a : link.b;
  }

  // Boost numbers components in DFS root order; relabel by lowest member so the numbering is part
  // of the documented layout rather than an implementation detail of connected_components.
  std::vector<uint32_t> raw_component(switch_nodes.size());
  const auto raw_count = static_cast<uint32_t>(boost::connected_components(
      graph, boost::make_iterator_property_map(raw_component.begin(),
                                               boost::get(boost::vertex_index, graph))));
  std::vector<uint32_t> relabel(raw_count, kNone);
  uint32_t component_count = 0;
  for (uint32_t& c : raw_component) {
    if (relabel[c] == kNone) {
      relabel[c] = component_count++;
    }
    c = relabel[c];
  }
  const std::vector<uint32_t>& component = raw_component;

  spec.components.assign(component_count, {});
  spec.component_of.assign(node_count, kNone);
  spec.switch_index.assign(node_count, kNone);
  spec.attachment_index.assign(node_count, kNone);
  spec.attachment_of_nic.assign(node_count, kNoNode);

  std::vector<bool> has_nic(switch_nodes.size(), false);
  for (std::size_t id = 0; id < node_count; ++id) {
    if (spec.nodes[id].kind == NodeKind::Nic) {
      SIM_CHECK(nic_peer[id] != kNoNode, "NIC " + spec.nodes[id].name + " has no link");
      has_nic[vertex_of[nic_peer[id]]] = true;
    }
  }

  for (std::size_t v = 0; v < switch_nodes.size(); ++v) {
    const NodeId id = switch_nodes[v];
    auto& comp = spec.components[component[v]];
    spec.component_of[id] = component[v];
    spec.switch_index[id] = static_cast<uint32_t>(comp.switches.size());
    comp.switches.push_back(id);
  }
  for (std::size_t v = 0; v < switch_nodes.size(); ++v) {
    if (has_nic[v]) {
      const NodeId id = switch_nodes[v];
      auto& comp = spec.components[component[v]];
      spec.attachment_index[id] = static_cast<uint32_t>(comp.attachments.size());
      comp.attachments.push_back(id);
    }
  }
  for (std::size_t id = 0; id < node_count; ++id) {
    if (spec.nodes[id].kind == NodeKind::Nic) {
      spec.attachment_of_nic[id] = nic_peer[id];
      spec.component_of[id] = spec.component_of[nic_peer[id]];
    }
  }

  // One BFS per attachment over the global switch graph; it never leaves the component, so only the
  // component's colours need resetting between runs (thousands of one-switch NVSwitch islands would
  // otherwise each pay for a full-graph reset).
  std::vector<boost::default_color_type> color(switch_nodes.size(), boost::white_color);
  std::vector<uint32_t> dist(switch_nodes.size(), kNone);
  const auto index = boost::get(boost::vertex_index, graph);
  auto color_map = boost::make_iterator_property_map(color.begin(), index);
  auto dist_map = boost::make_iterator_property_map(dist.begin(), index);
  auto visitor = boost::make_bfs_visitor(boost::record_distances(dist_map, boost::on_tree_edge()));
  boost::queue<Vertex> queue;

  for (auto& comp : spec.components) {
    const std::size_t width = comp.switches.size();
    comp.hops.assign(comp.attachments.size() * width, 255);
    if (width == 1) {
      if (!comp.attachments.empty()) {
        comp.hops[0] = 0;
      }
      continue;
    }
    for (std::size_t a = 0; a < comp.attachments.size(); ++a) {
      for (const NodeId s : comp.switches) {
        color[vertex_of[s]] = boost::white_color;
        dist[vertex_of[s]] = kNone;
      }
      const Vertex source = vertex_of[comp.attachments[a]];
      dist[source] = 0;
      boost::breadth_first_visit(graph, source, queue, visitor, color_map);
      for (std::size_t s = 0; s < width; ++s) {
        const uint32_t d = dist[vertex_of[comp.switches[s]]];
        if (d == kNone) {
          continue;  // cannot happen within a connected component; keep 255
        }
        if (d > kMaxHops) {
          throw TopologyError("topology", "expected at most " + std::to_string(kMaxHops) +
                                              " switch hops between switches, found " +
                                              std::to_string(d) + " from " +
                                              spec.nodes[comp.switches[s]].name + " to " +
                                              spec.nodes[comp.attachments[a]].name);
        }
        comp.hops[a * width + s] = static_cast<uint8_t>(d);
      }
    }
  }
}

}  // namespace syncsim::topo::detail
