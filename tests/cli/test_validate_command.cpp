// `syncsim validate` as a function: the JSON keys the command line promises, on one small case,
// and the exit codes for a case out of tolerance, an unknown name and a bad case file.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <unistd.h>

#include "cli/command_line.hpp"
#include "cli/commands.hpp"
#include "scenario/scenario_loader.hpp"

namespace fs = std::filesystem;
using namespace syncsim::app;

namespace {

int next_suite_number = 0;

// One analytic all_reduce over 2 GPUs on one host; `measured` decides pass or fail.
std::string small_case(const std::string& busbw, const std::string& tolerance = "1000%") {
  std::string text =
      "id: small\ngroup: collectives\nsource: s\nhardware: h\nsoftware: w\nconditions: c\n"
      "scenario:\n  inline: {name: t, fidelity: analytic, fabric: {topology: spine_leaf, "
      "spine_leaf: {leaves: 1, hosts_per_leaf: 1, spines: 1}, host: {gpus: 2, nics: 1}, links: "
      "{host: {bandwidth: 400Gbps, delay: 500ns}}}}\n"
      "metric: {collective: all_reduce, ranks: 2}\ntolerance: {relative: ";
  text.append(tolerance).append(", reason: test}\nmeasured:\n  - {quantity: busbw, size: 1MiB, ");
  return text.append("value: ").append(busbw).append(", unit: GB/s}\n");
}

// Each suite gets its own folder: ctest runs these test cases as parallel processes, and a shared
// folder let one case delete the other's case file mid-run.
struct Suite {
  fs::path dir;
  explicit Suite(const std::string& text)
      : dir(fs::temp_directory_path() /
            ("syncsim-validate-command-test-" + std::to_string(::getpid()) + "-" +
             std::to_string(next_suite_number++))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(dir / "small.yaml") << text;
  }
  ~Suite() { fs::remove_all(dir); }
  Suite(const Suite&) = delete;
  Suite& operator=(const Suite&) = delete;
};

}  // namespace

TEST_CASE("syncsim validate --json: the keys of `cases` and `groups`") {
  const Suite suite(small_case("10"));
  std::ostringstream out;
  const int rc = validate_command({"--suite", suite.dir.string(), "--json"}, out);
  CHECK(rc == 0);
  const auto j = nlohmann::ordered_json::parse(out.str());
  REQUIRE(j.at("cases").size() == 1);
  std::vector<std::string> keys;
  for (const auto& [k, v] : j["cases"][0].items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"id", "group", "quantity", "unit", "measured", "predicted",
                                         "error", "tolerance", "verdict", "reason"});
  CHECK(j["cases"][0]["verdict"] == "pass");
  CHECK(j["cases"][0]["predicted"].get<double>() > 0);
  for (const char* g : {"collectives", "training_steps", "congestion"}) {
    std::vector<std::string> group_keys;
    for (const auto& [k, v] : j.at("groups").at(g).items()) group_keys.push_back(k);
    CHECK(group_keys ==
          std::vector<std::string>{"count", "mean_abs_error", "max_abs_error", "inexpressible"});
  }
  CHECK(j["groups"]["collectives"]["count"] == 1);
}

TEST_CASE("syncsim validate: exit 3 out of tolerance, usage and case-file errors") {
  {
    const Suite suite(small_case("1e6", "0.01"));  // nobody predicts 1 PB/s
    std::ostringstream out;
    CHECK(validate_command({"--suite", suite.dir.string()}, out) == 3);
    CHECK(out.str().find("small  ") != std::string::npos);
    CHECK(out.str().find("fail") != std::string::npos);
    std::ostringstream by_name;
    CHECK(validate_command({"small", "--suite", suite.dir.string()}, by_name) == 3);
    std::ostringstream none;
    CHECK_THROWS_AS(validate_command({"nope", "--suite", suite.dir.string()}, none), UsageError);
  }
  {
    const Suite suite(small_case("10") + "typo: 1\n");
    std::ostringstream out;
    CHECK_THROWS_WITH_AS(validate_command({"--suite", suite.dir.string()}, out),
                         doctest::Contains("small.yaml:13:1: typo: unknown key \"typo\""),
                         ScenarioError);
  }
}

TEST_CASE("syncsim validate --baseline: exit 4 when a value got worse than the saved run") {
  const Suite suite(small_case("10"));
  // The run's own CSV is its baseline: no regression.
  const fs::path csv = suite.dir / "base.csv";
  std::ostringstream first;
  REQUIRE(validate_command({"--suite", suite.dir.string(), "--csv", csv.string()}, first) == 0);
  std::ostringstream same;
  CHECK(validate_command({"--suite", suite.dir.string(), "--baseline", csv.string()}, same) == 0);
  CHECK(same.str().find("# baseline: 0 regression(s)") != std::string::npos);
  // A baseline whose error was far smaller: the value regressed (|error| grew > 2 points).
  std::ifstream in(csv);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  // id,group,quantity,unit,measured,predicted,error,...: replace the error field by 0.
  std::vector<std::string> f;
  std::stringstream ss(row);
  for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
  REQUIRE(f.size() == 10);
  const double error = std::stod(f[6]);
  f[6].assign(1, '0');
  std::string edited;
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (i > 0) edited.push_back(',');
    edited.append(f[i]);
  }
  const fs::path better = suite.dir / "better.csv";
  std::ofstream(better) << header << "\n" << edited << "\n";
  std::ostringstream worse;
  CHECK(validate_command({"--suite", suite.dir.string(), "--baseline", better.string()}, worse) ==
        4);
  CHECK(worse.str().find("# regression: small busbw: error +0.0%") != std::string::npos);
  // Within a wide enough allowance it is not one.
  std::ostringstream allowed;
  const std::string pts = std::to_string(std::abs(error) * 100 + 1);
  CHECK(validate_command(
            {"--suite", suite.dir.string(), "--baseline", better.string(), "--allowance", pts},
            allowed) == 0);
  std::ostringstream json;
  CHECK(validate_command({"--suite", suite.dir.string(), "--baseline", better.string(), "--json"},
                         json) == 4);
  const auto j = nlohmann::ordered_json::parse(json.str());
  REQUIRE(j.at("regressions").size() == 1);
  CHECK(j["regressions"][0]["id"] == "small");
  CHECK(j["regressions"][0]["baseline_error"].get<double>() == 0.0);
  std::ostringstream bad;
  CHECK_THROWS_AS(
      validate_command(
          {"--suite", suite.dir.string(), "--baseline", (suite.dir / "missing.csv").string()}, bad),
      UsageError);
  CHECK_THROWS_AS(validate_command({"--suite", suite.dir.string(), "--allowance", "-1"}, bad),
                  UsageError);
}
