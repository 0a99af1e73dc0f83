// --set null / --unset (removing keys), what a directory or an empty file given as a scenario
// reports, and fabric-only scenarios for commands that bring their own traffic.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::app::load_scenario_file;
using syncsim::app::load_scenario_text;
using syncsim::app::LoadOptions;
using syncsim::app::Override;
using syncsim::app::Scenario;
using syncsim::app::ScenarioError;
using syncsim::app::unset_override;
using syncsim::testing::scenario_error_of;
namespace models = syncsim::models;

namespace {

// 8 GPUs on 2 leaves; an FSDP workload. Line numbers below refer to this text.
const std::string kFsdp = R"(name: fsdp
fidelity: analytic
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  host: {gpus: 2, nics: 2}
workload:
  model: gpt3-1.3b
  parallelism: fsdp
  fsdp: {layers_per_unit: 2, streams: shared}
)";

// 4 GPUs and one traffic entry; line 7 is the entry.
const std::string kTraffic = R"(name: t
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
traffic:
  - pattern: ring_shift
    size: 1MiB
)";

LoadOptions with_set(std::vector<Override> overrides) {
  LoadOptions o;
  o.overrides = std::move(overrides);
  return o;
}

// A fresh folder for files, removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string file(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

}  // namespace

TEST_CASE("scenario: --set path=null removes a key, so a sweep can switch FSDP to DDP") {
  // Setting parallelism alone is refused: the file's fsdp block is still there.
  CHECK(scenario_error_of(kFsdp, with_set({{"workload.parallelism", "ddp"}})) ==
        "t.yaml:10:9: workload.fsdp: an fsdp block needs workload.parallelism: fsdp, got ddp");
  const Scenario s = load_scenario_text(kFsdp, "t.yaml",
                                        with_set({{"workload.fsdp", "null"},
                                                  {"workload.parallelism", "ddp"},
                                                  {"workload.ddp", "{bucket_cap_mb: 50}"}}));
  REQUIRE(s.workload.has_value());
  CHECK(s.workload->step.parallelism == models::DataParallelism::Ddp);
  CHECK(s.workload->step.ddp.bucket_cap == syncsim::Bytes{50 << 20});
  // Removing `parallelism` gives its default (ddp) as well; --unset is the same as =null.
  const Scenario u = load_scenario_text(
      kFsdp, "t.yaml",
      with_set({unset_override("workload.fsdp"), unset_override("workload.parallelism")}));
  CHECK(u.workload->step.parallelism == models::DataParallelism::Ddp);
  // `~` and an empty value are YAML nulls too.
  CHECK(load_scenario_text(kFsdp, "t.yaml",
                           with_set({{"workload.fsdp", "~"}, {"workload.parallelism", ""}}))
            .workload->step.parallelism == models::DataParallelism::Ddp);
}

TEST_CASE("scenario: removing a key reads as if the file never had it") {
  // A whole section: without a workload, traffic is required again.
  CHECK(scenario_error_of(kFsdp, with_set({{"workload", "null"}})) ==
        "t.yaml:1:1: traffic: missing required key \"traffic\"");
  // A required key is then missing, reported at its parent in the file.
  CHECK(scenario_error_of(kTraffic, with_set({unset_override("traffic.0.size")})) ==
        "t.yaml:6:5: traffic.0.size: missing required key \"size\"");
  // A key (or a map above it) that is not there: nothing to do, so one sweep value fits all.
  CHECK(load_scenario_text(
            kTraffic, "t.yaml",
            with_set({unset_override("workload.fsdp"), unset_override("fabric.links.core")}))
            .traffic.size() == 1);
  // A removed key can be written again afterwards.
  CHECK(load_scenario_text(kTraffic, "t.yaml",
                           with_set({unset_override("traffic.0.size"), {"traffic.0.size", "2KiB"}}))
            .traffic[0]
            .size == syncsim::Bytes{2048});
}

TEST_CASE("scenario: keys that cannot be removed") {
  CHECK(scenario_error_of(kTraffic, with_set({unset_override("name.first")})) ==
        "--set:1:1: name.first: cannot unset \"name.first\": name is \"t\", not a map or sequence");
  CHECK(scenario_error_of(kTraffic, with_set({unset_override("traffic.0")})) ==
        "--set:1:1: traffic.0: cannot unset \"traffic.0\": the entries of a sequence cannot be "
        "removed; set traffic to the whole sequence instead");
  CHECK(scenario_error_of(kTraffic, with_set({unset_override("traffic.4.size")})) ==
        "--set:1:1: traffic.4.size: cannot unset \"traffic.4.size\": index 4 is out of range, "
        "traffic has 1 entries");
  CHECK(scenario_error_of(kTraffic, with_set({unset_override("traffic.x")})) ==
        "--set:1:1: traffic.x: cannot unset \"traffic.x\": traffic is a sequence, so the next "
        "path component must be an index, got \"x\"");
  std::string message;
  try {
    unset_override("a..b");
  } catch (const ScenarioError& e) {
    message = e.what();
  }
  CHECK(message ==
        "--set: expected --unset dotted.path with non-empty path components, got \"a..b\"");
}

TEST_CASE("scenario: a directory or an empty file given as a scenario says so") {
  const TempDir dir("syncsim-scenario-files");
  const auto error_of_file = [](const std::string& path) -> std::string {
    try {
      load_scenario_file(path);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "<no error>";
  };
  CHECK(error_of_file(dir.path.string()) ==
        dir.path.string() + ": expected a YAML scenario file, found a directory");
  const std::string empty = dir.file("empty.yaml", "");
  CHECK(error_of_file(empty) == empty + ": expected a YAML scenario file, found an empty file");
  const std::string blank = dir.file("blank.yaml", "\n  \n");
  CHECK(error_of_file(blank) == blank + ": expected a YAML scenario file, found an empty file");
  // Comments alone count as empty too.
  const std::string comments = dir.file("comments.yaml", "# nothing yet\n  # still nothing\n");
  CHECK(error_of_file(comments) ==
        comments + ": expected a YAML scenario file, found an empty file");
  CHECK(load_scenario_file(dir.file("ok.yaml", kTraffic)).name == "t");
}

TEST_CASE("scenario: a fabric-only scenario loads for commands that bring their own traffic") {
  const std::string fabric_only = R"(name: fabric
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 1}
)";
  CHECK(scenario_error_of(fabric_only) == "t.yaml:1:1: traffic: missing required key \"traffic\"");
  LoadOptions options;
  options.fabric_only_ok = true;
  const Scenario s = load_scenario_text(fabric_only, "t.yaml", options);
  CHECK(s.traffic.empty());
  CHECK_FALSE(s.workload.has_value());
  // Traffic given anyway is still read and checked.
  CHECK(scenario_error_of(fabric_only + "traffic: []\n", options) ==
        "t.yaml:5:10: traffic: expected at least one traffic entry, got an empty sequence");
}
