#pragma once
#include <stdexcept>
#include <string>

#include "sim/net/network_spec.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::topo {

// An impossible topology (0 spines, hosts that do not divide, ...). `path` is the dotted path of
// the offending parameter below `fabric.` (e.g. "spine_leaf.spines"), so the scenario loader can
// point at it.
class TopologyError : public std::invalid_argument {
 public:
  TopologyError(std::string path, const std::string& what)
      : std::invalid_argument(what), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sizes of the fabric build_fabric would make, computed from the parameters alone (nothing is
// allocated), for memory and time estimates before a run. Throws TopologyError as build_fabric
// does.
struct FabricSize {
  uint64_t hosts = 0;
  uint64_t gpus = 0;
  uint64_t switches = 0;
  uint64_t nodes = 0;            // switches, NICs, GPUs and NVSwitches
  uint64_t links = 0;            // cables (each is two directed ports)
  uint64_t routing_entries = 0;  // hop-distance table: attachment leaves x switches
};
FabricSize fabric_size(const FabricParams& params);

// Builds the fabric graph with Boost.Graph, checks it is connected, and fills the routing tables
// (hop distances to every attachment switch, for ECMP over all shortest paths).
net::NetworkSpec build_fabric(const FabricParams& params);

}  // namespace syncsim::topo
