#pragma once
// Small inline scenarios shared by the lossy-transport tests (go-back-N, TCP, impairments).
#include <string>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

namespace syncsim::lossy_test {

// `senders` hosts on leaf1 each send `size` to host 0 on leaf0 at priority `priority`; 2 leaves,
// one spine, 100G hosts, 400G uplink, 500 ns cables, `buffer` per switch. `fabric_extra` is spliced
// right after `fabric.switch`: lines indented by 4 belong to the switch (pfc, ecn), by 2 to the
// fabric.
inline std::string incast_yaml(int senders, const std::string& size, const std::string& buffer,
                               int priority, const std::string& fabric_extra) {
  std::string y =
      "name: lossy-test\n"
      "seed: 1\n"
      "fidelity: packet\n"
      "fabric:\n"
      "  topology: spine_leaf\n"
      "  spine_leaf: {leaves: 2, hosts_per_leaf: 17, spines: 1}\n"
      "  links:\n"
      "    host:   {bandwidth: 100Gbps, delay: 500ns, mtu: 4096B, header: 64B}\n"
      "    fabric: {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}\n"
      "  switch:\n"
      "    buffer: " +
      buffer +
      "\n"
      "    priorities: 8\n" +
      fabric_extra +
      "traffic:\n"
      "  - pattern: messages\n"
      "    messages:\n";
  for (int s = 0; s < senders; ++s) {
    y += "      - {src: " + std::to_string(17 + s) + ", dst: 0, size: " + size +
         ", priority: " + std::to_string(priority) + "}\n";
  }
  return y;
}

inline app::RunResult run_yaml(const std::string& yaml, std::vector<app::Override> overrides = {}) {
  app::LoadOptions o;
  o.overrides = std::move(overrides);
  return app::run_scenario(app::load_scenario_text(yaml, "inline.yaml", o));
}

inline uint64_t drops_of(const app::RunResult& r, const std::string& reason) {
  for (const auto& d : r.drops) {
    if (d.first == reason) return d.second;
  }
  return 0;
}

}  // namespace syncsim::lossy_test
