// `faults:` reading: the accepted forms and one error per class, at file:line:col.
#include <doctest/doctest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;
using syncsim::testing::scenario_error_of;

namespace {

// 8 GPUs on 2 leaves x 2 hosts; the faults list starts on line 11.
std::string with_faults(const std::string& faults) {
  return "name: t\n"
         "fabric:\n"
         "  topology: spine_leaf\n"
         "  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}\n"
         "  host: {gpus: 2, nics: 2}\n"
         "  routing_convergence: 5ms\n"
         "traffic:\n"
         "  - pattern: ring_shift\n"
         "    size: 1MiB\n"
         "faults:\n" +
         faults;
}

}  // namespace

TEST_CASE("faults: every kind reads, with repeats and durations") {
  const app::Scenario s = app::load_scenario_text(
      with_faults("  - {kind: link_degraded, at: 1ms, link: \"spine0->leaf1\", fraction: 0.25}\n"
                  "  - {kind: link_down, at: 2ms, link: \"leaf1->spine0\", period: 4ms, count: 3}\n"
                  "  - {kind: switch_down, at: 3ms, switch: spine1, duration: 1ms}\n"
                  "  - {kind: nic_down, at: 4ms, nic: host0.nic0}\n"
                  "  - {kind: straggler, at: 0s, gpu: 5, slowdown: 1.3}\n"
                  "  - {kind: pfc_storm, at: 1ms, nic: host1.nic1, priority: 3, duration: 2ms}\n"),
      "t.yaml");
  REQUIRE(s.faults.size() == 6);
  CHECK(s.routing_convergence == Time::ms(5));
  CHECK(s.faults[0].kind == app::FaultKind::LinkDegraded);
  CHECK(s.faults[0].fraction == 0.25);
  CHECK(s.faults[1].count == 3);
  CHECK(s.faults[1].period == Time::ms(4));
  CHECK(*s.faults[1].duration == Time::ms(2));  // half the period by default
  CHECK(s.faults[2].target == "spine1");
  CHECK(!s.faults[3].duration.has_value());
  CHECK(s.faults[4].gpu == 5);
  CHECK(s.faults[4].slowdown == 1.3);
  CHECK(s.faults[5].priority == 3);
}

TEST_CASE("faults: bad entries are errors at their file:line:col") {
  // An unknown link, with the nearest name.
  CHECK(
      scenario_error_of(with_faults("  - {kind: link_down, at: 1ms, link: \"spine0->leaf9\"}\n")) ==
      "t.yaml:11:38: faults.0.link: expected a link \"a->b\" of this fabric (`syncsim ports` "
      "lists them, either direction names the cable), got \"spine0->leaf9\"; did you mean "
      "\"spine0->leaf0\"?");
  CHECK(scenario_error_of(
            with_faults("  - {kind: link_down, at: -1ms, link: \"spine0->leaf1\"}\n")) ==
        "t.yaml:11:27: faults.0.at: expected a non-negative time like \"1.5us\", got \"-1ms\"");
  for (const char* fraction : {"0", "1.5", "-0.2"}) {
    CAPTURE(fraction);
    const std::string e = scenario_error_of(with_faults(
        std::string("  - {kind: link_degraded, at: 1ms, link: \"spine0->leaf1\", fraction: ") +
        fraction + "}\n"));
    CHECK(e.find("t.yaml:11:") == 0);
    CHECK(e.find("faults.0.fraction: expected a fraction of the link's rate in (0, 1]") !=
          std::string::npos);
  }
  CHECK(scenario_error_of(
            with_faults("  - {kind: link_degraded, at: 1ms, link: \"spine0->leaf1\"}\n"))
            .find("faults.0.fraction") != std::string::npos);
  CHECK(scenario_error_of(with_faults("  - {kind: switch_down, at: 1ms, switch: spine7}\n"))
            .find("t.yaml:11:42: faults.0.switch: expected the name of a switch") == 0);
  CHECK(scenario_error_of(with_faults("  - {kind: straggler, at: 0s, gpu: 8, slowdown: 1.5}\n"))
            .find("faults.0.gpu: expected a GPU below the fabric's 8, got 8") != std::string::npos);
  CHECK(scenario_error_of(with_faults("  - {kind: straggler, at: 0s, gpu: 1, slowdown: 0.5}\n"))
            .find("faults.0.slowdown: expected a factor from 1 to 1000") != std::string::npos);
  CHECK(scenario_error_of(with_faults("  - {kind: pfc_storm, at: 0s, nic: host0.nic0}\n"))
            .find("faults.0") != std::string::npos);
  CHECK(scenario_error_of(with_faults("  - {kind: link_down, at: 1ms, link: \"spine0->leaf1\", "
                                      "fraction: 0.5}\n"))
            .find("fraction") != std::string::npos);
  CHECK(scenario_error_of(with_faults("  - {kind: meteor, at: 1ms}\n"))
            .find("t.yaml:11:12: faults.0.kind: expected one of: link_down, link_up") == 0);
}
