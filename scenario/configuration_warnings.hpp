#pragma once
// The packet network's configuration findings (sim/net/configuration_check.hpp) as the warnings a
// run reports: each names the scenario key to change by its dotted YAML path.
#include <string>
#include <vector>

#include "sim/net/configuration_check.hpp"

namespace syncsim::app {

std::string configuration_warning(const net::ConfigurationFinding& finding);
std::vector<std::string> configuration_warnings(
    const std::vector<net::ConfigurationFinding>& findings);

}  // namespace syncsim::app
