// The result schema (run/result_schema.hpp): one table behind the JSON, the text summary, the sweep
// columns and the key table in docs/cli.md.
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "run/result_schema.hpp"
#include "run/result_text.hpp"
#include "run/runner.hpp"
#include "run/sweep.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

app::RunResult run_file(const std::string& name, std::vector<app::Override> overrides = {}) {
  app::LoadOptions load;
  load.overrides = std::move(overrides);
  load.overrides.push_back({"fidelity", "analytic"});
  return app::run_scenario(app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/" + name, load));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("result schema: paths and column names are unique; members belong to a read key") {
  std::set<std::string> paths;
  std::set<std::string> columns;
  for (const app::ResultKey& k : app::result_keys()) {
    CAPTURE(k.path);
    CHECK(paths.insert(std::string(k.path)).second);
    if (!k.column.empty()) CHECK(columns.insert(std::string(k.column)).second);
    CHECK(!k.description.empty());
    CHECK(!k.unit.empty());
    // A '|' would break the Markdown table.
    CHECK(k.description.find('|') == std::string_view::npos);
    std::size_t readers_above = 0;
    for (const app::ResultKey& other : app::result_keys()) {
      const std::string p(other.path);
      if (other.read != nullptr && (k.path.starts_with(p + ".") || k.path.starts_with(p + "[]."))) {
        ++readers_above;
      }
    }
    // A key with a reader is not inside another's value; a member without one is inside exactly
    // one.
    CHECK(readers_above == (k.read == nullptr ? 1u : 0u));
    if (k.read == nullptr) CHECK(k.column.empty());
  }
}

TEST_CASE("result schema: the sweep's default columns are schema columns") {
  for (bool step : {false, true}) {
    for (bool report : {false, true}) {
      for (const std::string& c : app::default_sweep_columns(step, report)) {
        CAPTURE(c);
        CHECK(app::find_result_column(c) != nullptr);
      }
    }
  }
  CHECK(app::find_result_column("wall_s") != nullptr);
  CHECK(app::parse_sweep_columns("mfu, fct_p99_s") == std::vector<std::string>{"mfu", "fct_p99_s"});
  CHECK_THROWS_AS(app::parse_sweep_columns("mfu,no_such_column"), app::SweepUsageError);
  CHECK_THROWS_AS(app::parse_sweep_columns("mfu,,events"), app::SweepUsageError);
  CHECK_THROWS_AS(app::parse_sweep_columns("mfu,mfu"), app::SweepUsageError);
}

TEST_CASE("result schema: docs/cli.md lists exactly the schema's keys") {
  const std::string doc = read_file(SYNCSIM_SOURCE_DIR "/docs/cli.md");
  const std::string begin = "<!-- result-keys:begin -->\n";
  const std::string end = "<!-- result-keys:end -->";
  const auto b = doc.find(begin);
  const auto e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  // Regenerate with: syncsim run --list-keys
  CHECK(doc.substr(b + begin.size(), e - b - begin.size()) == app::result_keys_markdown());
}

namespace {

// Checks `j` against the schema: every key with a reader is there exactly when present, and the
// members documented for an object or a list of objects are the keys the JSON has.
void check_against_schema(const app::RunResult& r, const nlohmann::json& j) {
  for (const app::ResultKey& k : app::result_keys()) {
    CAPTURE(k.path);
    std::string p(k.path);
    std::replace(p.begin(), p.end(), '.', '/');
    if (k.read != nullptr) {
      CHECK(j.contains(nlohmann::json::json_pointer("/" + p)) == app::result_key_present(k, r));
    }
    if (k.read == nullptr || !app::result_key_present(k, r)) continue;
    const nlohmann::json& v = j.at(nlohmann::json::json_pointer("/" + p));
    const nlohmann::json* object = v.is_object()                ? &v
                                   : v.is_array() && !v.empty() ? &v.front()
                                                                : nullptr;
    if (object == nullptr || !object->is_object()) continue;
    const std::string prefix = std::string(k.path) + (v.is_array() ? "[]." : ".");
    std::set<std::string> documented;
    for (const app::ResultKey& m : app::result_keys()) {
      if (m.read == nullptr && m.path.starts_with(prefix)) {
        std::string_view member = m.path.substr(prefix.size());
        documented.insert(std::string(member.substr(0, member.find('.'))));
      }
    }
    std::set<std::string> found;
    for (const auto& [name, value] : object->items()) found.insert(name);
    CHECK(found == documented);
  }
}

}  // namespace

TEST_CASE(
    "result schema: to_json has every present key, nested by its path, members as documented") {
  const app::RunResult r = run_file("incast-pfc.yaml");
  const nlohmann::json j = app::to_json(r);
  check_against_schema(r, j);
  CHECK(j["messages"]["fct_s"]["p99"].get<double>() == r.fct.p99_s);
  CHECK(!j.contains("step_time_s"));
  CHECK(!j.contains("estimate"));
  // A workload run with the estimate and peak RSS `syncsim run` attaches.
  app::LoadOptions load;
  load.overrides = {{"fidelity", "analytic"}};
  const app::Scenario s =
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/fsdp-llama-70b.yaml", load);
  app::RunResult w = app::run_scenario(s);
  w.estimate = app::estimate_run(s);
  w.peak_rss_bytes = 1.0;
  check_against_schema(w, app::to_json(w));
  check_against_schema(run_file("default.yaml"), app::to_json(run_file("default.yaml")));
  // A replayed Chakra trace (docs/chakra.md): the step keys and the chakra object.
  const app::RunResult c = run_file("chakra-replay-8.yaml");
  const nlohmann::json cj = app::to_json(c);
  check_against_schema(c, cj);
  CHECK(cj["engine"] == "chakra_replay");
  CHECK(cj["chakra"]["rank_compute_s"].size() == 8);
  CHECK(app::to_text(c).find("\nchakra     8 ranks") != std::string::npos);
}

TEST_CASE("result text: a workload run leads with its step and has no message lines") {
  const std::string text = app::to_text(run_file("default.yaml"));
  CAPTURE(text);
  CHECK(text.starts_with("scenario   "));
  const auto second_line = text.substr(text.find('\n') + 1);
  CHECK(second_line.starts_with("step       "));
  CHECK(text.find("\nmfu        ") < text.find("\nfabric     "));
  CHECK(text.find("\nmessages ") == std::string::npos);
  CHECK(text.find("\nfct ") == std::string::npos);
  CHECK(text.find("\nqueues ") == std::string::npos);
}

TEST_CASE("result text: traffic runs keep their message, FCT and queue lines") {
  const std::string text = app::to_text(run_file("incast-pfc.yaml"));
  CAPTURE(text);
  CHECK(text.find("\nmessages   ") != std::string::npos);
  CHECK(text.find("\nfct        min ") != std::string::npos);
  CHECK(text.find("\nqueues     deepest egress queue ") != std::string::npos);
  CHECK(text.find("\nstep ") == std::string::npos);
}

TEST_CASE("result text: every branch's placeholders name present schema keys") {
  // FSDP, 3D parallelism (closed form), a report: block, a lossy transport: each line kind once.
  CHECK_NOTHROW(app::to_text(run_file("fsdp-llama-70b.yaml")));
  CHECK_NOTHROW(app::to_text(run_file("llama-70b-3d.yaml")));
  CHECK_NOTHROW(app::to_text(run_file("interconnect-matrix.yaml")));
  CHECK_NOTHROW(app::to_text(run_file("incast-tcp.yaml")));
  const app::RunResult r = run_file("incast-pfc.yaml");
  CHECK_THROWS_AS(app::fill_result_template(r, "{no_such_key}"), std::logic_error);
  CHECK_THROWS_AS(app::fill_result_template(r, "{step_time_s}"), std::logic_error);  // no workload
  CHECK(app::fill_result_template(r, "{fabric.gpus} GPUs") == std::to_string(r.gpus) + " GPUs");
}
