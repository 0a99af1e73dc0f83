// Regression: a switch that sends a PAUSE while admitting a packet allocates the PAUSE frame from
// the packet pool, which may grow (std::vector) and move every packet. Switch::receive used to keep
// a reference taken before the PAUSE and wrote the packet's buffer charge (ingress port, bytes)
// through it: the charge was lost and a later release tripped "switch buffer released more bytes
// than it admitted". The 16 x 4 MB incast with 400G hosts and 400G leaf-spine links hit it (found
// in the host-speed sweep (docs/scenarios.md) of incast-pfc.yaml).
#include <doctest/doctest.h>

#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

TEST_CASE(
    "pfc: a PAUSE sent while the packet pool grows keeps the admitted packet's buffer charge") {
  app::LoadOptions o;
  o.overrides = {app::parse_override("fabric.links.host.bandwidth=400Gbps"),
                 app::parse_override("fabric.links.fabric.bandwidth=400Gbps")};
  const app::RunResult r = app::run_scenario(
      app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/incast-pfc.yaml", o));
  uint64_t drops = 0;
  for (const auto& d : r.drops) drops += d.second;
  CHECK(drops == 0);
  CHECK(r.pause_frames > 0);
  CHECK(r.messages_completed == r.messages);
  CHECK(r.counters.bytes_delivered == r.counters.bytes_injected);
}
