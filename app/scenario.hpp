#pragma once
// A scenario after parsing: plain structs, no YAML. Produced by load_scenario (scenario_loader.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "models/traffic.hpp"
#include "sim/backends/fidelity.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::app {

struct Scenario {
  std::string name;
  std::string source;        // file path, or "<built-in default>"
  uint64_t seed = 1;
  Fidelity fidelity = Fidelity::Packet;
  topo::FabricParams fabric;
  std::vector<models::TrafficSpec> traffic;
};

}  // namespace syncsim::app
