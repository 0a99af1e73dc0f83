// `syncsim sweep` and `syncsim plot` building blocks: --vary parsing, point order, validation
// before running, thread-count independence, CSV/JSON output, CSV parsing and the gnuplot script.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/plot.hpp"
#include "run/sweep.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

const std::string kIncast = SYNCSIM_SOURCE_DIR "/scenarios/incast-pfc.yaml";

app::SweepSpec small_incast_spec() {
  app::SweepSpec spec;
  spec.scenario_path = kIncast;
  spec.axes.push_back(app::parse_vary("fabric.links.host.bandwidth=100Gbps,200Gbps"));
  spec.axes.push_back(app::parse_vary("fabric.switch.pfc.enabled=true,false"));
  spec.sets.push_back(app::parse_override("traffic.0.messages.0.size=256KiB"));
  spec.wall = false;
  return spec;
}

}  // namespace

TEST_CASE("parse_vary splits values at top-level commas only") {
  const auto a = app::parse_vary("traffic.0.size=1MiB,4MiB,16MiB");
  CHECK(a.path == "traffic.0.size");
  CHECK(a.values == std::vector<std::string>{"1MiB", "4MiB", "16MiB"});
  const auto b = app::parse_vary("fabric.switch.pfc.lossless_priorities=[3, 4],[3],'a,b'");
  CHECK(b.values == std::vector<std::string>{"[3, 4]", "[3]", "'a,b'"});
  CHECK_THROWS_AS(app::parse_vary("no_equals"), app::SweepUsageError);
  CHECK_THROWS_AS(app::parse_vary("=1,2"), app::SweepUsageError);
  CHECK_THROWS_AS(app::parse_vary("seed=1,,2"), app::SweepUsageError);
}

TEST_CASE("sweep points are the cartesian product, last axis fastest") {
  const auto pts = app::sweep_point_values({{"a", {"1", "2"}}, {"b", {"x", "y", "z"}}});
  REQUIRE(pts.size() == 6);
  CHECK(pts[0] == std::vector<std::string>{"1", "x"});
  CHECK(pts[2] == std::vector<std::string>{"1", "z"});
  CHECK(pts[3] == std::vector<std::string>{"2", "x"});
  CHECK(pts[5] == std::vector<std::string>{"2", "z"});
}

TEST_CASE("a bad --vary fails while loading, before anything runs") {
  app::SweepSpec spec = small_incast_spec();
  spec.axes.push_back(app::parse_vary("fabric.spine_leaf.no_such_key=1,2"));
  CHECK_THROWS_AS(app::plan_sweep(spec), app::ScenarioError);

  spec = small_incast_spec();
  spec.axes[0] = app::parse_vary("fabric.links.host.bandwidth=100Gbps,fast");  // second value bad
  try {
    app::plan_sweep(spec);
    FAIL("expected a ScenarioError");
  } catch (const app::ScenarioError& e) {
    CHECK(e.path() == "fabric.links.host.bandwidth");
  }
}

TEST_CASE("a sweep's rows do not depend on the number of threads") {
  const app::SweepPlan plan = app::plan_sweep(small_incast_spec());
  REQUIRE(plan.scenarios.size() == 4);
  const auto serial = app::run_sweep_local(plan, 1);
  std::size_t last_done = 0;
  const auto parallel = app::run_sweep_local(plan, 3, [&](std::size_t done) { last_done = done; });
  CHECK(last_done == 4);
  CHECK(serial == parallel);
  const auto cols = app::sweep_columns(plan.spec);
  CHECK(app::sweep_csv(cols, serial) == app::sweep_csv(cols, parallel));
  CHECK(app::sweep_json(serial) == app::sweep_json(parallel));

  // Rows carry the swept values and PFC changes the outcome (pauses with it, drops without).
  const auto first = nlohmann::json::parse(serial[0]);
  const auto second = nlohmann::json::parse(serial[1]);
  CHECK(first["fabric.links.host.bandwidth"] == "100Gbps");
  CHECK(first["fabric.switch.pfc.enabled"] == "true");
  CHECK(first["bytes_dropped"] == 0);
  CHECK(first["pause_frames"].get<uint64_t>() > 0);
  CHECK(second["pause_frames"] == 0);
  CHECK(!first.contains("wall_s"));
}

TEST_CASE(
    "sweep CSV: header of swept paths then metrics; numbers plain, strings quoted when needed") {
  app::SweepSpec spec;
  spec.axes = {{"fabric.spine_leaf.spines", {"4"}}, {"name", {"a,b"}}};
  const auto cols = app::sweep_columns(spec);
  REQUIRE(cols.size() >= 3);
  CHECK(cols[0] == "fabric.spine_leaf.spines");
  CHECK(cols[2] == "sim_time_s");
  CHECK(cols.back() == "wall_s");
  app::RunResult r;
  r.sim_time_s = 0.5;
  r.events = 7;
  const std::string row = app::sweep_row(spec, {"4", "a,b"}, r).dump();
  const std::string csv = app::sweep_csv(cols, {row});
  CHECK(csv.starts_with("fabric.spine_leaf.spines,name,sim_time_s,"));
  CHECK(csv.find("\n4,\"a,b\",0.5,") != std::string::npos);
}

TEST_CASE("sweep --columns: the chosen schema columns after the axes, in their order") {
  app::SweepSpec spec;
  spec.axes = {{"fabric.spine_leaf.spines", {"4"}}};
  spec.columns = app::parse_sweep_columns("events,fct_p50_s,wall_s,gpus");
  CHECK(app::sweep_columns(spec) == std::vector<std::string>{"fabric.spine_leaf.spines", "events",
                                                             "fct_p50_s", "wall_s", "gpus"});
  spec.wall = false;  // --no-wall still removes wall_s
  CHECK(app::sweep_columns(spec) ==
        std::vector<std::string>{"fabric.spine_leaf.spines", "events", "fct_p50_s", "gpus"});
  app::RunResult r;
  r.events = 7;
  r.fct.p50_s = 0.25;
  r.gpus = 16;
  const std::string csv =
      app::sweep_csv(app::sweep_columns(spec), {app::sweep_row(spec, {"4"}, r).dump()});
  CHECK(csv == "fabric.spine_leaf.spines,events,fct_p50_s,gpus\n4,7,0.25,16\n");
  // A workload column on a run without a step stays empty.
  spec.columns = {"mfu"};
  CHECK(app::sweep_csv(app::sweep_columns(spec), {app::sweep_row(spec, {"4"}, r).dump()}) ==
        "fabric.spine_leaf.spines,mfu\n4,\n");
  std::ostringstream out, err;
  CHECK(app::sweep_main({kIncast, "--vary", "seed=1,2", "--columns", "bogus"}, out, err) == 2);
  CHECK(err.str().find("no column \"bogus\"") != std::string::npos);
}

TEST_CASE("sweep_main reports usage errors with exit 2") {
  std::ostringstream out, err;
  CHECK(app::sweep_main({kIncast}, out, err) == 2);
  CHECK(err.str().find("--vary") != std::string::npos);
  err.str("");
  CHECK(app::sweep_main({kIncast, "--vary", "seed=1", "--jobs", "0"}, out, err) == 2);
  CHECK(err.str().find("--jobs") != std::string::npos);
  err.str("");
  CHECK(app::sweep_main({kIncast, "--vary", "seed=1", "--vary", "seed=2"}, out, err) == 2);
}

TEST_CASE("parse_csv handles quotes and reports ragged rows") {
  const auto t = app::parse_csv("a,b\n1,\"x,\"\"y\"\"\"\n2,z\n", "r.csv");
  REQUIRE(t.rows.size() == 2);
  CHECK(t.columns == std::vector<std::string>{"a", "b"});
  CHECK(t.rows[0][1] == "x,\"y\"");
  try {
    app::parse_csv("a,b\n1,2\n3\n", "r.csv");
    FAIL("expected a PlotUsageError");
  } catch (const app::PlotUsageError& e) {
    CHECK(std::string(e.what()).starts_with("r.csv:3:"));
  }
}

TEST_CASE("gnuplot script: numeric x with units, one block per series, sorted by x") {
  const auto t = app::parse_csv(
      "bw,pfc,fct\n800Gbps,true,1\n100Gbps,true,8\n100Gbps,false,9\n800Gbps,false,2\n", "r.csv");
  app::PlotSpec spec;
  spec.x = "bw";
  spec.y = "fct";
  spec.series = "pfc";
  spec.out = "out.svg";
  const std::string s = app::gnuplot_script(t, spec);
  CHECK(s.find("set terminal svg") != std::string::npos);
  CHECK(s.find("set xlabel \"bw (Gbps)\"") != std::string::npos);
  CHECK(s.find("$d0 << EOD\n100\t8\t100Gbps\n800\t1\t800Gbps\nEOD") != std::string::npos);
  CHECK(s.find("title \"pfc=false\"") != std::string::npos);

  spec.series.clear();
  spec.x = "pfc";  // not numeric: categories
  CHECK(app::gnuplot_script(t, spec).find("xtic(3)") != std::string::npos);
  spec.y = "nope";
  CHECK_THROWS_AS(app::gnuplot_script(t, spec), app::PlotUsageError);
}

TEST_CASE("a labelled axis sets its values and shows its labels") {
  app::SweepSpec spec;
  spec.scenario_path = kIncast;
  spec.axes.push_back(app::SweepAxis{.path = "traffic.1",
                                     .values = {"{pattern: incast, senders: 2, receiver: 0, size: "
                                                "64KiB, priority: 3}",
                                                "{pattern: incast, senders: 4, receiver: 0, size: "
                                                "64KiB, priority: 3}"},
                                     .labels = {"two", "four"}});
  spec.columns = {"messages"};
  spec.wall = false;
  const app::SweepPlan plan = app::plan_sweep(spec);
  REQUIRE(plan.scenarios.size() == 2);
  std::vector<std::string> rows;
  for (std::size_t i = 0; i < 2; ++i) rows.push_back(app::run_sweep_point(plan, i));
  // incast-pfc.yaml's victim (traffic.0) plus the swept incast's senders.
  CHECK(app::sweep_csv(app::sweep_columns(plan.spec), rows) ==
        "traffic.1,messages\ntwo,3\nfour,5\n");
  CHECK(plan.spec.axes[0].shown("not a value") == "not a value");
}
