// Fuzz target: scenario YAML text -> Scenario. The loader's contract (scenario/scenario_loader.hpp)
// is that every input error is a ScenarioError; any other exception, a crash or a sanitizer report
// is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenario/scenario_loader.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    (void)syncsim::app::load_scenario_text(text, "fuzz.yaml");
  } catch (const syncsim::app::ScenarioError&) {
    // A clean, positioned input error: the expected outcome for most inputs.
  }
  return 0;
}
