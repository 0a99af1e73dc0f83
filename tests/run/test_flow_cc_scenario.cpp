// `fabric.flow.cc_correction` in scenarios: parsed into Scenario::flow_cc, errors at file:line:col,
// and applied by the runner at flow fidelity only.
#include <doctest/doctest.h>

#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;
using syncsim::app::load_scenario_text;
using syncsim::app::ScenarioError;

namespace {

// 8 hosts under one leaf, 100G; hosts 1..7 incast 1 MB each into host 0.
const std::string kIncast = R"(name: t
fidelity: flow
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 1, hosts_per_leaf: 8, spines: 1}
  links:
    host: {bandwidth: 100Gbps, delay: 500ns, mtu: 4096B, header: 64B}
  flow:
    cc_correction: {contended_efficiency: 0.8}
traffic:
  - {pattern: incast, senders: 7, receiver: 0, size: 1MB}
)";

std::string replaced(const std::string& from, const std::string& to) {
  return syncsim::testing::text_with(kIncast, from, to);
}

std::string error_of(const std::string& yaml) { return syncsim::testing::scenario_error_of(yaml); }

}  // namespace

TEST_CASE("scenario: fabric.flow.cc_correction is read and off by default") {
  const auto s = load_scenario_text(kIncast, "t.yaml");
  CHECK(s.flow_cc.enabled);
  CHECK(s.flow_cc.contended_efficiency == 0.8);
  const auto plain = load_scenario_text(
      replaced("    cc_correction: {contended_efficiency: 0.8}\n", "    {}\n"), "t.yaml");
  CHECK_FALSE(plain.flow_cc.enabled);
  const auto off = load_scenario_text(
      replaced("{contended_efficiency: 0.8}", "{contended_efficiency: 0.8, enabled: false}"),
      "t.yaml");
  CHECK_FALSE(off.flow_cc.enabled);
}

TEST_CASE("scenario: fabric.flow errors name file:line:col") {
  CHECK(error_of(replaced("contended_efficiency: 0.8", "contended_efficiency: 1.2")) ==
        "t.yaml:9:43: fabric.flow.cc_correction.contended_efficiency: expected an efficiency in "
        "(0, 1] "
        "(1 = no correction), got \"1.2\"");
  CHECK(error_of(replaced("contended_efficiency: 0.8", "contended_eff: 0.8")) ==
        "t.yaml:9:21: fabric.flow.cc_correction.contended_eff: unknown key \"contended_eff\"; "
        "expected one "
        "of: contended_efficiency, enabled");
  CHECK(error_of(replaced("    cc_correction:", "    cc_corection:"))
            .starts_with("t.yaml:9:5: fabric.flow.cc_corection: unknown key \"cc_corection\""));
}

TEST_CASE(
    "runner: the correction slows a flow-level incast by exactly 1/efficiency, only at flow "
    "fidelity") {
  app::LoadOptions off;
  off.overrides = {{"fabric.flow.cc_correction.enabled", "false"}};
  const auto corrected = app::run_scenario(load_scenario_text(kIncast, "t.yaml"));
  const auto plain = app::run_scenario(load_scenario_text(kIncast, "t.yaml", off));
  const double link_Bps = 100e9 / 8 * 4096.0 / 4160.0;
  const double drain_s = 7 * 1e6 / link_Bps;
  const double eff = 1.0 - 0.2 * (1.0 - 1.0 / 7.0);
  CHECK(corrected.fct.max_s - plain.fct.max_s ==
        doctest::Approx(drain_s * (1 / eff - 1)).epsilon(1e-6));
  // The analytic backend ignores it.
  app::LoadOptions analytic;
  analytic.overrides = {{"fidelity", "analytic"}};
  app::LoadOptions analytic_off = analytic;
  analytic_off.overrides.push_back({"fabric.flow.cc_correction.enabled", "false"});
  CHECK(app::run_scenario(load_scenario_text(kIncast, "t.yaml", analytic)).fct.max_s ==
        app::run_scenario(load_scenario_text(kIncast, "t.yaml", analytic_off)).fct.max_s);
}
