// The scenario's fabric as a NetworkSpec, with everything the scenario sets on it beyond its
// shape (runner.hpp's scenario_network).
#include <algorithm>
#include <cmath>
#include <string>

#include "run/route_overrides.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app {

namespace {

// A link rate times a measured efficiency, exact at 1.
Bandwidth scale_rate(Bandwidth rate, double efficiency) {
  if (efficiency == 1.0) return rate;
  return Bandwidth::bps(std::llround(static_cast<double>(rate.bits_per_second()) * efficiency));
}

}  // namespace

topo::LinkClasses scenario_link_classes(const Scenario& scenario) {
  // Measured efficiencies slow the NICs' and NVLink ports' links; the scenario's fabric keeps the
  // nominal rates for NCCL's channel search (scenario_nccl_channels).
  topo::LinkClasses links = scenario.fabric.links;
  links.host.bandwidth = scale_rate(links.host.bandwidth, scenario.nic_efficiency);
  links.nvlink.bandwidth = scale_rate(links.nvlink.bandwidth, scenario.nvlink_efficiency);
  // A switch's port-to-port latency rides on the link delays: half on each host link, all on
  // fabric and core links, so a path crosses as many latencies as switches (Scenario's
  // switch_latency). Credits return over the same delays.
  if (const Time l = scenario.network.switch_latency; l > Time::zero()) {
    links.host.delay = links.host.delay + Time::ps(l.picoseconds() / 2);
    links.fabric.delay = links.fabric.delay + l;
    links.core.delay = links.core.delay + l;
  }
  return links;
}

net::NetworkSpec scenario_network(const Scenario& scenario) {
  topo::FabricParams fabric = scenario.fabric;
  fabric.links = scenario_link_classes(scenario);
  net::NetworkSpec spec = topo::build_fabric(fabric);
  set_network_behaviour(scenario, spec);
  resolve_route_overrides(scenario, spec);
  return spec;
}

void set_network_behaviour(const Scenario& scenario, net::NetworkSpec& spec) {
  spec.pfc = scenario.network.pfc;
  spec.ecn = scenario.network.ecn;
  spec.ets = scenario.network.ets;
  spec.nic = scenario.network.nic;
  // fabric.nic_overrides: the NICs of the listed hosts (validated against the fabric at load).
  for (const NicOverrideSpec& o : scenario.network.nic_overrides) {
    if (spec.nic_variant_of.empty()) spec.nic_variant_of.assign(spec.nodes.size(), 0);
    spec.nic_variants.push_back(o.nic);
    const auto variant = static_cast<uint32_t>(spec.nic_variants.size());
    for (const net::GpuAttachment& g : spec.gpus) {
      if (g.nic == net::kNoNode) continue;
      if (std::find(o.hosts.begin(), o.hosts.end(), g.host) != o.hosts.end()) {
        spec.nic_variant_of[g.nic] = variant;
      }
    }
  }
  spec.transport = scenario.network.transport;
  spec.impairments = scenario.network.impairments;
  spec.link_layer = scenario.network.link_layer;
  spec.infiniband = scenario.network.infiniband;
  spec.routing_algorithm = scenario.network.routing_algorithm();
  spec.flow_cc = scenario.flow_cc;
}

}  // namespace syncsim::app
