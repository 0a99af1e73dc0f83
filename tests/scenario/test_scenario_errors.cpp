// Scenario loading: one test per error class, each asserting the exact file:line:col and dotted
// path, plus the positive paths (default scenario, --set, seed override).
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

#include <string>
#include <vector>

#include "scenario/default_scenario.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::Bandwidth;
using syncsim::Bytes;
using syncsim::Fidelity;
using syncsim::Time;
using syncsim::app::load_default_scenario;
using syncsim::app::load_scenario_file;
using syncsim::app::load_scenario_text;
using syncsim::app::LoadOptions;
using syncsim::app::Override;
using syncsim::app::parse_override;
using syncsim::app::Scenario;
using syncsim::app::ScenarioError;
namespace models = syncsim::models;
namespace topo = syncsim::topo;

namespace {

// 8 GPU ranks: 2 leaves x 2 hosts x 2 GPUs. Line numbers below refer to this text.
const std::string kBase = R"(name: t
seed: 5
fabric:
  topology: spine_leaf
  spine_leaf:
    leaves: 2
    hosts_per_leaf: 2
    spines: 2
  host:
    gpus: 2
    nics: 2
  links:
    host: {bandwidth: 400Gbps, delay: 500ns}
traffic:
  - pattern: ring_shift
    size: 1MiB
)";

// `base` with the one line equal to `line` replaced by `replacement` (which may span lines, or be
// empty to delete the line).
std::string edit(const std::string& line, const std::string& replacement,
                 const std::string& base = kBase) {
  const std::string needle = line + "\n";
  const std::size_t at = base.find(needle);
  REQUIRE_MESSAGE(at != std::string::npos, "no line " << line);
  std::string out = base;
  out.replace(at, needle.size(), replacement.empty() ? "" : replacement + "\n");
  return out;
}

// The full message of the ScenarioError thrown while loading, or "<no error>".
std::string error_of(const std::string& yaml, const LoadOptions& options = {}) {
  return syncsim::testing::scenario_error_of(yaml, options);
}

LoadOptions with_set(std::vector<Override> overrides) {
  return LoadOptions{.overrides = std::move(overrides), .seed = std::nullopt};
}

}  // namespace

TEST_CASE("scenario: the base snippet loads") {
  const Scenario s = load_scenario_text(kBase, "t.yaml");
  CHECK(s.name == "t");
  CHECK(s.source == "t.yaml");
  CHECK(s.seed == 5);
  CHECK(s.fidelity == Fidelity::Packet);
  CHECK(s.fabric.kind == topo::TopologyKind::SpineLeaf);
  CHECK(s.fabric.spine_leaf.spines == 2u);
  CHECK_FALSE(s.fabric.spine_leaf.oversubscription.has_value());
  CHECK(s.fabric.links.host.bandwidth == Bandwidth::gbps(400));
  CHECK(s.fabric.links.host.delay == Time::ns(500));
  CHECK(s.fabric.links.host.name == "host");
  CHECK(s.fabric.links.fabric.bandwidth == topo::LinkClasses{}.fabric.bandwidth);  // default kept
  REQUIRE(s.traffic.size() == 1);
  CHECK(s.traffic[0].pattern == models::TrafficPattern::RingShift);
  CHECK(s.traffic[0].size == Bytes{1 << 20});
  CHECK(s.traffic[0].shift == 1);
}

TEST_CASE("scenario: malformed YAML reports the parser's position") {
  CHECK(error_of(edit("    host: {bandwidth: 400Gbps, delay: 500ns}",
                      "    host: {bandwidth: 400Gbps, delay: 500ns")) ==
        "t.yaml:14:8: end of map flow not found");
  CHECK(error_of(edit("    leaves: 2", "    leaves: 2\n   bad: 1")) ==
        "t.yaml:7:4: end of map not found");
}

TEST_CASE("scenario: unknown keys are errors at every level") {
  CHECK(error_of(edit("seed: 5", "sede: 5")) ==
        "t.yaml:2:1: sede: unknown key \"sede\"; expected one of: name, seed, fidelity, fabric, "
        "traffic, collective, workload, jobs, compare_alone, sweep, observe, report, faults");
  CHECK(error_of(edit("    spines: 2", "    spinez: 2")) ==
        "t.yaml:8:5: fabric.spine_leaf.spinez: unknown key \"spinez\"; expected one of: leaves, "
        "hosts_per_leaf, spines, uplinks_per_spine, oversubscription");
  CHECK(error_of(edit("    host: {bandwidth: 400Gbps, delay: 500ns}",
                      "    host: {bandwidth: 400Gbps, dealy: 500ns}")) ==
        "t.yaml:13:32: fabric.links.host.dealy: unknown key \"dealy\"; expected one of: bandwidth, "
        "delay, mtu, header, preset");
  // A key valid for another pattern is still unknown for this one.
  CHECK(error_of(edit("    size: 1MiB", "    size: 1MiB\n    senders: 2")) ==
        "t.yaml:17:5: traffic.0.senders: unknown key \"senders\" for pattern ring_shift; expected "
        "one of: pattern, size, start, priority, shift");
  CHECK(error_of(edit("    leaves: 2", "    leaves: 2\n    leaves: 3")) ==
        "t.yaml:7:5: fabric.spine_leaf.leaves: duplicate key \"leaves\" (first given on line 6)");
}

TEST_CASE("scenario: a bare number where a unit is needed") {
  CHECK(error_of(edit("    host: {bandwidth: 400Gbps, delay: 500ns}",
                      "    host: {bandwidth: 400, delay: 500ns}")) ==
        "t.yaml:13:23: fabric.links.host.bandwidth: expected a bandwidth like \"400Gbps\", got "
        "\"400\"");
  CHECK(error_of(edit("    size: 1MiB", "    size: 1.5")) ==
        "t.yaml:16:11: traffic.0.size: expected a size like \"64MiB\", got \"1.5\"");
}

TEST_CASE("scenario: wrong types name what was expected and what was found") {
  CHECK(error_of(edit("    leaves: 2", "    leaves: [1, 2]")) ==
        "t.yaml:6:13: fabric.spine_leaf.leaves: expected a non-negative integer, got a sequence");
  CHECK(error_of(edit("    leaves: 2", "    leaves: 1.5")) ==
        "t.yaml:6:13: fabric.spine_leaf.leaves: expected a non-negative integer, got \"1.5\"");
  CHECK(error_of(edit("    leaves: 2", "    leaves: -2")) ==
        "t.yaml:6:13: fabric.spine_leaf.leaves: expected a non-negative integer, got \"-2\"");
  CHECK(error_of(edit("  host:", "  host: 4", edit("    gpus: 2", "", edit("    nics: 2", "")))) ==
        "t.yaml:9:9: fabric.host: expected a map, got \"4\"");
  CHECK(error_of(edit("name: t", "name: {first: t}")) ==
        "t.yaml:1:7: name: expected a string, got a map");
  CHECK(error_of(edit("  topology: spine_leaf", "  topology: torus")) ==
        "t.yaml:4:13: fabric.topology: expected one of: spine_leaf, fat_tree, rail_optimized; got "
        "\"torus\"");
  CHECK(error_of(edit("  - pattern: ring_shift", "  - pattern: ring_shift\n    priority: 8")) ==
        "t.yaml:16:15: traffic.0.priority: expected an integer in 0..7, got 8");
  CHECK(error_of(edit("seed: 5", "seed: 18446744073709551616")) ==
        "t.yaml:2:7: seed: expected an integer in 0..18446744073709551615, got "
        "18446744073709551616");
  CHECK(error_of(edit("  - pattern: ring_shift", "  pattern: ring_shift",
                      edit("    size: 1MiB", "  size: 1MiB"))) ==
        "t.yaml:15:3: traffic: expected a sequence of traffic entries, got a map");
  CHECK(error_of("") == "t.yaml:1:1: expected a map, got nothing (null)");
}

TEST_CASE("scenario: a missing required key is reported at its parent") {
  CHECK(error_of(edit("name: t", "")) == "t.yaml:1:1: name: missing required key \"name\"");
  // The fabric map starts at its first remaining key.
  CHECK(error_of(edit("  topology: spine_leaf", "")) ==
        "t.yaml:4:3: fabric.topology: missing required key \"topology\"");
  CHECK(error_of(edit("    size: 1MiB", "")) ==
        "t.yaml:15:5: traffic.0.size: missing required key \"size\"");
  CHECK(error_of(edit("    size: 1MiB", "    size: 1MiB\n  - size: 2MiB")) ==
        "t.yaml:17:5: traffic.1.pattern: missing required key \"pattern\"");
}

TEST_CASE("scenario: 0 spines points at fabric.spine_leaf.spines") {
  const std::string e = error_of(edit("    spines: 2", "    spines: 0"));
  CHECK(e.starts_with("t.yaml:8:13: fabric.spine_leaf.spines: "));
  CHECK(e.find("expected at least 1 spine") != std::string::npos);
}

TEST_CASE("scenario: impossible hosts and oversubscription point at the parameter") {
  CHECK(error_of(edit("    hosts_per_leaf: 2", "    hosts_per_leaf: 0"))
            .starts_with("t.yaml:7:21: fabric.spine_leaf.hosts_per_leaf: "));
  CHECK(error_of(edit("    spines: 2", "    oversubscription: 0"))
            .starts_with("t.yaml:8:23: fabric.spine_leaf.oversubscription: "));
  CHECK(error_of(edit("    spines: 2", "    spines: 2\n    oversubscription: 2"))
            .starts_with("t.yaml:9:23: fabric.spine_leaf.oversubscription: "));
  CHECK(error_of(edit("    spines: 2", "    oversubscription: abc")) ==
        "t.yaml:8:23: fabric.spine_leaf.oversubscription: expected a finite number, got \"abc\"");
  // Too many hosts to number: the builder blames the whole section, so the map is the position.
  CHECK(error_of(edit("    leaves: 2", "    leaves: 100000",
                      edit("    hosts_per_leaf: 2", "    hosts_per_leaf: 100000")))
            .starts_with("t.yaml:6:5: fabric.spine_leaf: "));
  // A defaulted parameter (cores = 2, not written) is reported at the block that should hold it.
  CHECK(error_of(
            edit("  topology: spine_leaf", "  topology: fat_tree\n  fat_tree: {spines_per_pod: 3}"))
            .starts_with("t.yaml:5:13: fabric.fat_tree.cores: "));
  CHECK(error_of(
            edit("  topology: spine_leaf", "  topology: fat_tree\n  fat_tree: {k: 4, pods: 4}")) ==
        "t.yaml:5:26: fabric.fat_tree.pods: expected either k or explicit counts, got k = 4 and "
        "pods = 4");
}

TEST_CASE("scenario: a traffic pattern larger than the fabric") {
  CHECK(
      error_of(edit("  - pattern: ring_shift", "  - pattern: incast\n    senders: 8"))
          .starts_with("t.yaml:16:14: traffic.0.senders: 8 senders on distinct hosts do not fit"));
  CHECK(error_of(edit("  - pattern: ring_shift", "  - pattern: incast\n    senders: 3")) ==
        "<no error>");
  // 4 hosts: by default one sender on each of the other 3.
  CHECK(error_of(edit("  - pattern: ring_shift", "  - pattern: incast\n    senders: 4")) ==
        "t.yaml:16:14: traffic.0.senders: 4 senders on distinct hosts do not fit: the fabric has 4 "
        "hosts, so an incast into rank 0 has 1..3 (sender_placement: consecutive takes ranks on "
        "any host)");
  CHECK(error_of(edit("  - pattern: ring_shift",
                      "  - pattern: incast\n    senders: 7\n    sender_placement: consecutive")) ==
        "<no error>");
  CHECK(error_of(edit("  - pattern: ring_shift",
                      "  - pattern: incast\n    senders: 3\n    sender_placement: nearby")) ==
        "t.yaml:17:23: traffic.0.sender_placement: expected one of: distinct_hosts, consecutive; "
        "got \"nearby\"");
  CHECK(error_of(edit("  - pattern: ring_shift", "  - pattern: ring_shift\n    shift: 16"))
            .starts_with("t.yaml:16:12: traffic.0.shift: "));
  const std::string explicit_traffic =
      "  - pattern: messages\n"
      "    messages:\n"
      "      - {src: 0, dst: 7, size: 1KiB}\n"
      "      - {src: 1, dst: 8, size: 1KiB}";
  CHECK(error_of(edit("  - pattern: ring_shift", explicit_traffic, edit("    size: 1MiB", "")))
            .starts_with("t.yaml:18:23: traffic.0.messages.1.dst: GPU rank 8 is out of range"));
}

TEST_CASE("scenario: priorities must have a switch queue") {
  const std::string yaml = edit("  host:", "  switch: {priorities: 2}\n  host:");
  CHECK(error_of(yaml) == "<no error>");
  CHECK(error_of(yaml + "  - pattern: all_to_all\n    size: 1KiB\n    priority: 2\n") ==
        "t.yaml:20:15: traffic.1.priority: expected a priority in 0..1 (fabric.switch.priorities "
        "is 2), got 2");
}

TEST_CASE("scenario: --set changes values before they are read") {
  const Scenario s =
      load_scenario_text(kBase, "t.yaml",
                         with_set({{"fabric.spine_leaf.leaves", "8"},
                                   {"traffic.0.size", "1MiB"},
                                   {"traffic.0.shift", "-3"},
                                   {"fidelity", "analytic"},
                                   {"fabric.links.fabric", "{bandwidth: 800Gbps, mtu: 9000B}"},
                                   {"fabric.ecmp.per_switch_salt", "true"}}));
  CHECK(s.fabric.spine_leaf.leaves == 8);
  CHECK(s.traffic[0].size == Bytes{1 << 20});
  CHECK(s.traffic[0].shift == -3);
  CHECK(s.fidelity == Fidelity::Analytic);
  CHECK(s.fabric.links.fabric.bandwidth == Bandwidth::gbps(800));
  CHECK(s.fabric.links.fabric.mtu == Bytes{9000});
  CHECK(s.fabric.links.fabric.name == "fabric");
  CHECK(s.fabric.ecmp_per_switch_salt);
  // null clears an optional value.
  CHECK_FALSE(load_scenario_text(kBase, "t.yaml", with_set({{"fabric.spine_leaf.spines", "null"}}))
                  .fabric.spine_leaf.spines.has_value());
}

TEST_CASE("scenario: seed comes from the file, --set, or LoadOptions.seed, last wins") {
  CHECK(load_scenario_text(kBase, "t.yaml").seed == 5);
  CHECK(load_scenario_text(kBase, "t.yaml", with_set({{"seed", "7"}})).seed == 7);
  LoadOptions options = with_set({{"seed", "7"}});
  options.seed = 42;
  CHECK(load_scenario_text(kBase, "t.yaml", options).seed == 42);
  CHECK(load_scenario_text(edit("seed: 5", ""), "t.yaml").seed == 1);  // the default
}

TEST_CASE("scenario: bad --set paths") {
  CHECK(error_of(kBase, with_set({{"name.first", "x"}})) ==
        "--set:1:1: name.first: cannot set \"name.first\": name is \"t\", not a map or sequence");
  CHECK(
      error_of(kBase, with_set({{"traffic.3.size", "1MiB"}})) ==
      "--set:1:1: traffic.3.size: cannot set \"traffic.3.size\": index 3 is out of range, traffic "
      "has 1 entries");
  CHECK(error_of(kBase, with_set({{"traffic.first.size", "1MiB"}})) ==
        "--set:1:1: traffic.first.size: cannot set \"traffic.first.size\": traffic is a sequence, "
        "so the next path component must be an index, got \"first\"");
  // A typo creates a key, which is then unknown: the error points at --set, not the file.
  CHECK(error_of(kBase, with_set({{"fabric.spine_leaf.spinez", "2"}})) ==
        "--set:1:1: fabric.spine_leaf.spinez: unknown key \"spinez\"; expected one of: leaves, "
        "hosts_per_leaf, spines, uplinks_per_spine, oversubscription");
  CHECK(error_of(kBase, with_set({{"fabrik.leaves", "2"}}))
            .starts_with("--set:1:1: fabrik: unknown key"));
}

TEST_CASE("scenario: malformed --set arguments") {
  const Override o = parse_override("fabric.spine_leaf.leaves=8");
  CHECK(o.path == "fabric.spine_leaf.leaves");
  CHECK(o.value == "8");
  CHECK(parse_override("name=a=b").value == "a=b");
  const auto message = [](const std::string& arg) {
    try {
      parse_override(arg);
    } catch (const ScenarioError& e) {
      CHECK(e.file() == "--set");
      return std::string(e.what());
    }
    return std::string("<no error>");
  };
  CHECK(message("fabric.host") == "--set: expected dotted.path=value, got \"fabric.host\"");
  CHECK(message("a..b=1") ==
        "--set: expected dotted.path=value with non-empty path components, got \"a..b=1\"");
  CHECK(message("=1") ==
        "--set: expected dotted.path=value with non-empty path components, got \"=1\"");
}

TEST_CASE("scenario: bad --set values point at --set") {
  CHECK(error_of(kBase, with_set({{"fabric.spine_leaf.leaves", "many"}})) ==
        "--set:1:1: fabric.spine_leaf.leaves: expected a non-negative integer, got \"many\"");
  CHECK(error_of(kBase, with_set({{"traffic.0.size", "400"}})) ==
        "--set:1:1: traffic.0.size: expected a size like \"64MiB\", got \"400\"");
  // Inside a structured value, the column is the position within the value.
  CHECK(error_of(kBase, with_set({{"fabric.host", "{gpus: 2, nics: x}"}})) ==
        "--set:1:17: fabric.host.nics: expected a non-negative integer, got \"x\"");
  CHECK(error_of(kBase, with_set({{"fabric.host", "{gpus: 2"}})) ==
        "--set:1:1: fabric.host: invalid YAML value \"{gpus: 2\": end of map flow not found");
  // Errors found after reading (builder, traffic) also point at --set.
  CHECK(error_of(kBase, with_set({{"fabric.spine_leaf.spines", "0"}}))
            .starts_with("--set:1:1: fabric.spine_leaf.spines: expected at least 1 spine"));
  CHECK(error_of(kBase, with_set({{"fabric.topology", "fat_tree"}, {"fabric.fat_tree.k", "3"}}))
            .starts_with("--set:1:1: fabric.fat_tree.k: "));
  // A missing key below a map made by --set: the map's mark is its opening brace.
  CHECK(error_of(kBase, with_set({{"traffic.0", "{pattern: incast, size: 1KiB}"}})) ==
        "--set:1:1: traffic.0.senders: missing required key \"senders\"");
}

TEST_CASE("scenario: the built-in default loads") {
  const Scenario s = load_default_scenario();
  CHECK(s.name == "default");
  CHECK(s.source == "<built-in default>");
  CHECK(s.seed == 1);
  CHECK(s.fidelity == syncsim::Fidelity::Flow);
  CHECK(s.fabric.kind == topo::TopologyKind::RailOptimized);
  CHECK(s.fabric.rail.hosts_per_group == 16);
  CHECK(s.fabric.host.gpus == 8);
  CHECK(s.fabric.host.nics == 8);
  CHECK(s.fabric.links.host.bandwidth == Bandwidth::gbps(400));
  REQUIRE(s.workload.has_value());
  CHECK(s.workload->step.model.name == "llama3-8b");
  CHECK(s.workload->step.gpu.name == "h100");
  CHECK(s.workload->step.ddp.bucket_cap == Bytes{25 << 20});
  CHECK(s.workload->step.ddp.first_bucket == Bytes{1 << 20});
  CHECK(s.traffic.empty());

  // The file on disk is the same text.
  const Scenario f = load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/default.yaml");
  CHECK(f.source == SYNCSIM_SOURCE_DIR "/scenarios/default.yaml");
  CHECK(f.fabric.rail.hosts_per_group == s.fabric.rail.hosts_per_group);
}

TEST_CASE("scenario: the ring-shift traffic scenario loads") {
  const std::string file = SYNCSIM_SOURCE_DIR "/scenarios/ring-shift-8gpu.yaml";
  const Scenario s = load_scenario_file(file);
  CHECK(s.name == "ring-shift-8gpu");
  CHECK(s.fabric.kind == topo::TopologyKind::SpineLeaf);
  CHECK(s.fabric.spine_leaf.leaves == 4);
  CHECK(s.fabric.spine_leaf.oversubscription == 2.0);
  CHECK(s.fabric.host.gpus == 8);
  CHECK(s.fabric.links.host.bandwidth == Bandwidth::gbps(400));
  CHECK(s.fabric.links.fabric.delay == Time::us(1));
  CHECK(s.fabric.links.nvlink.bandwidth ==
        Bandwidth::bps(2'966'400'000'000));  // h100: 18 x 20.6 GB/s
  CHECK(s.fabric.switch_params.buffer == Bytes{64 << 20});
  CHECK(s.fabric.switch_params.priorities == 8);
  REQUIRE(s.traffic.size() == 2);
  CHECK(s.traffic[0].shift == 8);
  CHECK(s.traffic[0].size == Bytes{8 << 20});
  CHECK(s.traffic[0].priority == 3);
  REQUIRE(s.traffic[1].messages.size() == 4);
  CHECK(s.traffic[1].messages[3].dst_gpu == 7);
  CHECK(s.traffic[1].messages[3].size == Bytes{32 << 20});
  CHECK_FALSE(s.workload.has_value());

  // Sweeping spines means dropping the ratio the scenario derives them from.
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(error_of(text, with_set({{"fabric.spine_leaf.spines", "4"}}))
            .starts_with("t.yaml:16:23: fabric.spine_leaf.oversubscription: "));
  const Scenario swept =
      load_scenario_file(file, with_set({{"fabric.spine_leaf.spines", "4"},
                                         {"fabric.spine_leaf.oversubscription", "null"}}));
  CHECK(swept.fabric.spine_leaf.spines == 4u);
}

TEST_CASE("scenario: a sweep block lists axes; bad ones name the path") {
  const std::string base = R"(name: s
fabric: {topology: spine_leaf}
traffic: [{pattern: all_to_all, size: 1KiB}]
)";
  const Scenario ok = load_scenario_text(
      base + "sweep: {fabric.links.host.bandwidth: [100Gbps, 400Gbps]}\n", "t.yaml");
  REQUIRE(ok.sweep.size() == 1);
  CHECK(ok.sweep[0].path == "fabric.links.host.bandwidth");
  CHECK(ok.sweep[0].values == std::vector<std::string>{"100Gbps", "400Gbps"});
  CHECK(ok.sweep[0].labels.empty());
  CHECK(error_of(base + "sweep: {seed: [1]}\n", {})
            .starts_with("t.yaml:4:15: sweep.seed: expected a list of at least two values"));
  CHECK(error_of(base + "sweep: [1, 2]\n", {}).starts_with("t.yaml:4:8: sweep: expected a map"));
  // Named values: any YAML, kept as flow text; the column shows the label.
  const Scenario named = load_scenario_text(
      base +
          "sweep:\n  traffic.0:\n    small: {pattern: all_to_all, size: 1KiB}\n    big: {pattern: "
          "incast, senders: 3, receiver: 0, size: 1MiB}\n",
      "t.yaml");
  REQUIRE(named.sweep.size() == 1);
  CHECK(named.sweep[0].labels == std::vector<std::string>{"small", "big"});
  REQUIRE(named.sweep[0].values.size() == 2);
  CHECK(named.sweep[0].values[0] == "{pattern: all_to_all, size: 1KiB}");
  CHECK(error_of(base + "sweep: {traffic.0: [{pattern: all_to_all}, {pattern: incast}]}\n", {})
            .starts_with("t.yaml:4:21: sweep.traffic.0.0: expected a scalar value (name non-scalar "
                         "values: {label: value, ...})"));
  CHECK(
      error_of(base + "sweep: {traffic.0: {a: 1}}\n", {})
          .starts_with("t.yaml:4:20: sweep.traffic.0: expected a list of at least two values or a "
                       "map"));
}

TEST_CASE("scenario: workload errors name the path") {
  const std::string base = R"(name: w
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
workload:
  model: llama3-8b
)";
  CHECK(error_of(base + "  gpu: tpu\n", {})
            .starts_with("t.yaml:7:8: workload.gpu: expected a GPU preset"));
  CHECK(error_of(base + "  data_parallel: 9\n", {})
            .starts_with(
                "t.yaml:7:18: workload.data_parallel: expected at most the fabric's 4 GPUs"));
  CHECK(error_of(base + "  ddp: {bucket_cap: 25MiB}\n", {})
            .starts_with("t.yaml:7:9: workload.ddp.bucket_cap: unknown key \"bucket_cap\""));
  CHECK(error_of(base + "  algorithm: pairwise\n", {})
            .starts_with("t.yaml:7:14: workload.algorithm: "));
  CHECK(error_of(R"(name: w
fabric: {topology: spine_leaf}
workload: {model: gpt5}
)",
                 {})
            .starts_with("t.yaml:3:19: workload.model: expected a model preset"));
  const Scenario ok = load_scenario_text(base + "  ddp: {bucket_cap_mb: 100}\n", "t.yaml");
  CHECK(ok.workload->step.ddp.bucket_cap == Bytes{100 << 20});
}

TEST_CASE("scenario: files from tests/data report their own path") {
  const std::string dir = SYNCSIM_TEST_DATA_DIR;
  CHECK(load_scenario_file(dir + "/scenario_minimal.yaml").traffic.size() == 2);
  try {
    load_scenario_file(dir + "/scenario_bad_delay.yaml");
    FAIL("expected a ScenarioError");
  } catch (const ScenarioError& e) {
    CHECK(e.file() == dir + "/scenario_bad_delay.yaml");
    CHECK(e.line() == 9);
    CHECK(e.column() == 14);
    CHECK(e.path() == "fabric.links.fabric.delay");
    CHECK(e.message() == "expected a time like \"1.5us\", got \"2\"");
  }
  try {
    load_scenario_file(dir + "/does_not_exist.yaml");
    FAIL("expected a ScenarioError");
  } catch (const ScenarioError& e) {
    CHECK(e.file() == dir + "/does_not_exist.yaml");
    CHECK(e.line() == 0);
    CHECK(e.path().empty());
    CHECK(std::string(e.what()) ==
          dir + "/does_not_exist.yaml: cannot read file: No such file or directory");
  }
}

TEST_CASE("scenario: PFC and ECN keys are checked with their ranges") {
  const auto with_switch = [](const std::string& line) {
    return edit("  host:", "  switch:\n    " + line + "\n  host:");
  };
  CHECK(error_of(with_switch("pfc: {enabled: true, bogus: 1}")) ==
        "t.yaml:10:26: fabric.switch.pfc.bogus: unknown key \"bogus\"; expected one of: enabled, "
        "lossless_priorities, threshold, xon_offset, headroom, response_time, "
        "deadlock_detection_time, watchdog, pause_quanta");
  CHECK(error_of(with_switch("ecn: {enabled: true, kmin: 400KB, kmax: 100KB}")) ==
        "t.yaml:10:45: fabric.switch.ecn.kmax: expected kmax at or above kmin (400000 B), got "
        "100000 B");
  CHECK(error_of(with_switch("ecn: {enabled: true, kmin: 40KB, kmax: 100KB, pmax: 0}")) ==
        "t.yaml:10:57: fabric.switch.ecn.pmax: expected 0 < pmax <= 1, got 0");
  CHECK(
      error_of(with_switch("ecn: {enabled: true, kmin: 40KB}")) ==
      "t.yaml:10:10: fabric.switch.ecn.kmax: missing key \"kmax\": give kmin and kmax together (or "
      "neither, for the RoCE defaults 150KB and 1.5MB)");
  CHECK(error_of(with_switch("ecn: {mark_on: sometimes}")) ==
        "t.yaml:10:20: fabric.switch.ecn.mark_on: expected one of: dequeue, enqueue; got "
        "\"sometimes\"");
  CHECK(
      error_of(with_switch("pfc: {enabled: true, threshold: {static: 10KB}, xon_offset: 20KB}")) ==
      "t.yaml:10:65: fabric.switch.pfc.xon_offset: expected xon_offset <= the static XOFF "
      "threshold "
      "(10000 B) so that 0 <= XON < XOFF, got 20000 B");
  CHECK(error_of(
            with_switch("pfc: {enabled: true, threshold: {static: 10KB, dynamic_alpha: 0.5}}")) ==
        "t.yaml:10:37: fabric.switch.pfc.threshold: expected exactly one of: static (bytes), "
        "dynamic_alpha (a fraction of the free shared buffer)");
  CHECK(error_of(with_switch("pfc: {enabled: true, threshold: {dynamic_alpha: 0}}")) ==
        "t.yaml:10:53: fabric.switch.pfc.threshold.dynamic_alpha: expected 0 < dynamic_alpha <= 16 "
        "(HPCC uses 0.125), got 0");
  CHECK(
      error_of(with_switch("pfc: {enabled: true, lossless_priorities: [9]}")) ==
      "t.yaml:10:48: fabric.switch.pfc.lossless_priorities.0: expected an integer in 0..7, got 9");
  CHECK(error_of(with_switch("pfc: {enabled: true, lossless_priorities: []}")) ==
        "t.yaml:10:47: fabric.switch.pfc.lossless_priorities: expected a non-empty list of "
        "priorities "
        "like [3], got []");
  CHECK(error_of(with_switch("pfc: {enabled: true, headroom: lots}"))
            .rfind("t.yaml:10:36: fabric.switch.pfc.headroom: expected auto or a size like "
                   "\"64KiB\", got "
                   "\"lots\"",
                   0) == 0);
  // The default lossless priority (3) needs a queue.
  CHECK(error_of(edit("  host:", "  switch: {priorities: 2, pfc: {enabled: true}}\n  host:")) ==
        "t.yaml:9:32: fabric.switch.pfc.lossless_priorities: expected lossless priorities in 0..1 "
        "(fabric.switch.priorities is 2)");

  const Scenario s = load_scenario_text(
      with_switch("pfc: {enabled: true, lossless_priorities: [3, 5], threshold: {static: 200KB}, "
                  "xon_offset: 20KB, headroom: 64KB, response_time: 2us}"),
      "t.yaml");
  CHECK(s.network.pfc.enabled);
  CHECK(s.network.pfc.lossless_mask == ((1U << 3) | (1U << 5)));
  CHECK_FALSE(s.network.pfc.dynamic_threshold);
  CHECK(s.network.pfc.static_xoff == Bytes{200'000});
  CHECK(s.network.pfc.xon_offset == Bytes{20'000});
  CHECK_FALSE(s.network.pfc.headroom_auto);
  CHECK(s.network.pfc.headroom == Bytes{64'000});
  CHECK(s.network.pfc.response_time == Time::us(2));
  CHECK_FALSE(s.network.ecn.enabled);  // off unless asked for
}
