#pragma once

namespace syncsim::app {

// The text of scenarios/default.yaml, compiled in so `syncsim run` needs no file.
const char* default_scenario_yaml();
inline constexpr const char* kDefaultScenarioSource = "<built-in default>";

}  // namespace syncsim::app
