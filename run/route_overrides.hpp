#pragma once
// `fabric.route_overrides`: the scenario's pinned paths (GPU ranks and switch names) resolved to
// the fabric's NICs and switches, appended to NetworkSpec::route_overrides.
#include "scenario/scenario_loader.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::app {

// Throws ScenarioError (path fabric.route_overrides.N) for a rank or switch the fabric lacks.
void resolve_route_overrides(const Scenario& scenario, net::NetworkSpec& spec);

}  // namespace syncsim::app
