// `fabric.switch.ets`: the default (NVIDIA's RoCE mode), the given weights and strict classes, and
// each bad input reported at its file:line:col.
#include <doctest/doctest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::app::load_scenario_text;
using syncsim::app::Scenario;
using syncsim::testing::scenario_error_of;
using syncsim::testing::text_with;

namespace {

// Line 9 holds the `ets:` under test, starting at column 5.
const std::string kBase = R"(name: t
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 1, hosts_per_leaf: 2, spines: 1}
  host: {gpus: 1, nics: 1}
  links:
    host: {bandwidth: 400Gbps, delay: 500ns}
  switch:
    ETS
traffic:
  - pattern: ring_shift
    size: 1MiB
)";

std::string with_ets(const std::string& ets) { return text_with(kBase, "ETS", ets); }

}  // namespace

TEST_CASE("scenario ets: the default is 50/50 between classes 0 and 3, the CNP class strict") {
  const Scenario s = load_scenario_text(with_ets("buffer: 32MiB"), "t.yaml");
  CHECK(s.network.ets.enabled);
  CHECK(s.network.ets.weight_percent[0] == 50);
  CHECK(s.network.ets.weight_percent[3] == 50);
  CHECK(s.network.ets.strict_mask == 0);  // the highest (CNP) class is strict in any case
}

TEST_CASE("scenario ets: weights and strict classes as given") {
  const Scenario s = load_scenario_text(
      with_ets("ets: {weights: {0: 20, 2: 10, 3: 70}, strict: [5, 6]}"), "t.yaml");
  CHECK(s.network.ets.weight_percent[0] == 20);
  CHECK(s.network.ets.weight_percent[2] == 10);
  CHECK(s.network.ets.weight_percent[3] == 70);
  CHECK(s.network.ets.weight_percent[1] == 0);
  CHECK(s.network.ets.strict_mask == ((1U << 5) | (1U << 6)));
  CHECK_FALSE(load_scenario_text(with_ets("ets: {enabled: false}"), "t.yaml").network.ets.enabled);
}

TEST_CASE("scenario ets: bad input names the key and its position") {
  CHECK(scenario_error_of(with_ets("ets: {weights: {0: 30, 3: 60}}")) ==
        "t.yaml:9:20: fabric.switch.ets.weights: expected weights (percent of the port) that sum "
        "to 100, got 90");
  CHECK(scenario_error_of(with_ets("ets: {weights: {0: 50, 9: 50}}")) ==
        "t.yaml:9:28: fabric.switch.ets.weights.9: expected an integer in 0..7, got 9");
  CHECK(scenario_error_of(with_ets("priorities: 4\n    ets: {weights: {0: 50, 5: 50}}")) ==
        "t.yaml:10:28: fabric.switch.ets.weights.5: expected a traffic class in 0..3 "
        "(fabric.switch.priorities is 4), got 5");
  CHECK(scenario_error_of(with_ets("ets: {weights: {0: 50, 7: 50}}")) ==
        "t.yaml:9:28: fabric.switch.ets.weights.7: expected a class below 7: class 7 (the highest) "
        "carries CNPs and is always strict, got 7");
  CHECK(scenario_error_of(with_ets("ets: {weights: {0: 0, 3: 100}}")) ==
        "t.yaml:9:24: fabric.switch.ets.weights.0: expected an integer in 1..100, got 0");
  CHECK(scenario_error_of(with_ets("ets: {weights: {0: 50, 3: 50}, strict: [3]}")) ==
        "t.yaml:9:20: fabric.switch.ets.weights: expected each class either strict or weighted, "
        "got class 3 in both");
  CHECK(scenario_error_of(with_ets("ets: {strict: [0]}")) ==
        "t.yaml:9:19: fabric.switch.ets.strict: expected each class either strict or weighted, got "
        "class 0 in both (the default weights are {0: 50, 3: 50})");
  CHECK(
      scenario_error_of(with_ets("ets: {weights: [50, 50]}"))
          .rfind(
              "t.yaml:9:20: fabric.switch.ets.weights: expected a map of traffic class to percent "
              "like {0: 50, 3: 50}, got ",
              0) == 0);
  CHECK(scenario_error_of(with_ets("ets: {weight: {0: 100}}")) ==
        "t.yaml:9:11: fabric.switch.ets.weight: unknown key \"weight\"; expected one of: enabled, "
        "weights, strict");
}
