#pragma once
#include <stdexcept>
#include <string>

#include "sim/net/network_spec.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::topo {

// An impossible topology (0 spines, hosts that do not divide, ...). `path` is the dotted path of the
// offending parameter below `fabric.` (e.g. "spine_leaf.spines"), so the scenario loader can point at it.
class TopologyError : public std::invalid_argument {
 public:
  TopologyError(std::string path, const std::string& what)
      : std::invalid_argument(what), path_(std::move(path)) {}
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Builds the fabric graph with Boost.Graph, checks it is connected, and fills the routing tables
// (hop distances to every attachment switch, for ECMP over all shortest paths).
net::NetworkSpec build_fabric(const FabricParams& params);

}  // namespace syncsim::topo
