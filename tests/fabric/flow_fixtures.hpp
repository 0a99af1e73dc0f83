#pragma once
// Shared fixtures of the flow-backend tests: small spine-leaf fabrics and seeded random arrivals.
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/backends/flow_backend.hpp"
#include "sim/core/rng.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::testing {

// A spine-leaf with `nics` GPUs/NICs per host, 1 us cables, 4096 B MTU and 64 B headers.
inline topo::FabricParams flow_test_fabric(uint32_t leaves, uint32_t hosts_per_leaf,
                                           uint32_t spines, Bandwidth host_bw, Bandwidth fabric_bw,
                                           uint32_t nics = 1) {
  topo::FabricParams p;
  p.spine_leaf.leaves = leaves;
  p.spine_leaf.hosts_per_leaf = hosts_per_leaf;
  p.spine_leaf.spines = spines;
  p.host.gpus = nics;
  p.host.nics = nics;
  p.links.host.bandwidth = host_bw;
  p.links.fabric.bandwidth = fabric_bw;
  for (net::LinkParams* l : {&p.links.host, &p.links.fabric}) {
    l->delay = Time::us(1);
    l->mtu = Bytes{4096};
    l->header = Bytes{64};
  }
  return p;
}

struct Arrival {
  Time at;
  TransferRequest request;
};

// `count` transfers between distinct random GPUs, sizes log-uniform from 4 KB over `size_doublings`
// doublings, starting at one of `instants` instants 5 us apart (so several share an instant).
inline std::vector<Arrival> random_arrivals(uint64_t seed, uint64_t stream, std::size_t count,
                                            uint32_t gpus, double size_doublings,
                                            uint64_t instants) {
  RngStream rng(seed, stream);
  std::vector<Arrival> out;
  for (std::size_t i = 0; i < count; ++i) {
    const auto src = static_cast<uint32_t>(rng.below(gpus));
    auto dst = static_cast<uint32_t>(rng.below(gpus - 1));
    if (dst >= src) ++dst;
    const double size = 4096.0 * std::pow(2.0, size_doublings * rng.uniform());
    const Time at = Time::us(static_cast<int64_t>(rng.below(instants)) * 5);
    out.push_back(Arrival{at, TransferRequest{src, dst, Bytes{static_cast<int64_t>(size)}, 0}});
  }
  return out;
}

inline void schedule_arrivals(Simulation& sim, FlowBackend& backend,
                              const std::vector<Arrival>& arrivals) {
  for (const Arrival& a : arrivals) {
    sim.queue().schedule_fn(a.at, [&backend, r = a.request] { backend.start(r); });
  }
}

}  // namespace syncsim::testing
