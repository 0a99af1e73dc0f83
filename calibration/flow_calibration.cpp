#include "calibration/flow_calibration.hpp"

#include <algorithm>
#include <bit>
#include <memory>
#include <stdexcept>
#include <utility>

#include "calibration/alpha_beta_fit.hpp"
#include "models/traffic.hpp"
#include "models/traffic_injector.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/core/simulation.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::calibration {

namespace {

constexpr uint32_t kHostsPerLeaf = 8;
constexpr uint32_t kHosts = 2 * kHostsPerLeaf;
// topologies/fabric_builder.cpp numbers the link classes host, fabric, then the rest.
constexpr std::size_t kHostLinkClass = 0;
constexpr std::size_t kFabricLinkClass = 1;

// The small reference fabric with `network`'s link classes, switches, hashing and behaviour.
net::NetworkSpec reference_network(const net::NetworkSpec& network, double oversubscription) {
  topo::FabricParams fabric;
  fabric.kind = topo::TopologyKind::SpineLeaf;
  fabric.spine_leaf.leaves = 2;
  fabric.spine_leaf.hosts_per_leaf = kHostsPerLeaf;
  fabric.spine_leaf.oversubscription = oversubscription;
  fabric.links.host = network.link_classes[kHostLinkClass];
  fabric.links.fabric = network.link_classes[kFabricLinkClass];
  fabric.switch_params = network.switch_params;
  fabric.ecmp_hash_seed = network.ecmp_hash_seed;
  fabric.ecmp_per_switch_salt = network.ecmp_per_switch_salt;
  fabric.load_balancing = network.load_balancing;
  net::NetworkSpec spec = topo::build_fabric(fabric);
  spec.pfc = network.pfc;
  spec.ecn = network.ecn;
  spec.ets = network.ets;
  spec.nic = network.nic;
  spec.transport = network.transport;
  spec.impairments = network.impairments;
  return spec;
}

uint8_t traffic_priority(const net::NetworkSpec& network) {
  // The first lossless class when PFC is on: where RoCE traffic (and DCQCN) runs.
  if (network.pfc.enabled && network.pfc.lossless_mask != 0) {
    return static_cast<uint8_t>(std::countr_zero(static_cast<unsigned>(network.pfc.lossless_mask)));
  }
  return 0;
}

struct ReferenceCase {
  FlowCalibrationCase result;
  net::NetworkSpec network;
  std::vector<models::TrafficSpec> traffic;
};

// The last completion of the case's messages (all start at time zero).
double last_completion_s(const ReferenceCase& c, Fidelity fidelity,
                         const net::FlowCcCorrection& correction, uint64_t seed) {
  net::NetworkSpec spec = c.network;
  spec.flow_cc = correction;
  std::vector<uint32_t> host_of_rank;
  for (const net::GpuAttachment& g : spec.gpus) host_of_rank.push_back(g.host);
  auto messages = models::expand_traffic(c.traffic, host_of_rank, seed);
  const std::size_t count = messages.size();
  Simulation sim(seed);
  std::unique_ptr<TransferBackend> backend = make_backend(fidelity, sim, spec);
  models::TrafficInjector injector(*backend, std::move(messages));
  sim.queue().run();
  std::size_t done = 0;
  double last_s = 0;
  for (const TransferRecord& t : backend->transfers()) {
    if (!t.done) continue;
    ++done;
    last_s = std::max(last_s, (t.finish - t.start).seconds());
  }
  if (done != count) {
    throw FitError("flow calibration: " + std::string(fidelity_name(fidelity)) + " run left " +
                   std::to_string(count - done) +
                   " messages unfinished (drops without a reliable transport?)");
  }
  return last_s;
}

}  // namespace

FlowCalibration calibrate_flow(const net::NetworkSpec& network, int64_t message_bytes,
                               uint64_t seed) {
  if (message_bytes < 16) {
    throw std::invalid_argument("flow calibration: messages of at least 16B expected, found " +
                                std::to_string(message_bytes) + "B");
  }
  if (network.link_classes.size() <= kFabricLinkClass) {
    throw std::invalid_argument(
        "flow calibration: the network has no host and fabric link classes");
  }
  FlowCalibration out;
  out.message_bytes = message_bytes;
  const uint8_t priority = traffic_priority(network);
  const Bytes size{message_bytes};

  std::vector<ReferenceCase> cases;
  auto add = [&](std::string name, uint32_t contended_flows, double oversubscription,
                 models::TrafficSpec traffic) {
    ReferenceCase c;
    c.result.name = std::move(name);
    c.result.contended_flows = contended_flows;
    c.result.fitted = contended_flows > 0;
    c.network = reference_network(network, oversubscription);
    traffic.priority = priority;
    c.traffic.push_back(traffic);
    cases.push_back(std::move(c));
  };
  for (uint32_t n : {2u, 4u, 8u, 15u}) {
    models::TrafficSpec t;
    t.pattern = models::TrafficPattern::Incast;
    t.size = size;
    t.senders = n;
    t.receiver = 0;
    add("incast-" + std::to_string(n), n, 1.0, t);
  }
  {
    models::TrafficSpec t;
    t.pattern = models::TrafficPattern::Permutation;
    t.size = size;
    add("permutation-2:1", 0, 2.0, t);
  }
  {
    models::TrafficSpec t;
    t.pattern = models::TrafficPattern::AllToAll;
    t.size = Bytes{std::max<int64_t>(1, message_bytes / kHosts)};
    add("all_to_all", 0, 1.0, t);
  }

  // The receiver's host link is each incast's bottleneck; the flow model drains it at its payload
  // rate (bandwidth * mtu / (mtu + header)).
  const net::LinkParams& host = network.link_classes[kHostLinkClass];
  const double payload_Bps = host.bandwidth.bytes_per_second() *
                             static_cast<double>(host.mtu.count()) /
                             static_cast<double>(host.mtu.count() + host.header.count());
  std::vector<ContendedSample> samples;
  for (ReferenceCase& c : cases) {
    c.result.packet_s = last_completion_s(c, Fidelity::Packet, {}, seed);
    c.result.flow_s = last_completion_s(c, Fidelity::Flow, {}, seed);
    if (c.result.fitted) {
      samples.push_back({.flows = c.result.contended_flows,
                         .flow_time_s = c.result.flow_s,
                         .flow_drain_s = static_cast<double>(c.result.contended_flows) *
                                         static_cast<double>(message_bytes) / payload_Bps,
                         .packet_time_s = c.result.packet_s});
    }
  }
  out.fit = fit_contended_efficiency(samples);
  const net::FlowCcCorrection corrected{.enabled = true,
                                        .contended_efficiency = out.fit.contended_efficiency};
  for (ReferenceCase& c : cases) {
    c.result.corrected_s = last_completion_s(c, Fidelity::Flow, corrected, seed);
    out.cases.push_back(c.result);
  }
  return out;
}

}  // namespace syncsim::calibration
