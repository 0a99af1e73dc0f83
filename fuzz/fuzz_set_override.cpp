// Fuzz target: `--set` arguments. Each line of the input is one `--set` argument; they are parsed
// with parse_override and applied, in order, to a small valid scenario (the one of
// tests/data/scenario_minimal.yaml). Every error must be a ScenarioError.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "scenario/scenario_loader.hpp"

namespace {

// 4 hosts x 1 GPU on two leaves; small enough that a valid override set loads in microseconds.
constexpr const char* kBaseScenario = R"(name: minimal
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
traffic:
  - pattern: permutation
    size: 64KiB
  - pattern: incast
    size: 1MiB
    senders: 3
    receiver: 2
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  syncsim::app::LoadOptions options;
  try {
    std::size_t begin = 0;
    while (begin < input.size()) {
      std::size_t end = input.find('\n', begin);
      if (end == std::string_view::npos) end = input.size();
      if (end > begin) {
        options.overrides.push_back(
            syncsim::app::parse_override(std::string(input.substr(begin, end - begin))));
      }
      begin = end + 1;
    }
    (void)syncsim::app::load_scenario_text(kBaseScenario, "minimal.yaml", options);
  } catch (const syncsim::app::ScenarioError&) {
    // A malformed override or a value the scenario rejects, reported with its position.
  }
  return 0;
}
