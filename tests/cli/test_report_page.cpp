// `syncsim report`: the page drawn from real run results and sweep tables (run/report_page.hpp),
// its link-utilisation input (link_tiers), and its one-line errors for bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "run/report_page.hpp"
#include "run/result_schema.hpp"
#include "run/runner.hpp"
#include "run/sweep.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;
using json = nlohmann::json;

namespace {

json run_json(const std::string& scenario, const std::vector<std::string>& sets = {}) {
  app::LoadOptions load;
  for (const auto& s : sets) load.overrides.push_back(app::parse_override(s));
  return app::to_json(app::run_scenario(
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/" + scenario, load)));
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report page: a packet incast draws tiers, paused ports and no external URL") {
  const json j = run_json("incast-dcqcn.yaml");
  // 16 x 4 MB senders and a 1 MB victim; every byte crosses a sender's and a receiver's host port.
  const json& tiers = j.at("link_tiers");
  const auto host = std::find_if(tiers.begin(), tiers.end(),
                                 [](const json& t) { return t.at("tier") == "host"; });
  REQUIRE(host != tiers.end());
  CHECK(host->at("bytes").get<double>() ==
        doctest::Approx(2 * j.at("bytes_delivered").get<double>()));
  CHECK(host->at("links") == 27);
  // The incast's bottleneck (leaf0 -> host0) is the busiest host port; payload can not beat the
  // line.
  CHECK(host->at("max_utilisation").get<double>() > 0.5);
  CHECK(host->at("max_utilisation").get<double>() <= 1.0);
  const std::string page = app::report_page("incast.json", j.dump());
  for (const char* id : {"id=\"summary\"", "id=\"fabric\"", "id=\"step\"", "id=\"timeline\"",
                         "id=\"ports\"", "id=\"page-check\""}) {
    CHECK_MESSAGE(page.find(id) != std::string::npos, id);
  }
  CHECK(page.find("spine0-&gt;leaf0") != std::string::npos);  // the most paused port, escaped
  CHECK(page.find("no <code>workload:</code>") != std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("Content-Security-Policy") != std::string::npos);
}

TEST_CASE("report page: a workload run has a step bar and a rank timeline; analytic has no ports") {
  const json j = run_json("bucket-size-study.yaml", {"fidelity=analytic"});
  REQUIRE(j.contains("rank_timeline"));
  CHECK(j.at("rank_timeline").size() == 8);
  const std::string page = app::report_page("step.json", j.dump());
  CHECK(page.find("<section id=\"step\" data-expect-svg>") != std::string::npos);
  CHECK(page.find("<section id=\"timeline\" class=\"wide\" data-expect-svg>") != std::string::npos);
  CHECK(count(page, "all-reduce (buckets) ") == j.at("buckets").size());
  CHECK(page.find("analytic-fidelity run: PFC pauses") != std::string::npos);
}

TEST_CASE("report page: text from the result is escaped") {
  json j = run_json("incast-dcqcn.yaml");
  j["scenario"] = "<script>alert(1)</script>";
  const std::string page = app::report_page("x.json", j.dump());
  CHECK(page.find("<script>alert") == std::string::npos);
  CHECK(page.find("&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
}

TEST_CASE("report page: a sweep CSV gets one plot per varying column and axis") {
  app::SweepSpec spec;
  spec.scenario_path = SYNCSIM_SOURCE_DIR "/scenarios/incast-pfc.yaml";
  spec.axes.push_back(app::parse_vary("fabric.links.host.bandwidth=100Gbps,200Gbps"));
  spec.axes.push_back(app::parse_vary("traffic.0.messages.0.size=256KiB,1MiB"));
  spec.columns = {"fct_p99_s", "messages"};
  spec.wall = false;
  const app::SweepPlan plan = app::plan_sweep(spec);
  const std::string csv = app::sweep_csv(app::sweep_columns(spec), app::run_sweep_local(plan, 1));
  const std::string page = app::report_page("sweep.csv", csv);
  // fct_p99_s varies: one plot per axis; messages (17 at every point) is listed, not plotted.
  CHECK(count(page, "class=\"sweep-plot\"") == 2);
  CHECK(page.find("The same at every point: messages = 17") != std::string::npos);
  CHECK(page.find("fct_p99_s against fabric.links.host.bandwidth") != std::string::npos);
  CHECK(count(page, "<tr>") == 5);  // header and four points
}

TEST_CASE("report page: bad input is one error naming file, place and what was expected") {
  try {
    app::report_page("r.json", "{\n  \"scenario\": ,\n}");
    FAIL("no error");
  } catch (const app::ReportInputError& e) {
    CHECK(e.line() == 2);
    CHECK(std::string(e.what()).starts_with("r.json:2:"));
  }
  try {
    app::report_page("r.json", R"({"scenario": "s", "fidelity": "flow"})");
    FAIL("no error");
  } catch (const app::ReportInputError& e) {
    CHECK(e.path() == "sim_time_s");
  }
  try {
    app::report_page("r.json",
                     R"({"scenario": "s", "fidelity": "flow", "sim_time_s": 1, "link_tiers": 3})");
    FAIL("no error");
  } catch (const app::ReportInputError& e) {
    CHECK(e.path() == "link_tiers");
  }
  try {
    app::report_page("s.csv", "traffic.0.size,fct_p99_s\n1MiB,0.5\n4MiB\n");
    FAIL("no error");
  } catch (const app::ReportInputError& e) {
    CHECK(e.line() == 3);
    CHECK(e.message() == "expected 2 fields as in the header, found 1");
  }
  CHECK_THROWS_AS(app::report_page("s.csv", "a,b\n1,2\n"),
                  app::ReportInputError);  // no result column
  CHECK_THROWS_AS(app::report_page("e.json", "  \n"), app::ReportInputError);
  CHECK_THROWS_WITH_AS(app::report_page("s.json", "[{\"gpus\": 8}]"),
                       doctest::Contains("write the sweep with --csv"), app::ReportInputError);
}
