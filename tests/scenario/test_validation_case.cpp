// Validation case files (validation/*.yaml): the reader's fields and its file:line:col errors.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "scenario/validation_case.hpp"

using syncsim::app::load_validation_case_text;
using syncsim::app::load_validation_suite;
using syncsim::app::ScenarioError;
using syncsim::app::UnitDimension;
using syncsim::app::ValidationCase;
using syncsim::app::ValidationGroup;

namespace {

// Line numbers below refer to this text. The scenario is inline so no file is needed.
const std::string kCase = R"(id: tiny-allreduce
group: collectives
source: a test
hardware: two GPUs
software: none
conditions: idle fabric
scenario:
  inline: {name: t, fidelity: analytic, fabric: {topology: spine_leaf}}
  set: [fabric.host.gpus=2]
metric: {collective: all_reduce, ranks: 2}
tolerance: {relative: 15%, reason: a test}
measured:
  - {quantity: busbw at 1 MiB, size: 1MiB, value: 67.04, unit: GB/s}
  - {quantity: time at 8 B, size: 8B, value: 13.67, unit: us, set: [seed=2]}
)";

std::string edit(const std::string& from, const std::string& to, std::string text = kCase) {
  const std::size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "no text " << from);
  return text.replace(at, from.size(), to);
}

std::string error_of(const std::string& text) {
  try {
    (void)load_validation_case_text(text, "case.yaml", ".");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a validation case reads into its struct") {
  const ValidationCase c = load_validation_case_text(kCase, "case.yaml", ".");
  CHECK(c.id == "tiny-allreduce");
  CHECK(c.group == ValidationGroup::Collectives);
  REQUIRE(c.scenario_inline);
  CHECK(c.scenario_inline->find("spine_leaf") != std::string::npos);
  CHECK(c.inline_source == "case.yaml:8 (inline scenario)");
  REQUIRE(c.overrides.size() == 1);
  CHECK(c.overrides[0].path == "fabric.host.gpus");
  REQUIRE(c.metric);
  REQUIRE(c.metric->collective);
  CHECK(c.metric->collective->ranks == 2);
  CHECK_FALSE(c.metric->collective->algbw);
  CHECK(c.tolerance == doctest::Approx(0.15));
  REQUIRE(c.measured.size() == 2);
  CHECK(*c.measured[0].size == 1 << 20);
  CHECK(*c.measured[0].value == doctest::Approx(67.04));
  CHECK(c.measured[0].unit.dimension == UnitDimension::Bandwidth);
  CHECK(c.measured[1].unit.scale == doctest::Approx(1e-6));
  CHECK(c.measured[1].overrides.at(0).path == "seed");
  CHECK(c.measured[1].where.line == 14);
}

TEST_CASE("validation case errors point at file:line:col") {
  CHECK(error_of(edit("software: none\n", "software: none\nsoftwares: x\n")) ==
        "case.yaml:6:1: softwares: unknown key \"softwares\"; expected one of: id, group, source, "
        "hardware, software, conditions, scenario, metric, tolerance, inexpressible, measured");
  CHECK(error_of(edit("hardware: two GPUs\n", "")) ==
        "case.yaml:1:1: hardware: missing required key \"hardware\"");
  CHECK(error_of(edit("unit: us", "unit: usec")) ==
        "case.yaml:14:59: measured.1.unit: expected one of: us, ms, s, GB/s, tokens/s, %, -; got "
        "\"usec\"");
  CHECK(error_of(edit("size: 8B", "size: 8")) ==
        "case.yaml:14:35: measured.1.size: expected a size like \"64MiB\", got \"8\"");
  CHECK(error_of(edit("group: collectives", "group: nccl")) ==
        "case.yaml:2:8: group: expected one of: collectives, training_steps, congestion; got "
        "\"nccl\"");
  CHECK(error_of(edit("relative: 15%", "relative: 15")) ==
        "case.yaml:11:23: tolerance.relative: expected a relative tolerance in (0, 10] "
        "(0..1000%), got 15");
  CHECK(error_of(edit(", size: 1MiB", "")) ==
        "case.yaml:13:5: measured.0.size: missing required key \"size\" (the message size of the "
        "collective metric)");
  CHECK(error_of(edit(", value: 67.04", "")) ==
        "case.yaml:13:5: measured.0.value: missing required key \"value\" (only an inexpressible "
        "case may leave it out)");
  CHECK(error_of(edit("unit: GB/s", "unit: tokens/s")) ==
        "case.yaml:13:64: measured.0.unit: expected a time (us, ms, s) or a bandwidth (GB/s) for "
        "a collective metric, got \"tokens/s\"");
  CHECK(error_of(edit("[fabric.host.gpus=2]", "[fabric.host.gpus]")) ==
        "case.yaml:9:9: scenario.set.0: expected dotted.path=value, got \"fabric.host.gpus\"");
  CHECK(error_of(edit("{collective: all_reduce, ranks: 2}", "{run: step_time_s, ranks: 2}")) ==
        "case.yaml:10:35: metric.ranks: expected only with \"collective\"");
  CHECK(error_of(edit("collective: all_reduce", "collective: allreduce"))
            .find("case.yaml:10:22: metric.collective: ") == 0);
}

TEST_CASE("an inexpressible case needs no scenario, metric or value") {
  const std::string text = R"(id: gb200
group: collectives
source: a README
hardware: GB200 NVL72
software: NCCL
conditions: 72 GPUs
inexpressible: no GB200 preset
tolerance: {relative: 0.2, reason: a test}
measured:
  - {quantity: busbw at 1 GiB, unit: GB/s}
)";
  const ValidationCase c = load_validation_case_text(text, "case.yaml", ".");
  CHECK(c.inexpressible == "no GB200 preset");
  CHECK_FALSE(c.metric);
  CHECK_FALSE(c.measured.at(0).value);
  CHECK(error_of(edit("inexpressible: no GB200 preset\n", "", text)) ==
        "case.yaml:1:1: scenario: missing required key \"scenario\"");
}

TEST_CASE("a scenario file resolves against the case's folder, then its parent") {
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / "syncsim-validation-case-test";
  fs::remove_all(root);
  fs::create_directories(root / "validation");
  fs::create_directories(root / "scenarios");
  std::ofstream(root / "scenarios" / "s.yaml") << "name: s\n";
  const std::string text = edit(
      "inline: {name: t, fidelity: analytic, fabric: {topology: "
      "spine_leaf}}",
      "file: scenarios/s.yaml");
  std::ofstream(root / "validation" / "a.yaml") << text;
  std::ofstream(root / "validation" / "b.yaml") << text;  // the same id again
  const ValidationCase c =
      load_validation_case_text(text, "case.yaml", (root / "validation").string());
  CHECK(*c.scenario_file == (root / "scenarios" / "s.yaml").string());
  CHECK(error_of(edit("scenarios/s.yaml", "scenarios/none.yaml", text))
            .find("case.yaml:8:9: scenario.file: expected a scenario file") == 0);
  try {
    (void)load_validation_suite((root / "validation").string());
    FAIL("a duplicate id loaded");
  } catch (const ScenarioError& e) {
    CHECK(std::string(e.what()).find("b.yaml:1:5: id: duplicate case id \"tiny-allreduce\"") !=
          std::string::npos);
  }
  fs::remove_all(root);
}
