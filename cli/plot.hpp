#pragma once
// `syncsim plot`: renders a sweep's CSV with gnuplot (Debian package gnuplot-nox).
//
//   syncsim plot RESULTS.csv --x COLUMN --y COLUMN [--series COLUMN[,COLUMN...]] --out
//   FILE.svg|FILE.png
//                [--title TEXT] [--xlabel TEXT] [--ylabel TEXT] [--logx] [--logy] [--points]
//                [--diagonal] [--xbytes] [--yzero] [--emphasise SERIES]
//
// Writes a self-contained gnuplot script next to the picture (FILE.svg.gp, data inline) and runs
// gnuplot on it. An x column of numbers with one common unit suffix (400Gbps, 800Gbps) is plotted
// as numbers with the unit in the axis label; any other x column is plotted as categories in order
// of first appearance. With --logx, a numeric x column of at most 16 distinct positive values gets
// one tic per value. One line per value of --series (per combination of values, in order of first
// appearance, when it names several comma-separated columns), points sorted by x.
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace syncsim::app {

class PlotUsageError : public std::invalid_argument {  // bad flags or CSV: exit 2
 public:
  using std::invalid_argument::invalid_argument;
};
class PlotError : public std::runtime_error {  // gnuplot missing or failing: exit 1
 public:
  using std::runtime_error::runtime_error;
};

struct CsvTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};
// RFC 4180-style: quoted fields may hold commas, doubled quotes and newlines. Throws PlotUsageError
// naming the file and line for a row whose field count differs from the header's.
CsvTable parse_csv(const std::string& text, const std::string& source);

struct PlotSpec {
  std::string x, y, series;  // series empty: one line; "a,b": one line per (a, b) pair
  std::string out;           // .svg or .png
  std::string title;
  std::string xlabel, ylabel;  // empty: the column's name (x: with its unit suffix, as before)
  bool logx = false, logy = false;
  bool points = false;    // markers only, no lines between them (values that are not a series)
  bool diagonal = false;  // a dashed y = x line (predicted against measured)
  // x values are byte counts: a log2 axis with tics at powers of two labelled 8, 256, 1K, 4M, 1G
  // (at most 16 tics: every 2nd, 5th or 10th power when there are more sizes).
  bool xbytes = false;
  bool yzero = false;  // the y axis starts at 0 (bandwidths: never below 0, the origin in view)
  // Series whose (first) series value starts with this are drawn last, thick, black, with points,
  // so they stay visible above the others (measured against the models).
  std::string emphasise;
};
// "8", "512", "1K", "64M", "16G": 2^exponent bytes as the --xbytes tics print it.
std::string power_of_two_bytes_label(int exponent);
// The gnuplot script (data inline) that draws `spec` from `table`.
std::string gnuplot_script(const CsvTable& table, const PlotSpec& spec);

// Absolute path of gnuplot on PATH (or $SYNCSIM_GNUPLOT when set); empty when there is none.
std::string find_gnuplot();

// The `plot` command. Usage and CSV errors print "syncsim plot: ..." and return 2; a missing or
// failing gnuplot prints a message naming the Debian package and returns 1.
int plot_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace syncsim::app
