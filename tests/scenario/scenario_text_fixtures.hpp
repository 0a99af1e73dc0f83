#pragma once
// Helpers of the scenario-text tests: load a YAML text and keep the loader's error message, or edit
// one snippet of a text (the snippet must be there).
#include <doctest/doctest.h>

#include <string>

#include "scenario/scenario_loader.hpp"

namespace syncsim::testing {

// The full message of the ScenarioError thrown while loading `yaml` as `source`, or "<no error>".
inline std::string scenario_error_of(const std::string& yaml, const app::LoadOptions& options = {},
                                     const std::string& source = "t.yaml") {
  try {
    app::load_scenario_text(yaml, source, options);
  } catch (const app::ScenarioError& e) {
    return e.what();
  }
  return "<no error>";
}

// `text` with its first `from` replaced by `to`.
inline std::string text_with(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "no \"" << from << "\" in the text");
  text.replace(at, from.size(), to);
  return text;
}

}  // namespace syncsim::testing
