#pragma once
// How many links a packet crosses between two GPUs of a fabric, from its parameters alone (no
// built graph): what the run estimate needs to count packet hops for traffic whose endpoints it
// knows (generated patterns, rings of consecutive ranks).
#include <cstdint>

#include "topologies/fabric_params.hpp"

namespace syncsim::topo {

// Links on a shortest path from GPU `a` to GPU `b`, GPUs numbered host-major (GPU g is local GPU
// g % host.gpus of host g / host.gpus) and each sending through its own NIC (local GPU i: NIC
// floor(i x nics / gpus), as the builders attach them): 0 to itself; 2 inside a host (GPU,
// NVSwitch, GPU); 2 through one leaf (NIC, leaf, NIC); 4 through a spine (or between planes or
// rails, which meet there); 6 across a fat tree's pods (through a core).
uint32_t links_between_gpus(const FabricParams& params, uint64_t a, uint64_t b);

}  // namespace syncsim::topo
