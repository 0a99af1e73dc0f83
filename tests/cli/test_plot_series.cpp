// `syncsim plot --series a,b`: one line per combination of several series columns.
#include <doctest/doctest.h>

#include <cstdint>
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

TEST_CASE("gnuplot script: --xbytes labels a log2 size axis 1K/1M/1G; --yzero; --emphasise") {
  CHECK(app::power_of_two_bytes_label(3) == "8");
  CHECK(app::power_of_two_bytes_label(9) == "512");
  CHECK(app::power_of_two_bytes_label(10) == "1K");
  CHECK(app::power_of_two_bytes_label(26) == "64M");
  CHECK(app::power_of_two_bytes_label(34) == "16G");

  // A calibration report's CSV: measured first, as report_plot_csv writes it.
  std::string csv = "bytes,series,busbw_GBps\n";
  for (int e = 3; e <= 34; ++e) {
    csv += std::to_string(int64_t{1} << e) + ",measured," + std::to_string(e) + "\n";
  }
  for (int e = 3; e <= 34; ++e) {
    csv += std::to_string(int64_t{1} << e) + ",calibrated," + std::to_string(e + 1) + "\n";
  }
  const auto t = app::parse_csv(csv, "r.csv");
  app::PlotSpec spec;
  spec.x = "bytes";
  spec.y = "busbw_GBps";
  spec.series = "series";
  spec.out = "out.svg";
  spec.xbytes = true;
  spec.yzero = true;
  spec.emphasise = "measured";
  const std::string s = app::gnuplot_script(t, spec);
  CHECK(s.find("set logscale x 2\n") != std::string::npos);
  // 32 sizes: every second power of two, so 1K, 1M and 1G are among the 16 tics.
  CHECK(s.find("set xtics (\"16\" 16, \"64\" 64, \"256\" 256, \"1K\" 1024, \"4K\" 4096,") !=
        std::string::npos);
  CHECK(s.find("\"1M\" 1048576") != std::string::npos);
  CHECK(s.find("\"1G\" 1073741824, \"4G\" 4294967296, \"16G\" 17179869184)\n") !=
        std::string::npos);
  CHECK(count(s, "\"16K\"") == 1);
  CHECK(s.find("set yrange [0:*]\n") != std::string::npos);
  // Measured is drawn last (on top), thick, black, with points; the model line stays as it was.
  const auto calibrated =
      s.find("$d0 using 1:2 with linespoints lw 2 pt 7 title \"series=calibrated\"");
  const auto measured = s.find(
      "$d1 using 1:2 with linespoints lw 3.5 lc rgb 'black' pt 7 ps 1.1 title \"series=measured\"");
  REQUIRE(calibrated != std::string::npos);
  REQUIRE(measured != std::string::npos);
  CHECK(calibrated < measured);
  CHECK(s.find("$d1 << EOD\n8\t3\t8\n") != std::string::npos);  // the block holds measured's points

  // Without the flags the script is as before: linear y from gnuplot, no byte tics.
  app::PlotSpec plain = spec;
  plain.xbytes = false;
  plain.yzero = false;
  plain.emphasise.clear();
  const std::string p = app::gnuplot_script(t, plain);
  CHECK(p.find("set yrange") == std::string::npos);
  CHECK(p.find("\"1K\"") == std::string::npos);
  CHECK(p.find("$d0 using 1:2 with linespoints lw 2 pt 7 title \"series=measured\"") !=
        std::string::npos);

  // Few sizes: every power of two is a tic.
  const auto few = app::parse_csv("bytes,y\n1024,1\n4096,2\n", "f.csv");
  app::PlotSpec f;
  f.x = "bytes";
  f.y = "y";
  f.out = "out.svg";
  f.xbytes = true;
  CHECK(app::gnuplot_script(few, f).find("set xtics (\"1K\" 1024, \"2K\" 2048, \"4K\" 4096)") !=
        std::string::npos);

  // Sizes must be positive numbers; a log y axis has no 0.
  const auto bad = app::parse_csv("bytes,y\n0,1\n4096,2\n", "b.csv");
  CHECK_THROWS_AS(app::gnuplot_script(bad, f), app::PlotUsageError);
  f.xbytes = false;
  f.yzero = true;
  f.logy = true;
  CHECK_THROWS_AS(app::gnuplot_script(few, f), app::PlotUsageError);
}
