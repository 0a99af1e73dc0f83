// `syncsim plot --series a,b`: one line per combination of several series columns.
#include <doctest/doctest.h>

#include <string>

#include "cli/plot.hpp"

namespace app = syncsim::app;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE(
    "gnuplot script: --series a,b draws one line per (a, b) combination, in order of first "
    "appearance") {
  const auto t = app::parse_csv(
      "gpus,bw,ovs,mfu\n"
      "512,800Gbps,3,0.50\n256,400Gbps,1,0.31\n512,400Gbps,1,0.30\n256,800Gbps,3,0.52\n"
      "256,400Gbps,3,0.29\n512,400Gbps,3,0.28\n",
      "r.csv");
  app::PlotSpec spec;
  spec.x = "gpus";
  spec.y = "mfu";
  spec.series = "bw, ovs";  // spaces around names are allowed
  spec.out = "out.svg";
  const std::string s = app::gnuplot_script(t, spec);
  CHECK(count(s, " << EOD\n") == 3);
  CHECK(count(s, " with linespoints ") == 3);
  // Legend entries name every series column; blocks follow the first row of each combination.
  const auto a = s.find("title \"bw=800Gbps, ovs=3\"");
  const auto b = s.find("title \"bw=400Gbps, ovs=1\"");
  const auto c = s.find("title \"bw=400Gbps, ovs=3\"");
  REQUIRE(a != std::string::npos);
  REQUIRE(b != std::string::npos);
  REQUIRE(c != std::string::npos);
  CHECK(a < b);
  CHECK(b < c);
  // Colour by the first column (bw), dash and point type by the second (ovs).
  CHECK(
      s.find(
          "$d0 using 1:2 with linespoints lw 2 lc 1 dt 1 pt 7 ps 1 title \"bw=800Gbps, ovs=3\"") !=
      std::string::npos);
  CHECK(s.find("$d1 using 1:2 with linespoints lw 2 lc 2 dt 2 pt 4 ps 1.6 title \"bw=400Gbps, "
               "ovs=1\"") != std::string::npos);
  CHECK(
      s.find(
          "$d2 using 1:2 with linespoints lw 2 lc 2 dt 1 pt 7 ps 1 title \"bw=400Gbps, ovs=3\"") !=
      std::string::npos);
  // Each combination's points, sorted by x, and only its own.
  CHECK(s.find("$d0 << EOD\n256\t0.52\t256\n512\t0.5\t512\nEOD") != std::string::npos);
  CHECK(s.find("$d1 << EOD\n256\t0.31\t256\n512\t0.3\t512\nEOD") != std::string::npos);
  CHECK(s.find("$d2 << EOD\n256\t0.29\t256\n512\t0.28\t512\nEOD") != std::string::npos);
}

TEST_CASE(
    "gnuplot script: a single --series column keeps its legend; bad --series lists are usage "
    "errors") {
  const auto t = app::parse_csv("gpus,bw,ovs,mfu\n256,400Gbps,1,0.3\n512,400Gbps,1,0.2\n", "r.csv");
  app::PlotSpec spec;
  spec.x = "gpus";
  spec.y = "mfu";
  spec.out = "out.png";
  spec.series = "bw";
  CHECK(app::gnuplot_script(t, spec).find("with linespoints lw 2 pt 7 title \"bw=400Gbps\"") !=
        std::string::npos);

  for (const char* bad : {"bw,nope", "bw,", ",bw", "bw,bw"}) {
    CAPTURE(bad);
    spec.series = bad;
    CHECK_THROWS_AS(app::gnuplot_script(t, spec), app::PlotUsageError);
  }
  try {
    spec.series = "bw,nope";
    app::gnuplot_script(t, spec);
    FAIL("expected a PlotUsageError");
  } catch (const app::PlotUsageError& e) {
    CHECK(std::string(e.what()).find("no column \"nope\"") != std::string::npos);
  }
}

TEST_CASE("gnuplot script: a column whose name holds a comma is still one --series column") {
  const auto t = app::parse_csv("gpus,\"a,b\",a,b,mfu\n1,p,q,r,5\n2,p,q,s,6\n", "r.csv");
  app::PlotSpec spec;
  spec.x = "gpus";
  spec.y = "mfu";
  spec.out = "out.svg";
  spec.series = "a,b";
  const std::string s = app::gnuplot_script(t, spec);
  CHECK(count(s, " << EOD\n") == 1);
  CHECK(s.find("title \"a,b=p\"") != std::string::npos);
}

TEST_CASE(
    "gnuplot script: --logx tics each swept value; --xlabel/--ylabel replace the column names") {
  const auto t = app::parse_csv("gpus,mfu\n4096,0.30\n256,0.33\n1024,0.31\n256,0.34\n", "r.csv");
  app::PlotSpec spec;
  spec.x = "gpus";
  spec.y = "mfu";
  spec.out = "out.svg";
  std::string s = app::gnuplot_script(t, spec);
  CHECK(s.find("set xtics (") == std::string::npos);  // linear x: gnuplot's own tics, as before
  CHECK(s.find("set xlabel \"gpus\"") != std::string::npos);
  CHECK(s.find("set ylabel \"mfu\"") != std::string::npos);

  spec.logx = true;
  spec.xlabel = "GPUs in the job";
  spec.ylabel = "MFU";
  s = app::gnuplot_script(t, spec);
  CHECK(s.find("set logscale x\nset xtics (256, 1024, 4096)\nset autoscale xfix\n") !=
        std::string::npos);
  CHECK(s.find("set xlabel \"GPUs in the job\"") != std::string::npos);
  CHECK(s.find("set ylabel \"MFU\"") != std::string::npos);
}
