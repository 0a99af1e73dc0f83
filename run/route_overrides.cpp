#include "run/route_overrides.hpp"

#include <string>
#include <utility>

namespace syncsim::app {

void resolve_route_overrides(const Scenario& scenario, net::NetworkSpec& spec) {
  for (std::size_t i = 0; i < scenario.route_overrides.size(); ++i) {
    const RouteOverrideSpec& o = scenario.route_overrides[i];
    const std::string path = "fabric.route_overrides." + std::to_string(i);
    if (o.src_gpu >= spec.gpus.size() || o.dst_gpu >= spec.gpus.size()) {
      throw ScenarioError(std::string{}, 0, 0, path,
                          "src/dst must be GPU ranks below " + std::to_string(spec.gpus.size()));
    }
    net::NetworkSpec::RouteOverride r;
    r.src = spec.gpus[o.src_gpu].nic;
    r.dst = spec.gpus[o.dst_gpu].nic;
    for (const std::string& name : o.via) {
      net::NodeId found = net::kNoNode;
      for (net::NodeId n = 0; n < spec.nodes.size() && found == net::kNoNode; ++n) {
        if (spec.nodes[n].name == name && spec.nodes[n].kind == net::NodeKind::Switch) found = n;
      }
      if (found == net::kNoNode || spec.attachment_index[found] == UINT32_MAX) {
        throw ScenarioError(
            std::string{}, 0, 0, path + ".via",
            "no switch with hosts attached named \"" + name + "\" (e.g. \"leaf1\")");
      }
      r.via.push_back(found);
    }
    spec.route_overrides.push_back(std::move(r));
  }
}

}  // namespace syncsim::app
