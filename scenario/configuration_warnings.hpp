#pragma once
// The packet network's configuration findings (sim/net/configuration_check.hpp) as the warnings a
// run reports: each names the scenario key to change by its dotted YAML path.
#include <functional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "sim/backends/fidelity.hpp"
#include "sim/net/configuration_check.hpp"

namespace syncsim::app {

std::string configuration_warning(const net::ConfigurationFinding& finding);
std::vector<std::string> configuration_warnings(
    const std::vector<net::ConfigurationFinding>& findings);

// The settings a scenario states that only the packet network models (PFC, ECN, DCQCN, the NIC's
// receive buffer, go-back-N, TCP's window, timers and congestion control, link impairments, time
// series): at flow or analytic fidelity each does nothing, so each one given (`stated(path)` says
// whether the scenario writes that key) is a warning naming the key and the fidelity. TCP's stack
// latency and per-byte cost and the host-staging stage act at every fidelity and are not named.
// A `fabric.transport.tcp` block without `kind: tcp`, or `host_staging` with `kind: roce`, does
// nothing at any fidelity and is named too.
struct SettingWarning {
  std::string path;  // the dotted key
  std::string message;
};
std::vector<SettingWarning> fidelity_warnings(
    Fidelity fidelity, const NetworkBehaviour& network,
    const std::function<bool(const std::string&)>& stated);
// The same for `fabric.load_balancing` (docs/load-balancing.md): per-packet modes split a
// transfer over every path at flow fidelity, but flowlet switching needs pauses a fluid flow never
// has (flow), and no mode changes a transfer timed alone on an idle path (analytic).
std::vector<SettingWarning> load_balancing_warnings(
    Fidelity fidelity, const topo::FabricParams& fabric,
    const std::function<bool(const std::string&)>& stated);

}  // namespace syncsim::app
