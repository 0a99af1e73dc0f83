// `syncsim plot`: sweep CSV -> gnuplot script -> SVG/PNG.
#include "cli/plot.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>
#include <utility>

#include "cli/command_line.hpp"
#include "run/csv_records.hpp"

namespace syncsim::app {

namespace {

const char* kUsage =
    "usage: syncsim plot RESULTS.csv --x COLUMN --y COLUMN [--series COLUMN[,COLUMN...]] --out "
    "FILE.svg|FILE.png\n"
    "                    [--title TEXT] [--xlabel TEXT] [--ylabel TEXT] [--logx] [--logy] "
    "[--points] [--diagonal]\n"
    "                    [--xbytes] [--yzero] [--emphasise SERIES]\n"
    "\n"
    "Draws COLUMN y against COLUMN x from a `syncsim sweep` CSV with gnuplot (Debian package\n"
    "gnuplot-nox), one line per value of --series (per combination of values when it names "
    "several\n"
    "columns). The gnuplot script is kept as FILE.svg.gp.\n";

constexpr const char* kPackage = "gnuplot-nox";

// "400Gbps" -> {400, "Gbps"}; "0.5" -> {0.5, ""}; anything else -> nullopt.
struct NumberWithUnit {
  double value;
  std::string unit;
};
std::optional<NumberWithUnit> split_number(const std::string& s) {
  const char* first = s.data();
  const char* last = s.data() + s.size();
  if (first != last && *first == '+') ++first;
  double v = 0;
  auto [p, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || first == last) return std::nullopt;
  std::string unit(p, last);
  for (char c : unit) {
    if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '/' || c == '%')) return std::nullopt;
  }
  return NumberWithUnit{v, unit};
}

// A string for gnuplot's double-quoted syntax.
std::string gp_quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    if (c == '\n') {
      q += "\\n";
      continue;
    }
    q += c;
  }
  return q + "\"";
}

std::size_t column_index(const CsvTable& t, const std::string& name, const char* flag) {
  for (std::size_t i = 0; i < t.columns.size(); ++i) {
    if (t.columns[i] == name) return i;
  }
  std::string have;
  for (const auto& c : t.columns) have += (have.empty() ? "" : ", ") + c;
  throw PlotUsageError(std::string(flag) + ": no column \"" + name + "\"; the CSV has: " + have);
}

// --series names one column, or several separated by commas ("a,b"): one line per combination.
// A column whose name itself holds the commas wins, so a single-column --series never changes
// meaning.
std::vector<std::size_t> series_column_indices(const CsvTable& t, const std::string& spec) {
  if (std::find(t.columns.begin(), t.columns.end(), spec) != t.columns.end()) {
    return {column_index(t, spec, "--series")};
  }
  std::vector<std::size_t> indices;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const auto end = std::min(spec.find(',', start), spec.size());
    std::string name = spec.substr(start, end - start);
    const auto first = name.find_first_not_of(' ');
    const auto last = name.find_last_not_of(' ');
    name = first == std::string::npos ? std::string() : name.substr(first, last - first + 1);
    if (name.empty())
      throw PlotUsageError("--series: expected COLUMN[,COLUMN...], found an empty name in \"" +
                           spec + "\"");
    const std::size_t i = column_index(t, name, "--series");
    if (std::find(indices.begin(), indices.end(), i) != indices.end()) {
      throw PlotUsageError("--series: column \"" + name + "\" named twice in \"" + spec + "\"");
    }
    indices.push_back(i);
    start = end + 1;
  }
  return indices;
}

// "col=value" per series column, joined by ", " (the legend entry and the grouping key).
std::string series_label(const CsvTable& t, const std::vector<std::size_t>& columns,
                         const std::vector<std::string>& row) {
  std::string label;
  for (const std::size_t i : columns)
    label += (label.empty() ? "" : ", ") + t.columns[i] + "=" + row[i];
  return label;
}

std::string ends_with_lower(const std::string& s) {
  const auto dot = s.rfind('.');
  std::string ext = dot == std::string::npos ? "" : s.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext;
}

std::string fmt(double v) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, p);
}

// The tics of a byte axis: powers of two from 2^lo to 2^hi, every `step`-th one (1, 2, 5 or 10:
// the steps that keep 1K, 1M and 1G among them), at most 16.
std::vector<int> byte_tic_exponents(int lo, int hi) {
  int step = 10;
  for (const int s : {1, 2, 5}) {
    if ((hi - lo) / s + 1 <= 16) {
      step = s;
      break;
    }
  }
  std::vector<int> out;
  for (int e = lo; e <= hi; ++e) {
    if (e % step == 0) out.push_back(e);
  }
  return out;
}

}  // namespace

std::string power_of_two_bytes_label(int exponent) {
  static const char* kUnits[] = {"", "K", "M", "G", "T", "P", "E"};
  const int unit = std::clamp(exponent / 10, 0, 6);
  return std::to_string(int64_t{1} << (exponent - 10 * unit)) + kUnits[unit];
}

CsvTable parse_csv(const std::string& text, const std::string& source) {
  std::vector<CsvRecord> records;
  try {
    records = read_csv_records(text);
  } catch (const CsvQuoteError& e) {
    throw PlotUsageError(source + ":" + std::to_string(e.line) + ": unterminated quoted field");
  }
  if (records.empty())
    throw PlotUsageError(source + ": expected a CSV header line, found an empty file");
  CsvTable t;
  t.columns = std::move(records[0].fields);
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].fields.size() != t.columns.size()) {
      throw PlotUsageError(source + ":" + std::to_string(records[r].line) + ": expected " +
                           std::to_string(t.columns.size()) + " fields as in the header, found " +
                           std::to_string(records[r].fields.size()));
    }
    t.rows.push_back(std::move(records[r].fields));
  }
  return t;
}

std::string gnuplot_script(const CsvTable& table, const PlotSpec& spec) {
  const std::size_t xi = column_index(table, spec.x, "--x");
  const std::size_t yi = column_index(table, spec.y, "--y");
  const bool has_series = !spec.series.empty();
  const std::vector<std::size_t> series_columns =
      has_series ? series_column_indices(table, spec.series) : std::vector<std::size_t>{};

  // Numeric x when every value is a number and they share one unit suffix.
  bool numeric = !table.rows.empty();
  std::string unit;
  for (std::size_t r = 0; r < table.rows.size() && numeric; ++r) {
    const auto n = split_number(table.rows[r][xi]);
    if (!n || (r > 0 && n->unit != unit)) numeric = false;
    if (n && r == 0) unit = n->unit;
  }
  std::vector<std::string> categories;  // categorical x, in order of first appearance
  auto category = [&](const std::string& v) {
    const auto it = std::find(categories.begin(), categories.end(), v);
    if (it != categories.end()) return static_cast<double>(it - categories.begin());
    categories.push_back(v);
    return static_cast<double>(categories.size() - 1);
  };

  struct Pt {
    double x;
    double y;
    std::string label;
  };
  std::vector<std::string> series_order;
  std::map<std::string, std::vector<Pt>> series;
  std::map<std::string, bool> emphasised;  // key -> drawn last, thick, with points
  // With several series columns, a line's colour follows the first column's value and its dash and
  // point type the rest, so lines that coincide (e.g. two oversubscription ratios giving the same
  // MFU) stay visible: an open marker around a filled one, a dashed line over a solid one.
  const bool styled = series_columns.size() > 1;
  std::vector<std::string> colour_values, style_values;
  std::map<std::string, std::pair<std::size_t, std::size_t>>
      series_style;  // key -> (colour, style)
  auto index_of = [](std::vector<std::string>& seen, const std::string& v) {
    const auto it = std::find(seen.begin(), seen.end(), v);
    if (it != seen.end()) return static_cast<std::size_t>(it - seen.begin());
    seen.push_back(v);
    return seen.size() - 1;
  };
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    const auto y = split_number(row[yi]);
    if (row[yi].empty()) continue;  // no value for this point
    if (!y || !y->unit.empty()) {
      throw PlotUsageError("--y " + spec.y + ": expected numbers, found \"" + row[yi] +
                           "\" in data row " + std::to_string(r + 1));
    }
    const double x = numeric ? split_number(row[xi])->value : category(row[xi]);
    const std::string key = series_label(table, series_columns, row);
    if (!series.count(key)) {
      series_order.push_back(key);
      const std::string& value = has_series ? row[series_columns[0]] : spec.y;
      emphasised[key] = !spec.emphasise.empty() && value.starts_with(spec.emphasise);
      if (styled) {
        std::string rest;
        for (std::size_t c = 1; c < series_columns.size(); ++c)
          rest += row[series_columns[c]] + '\n';
        series_style[key] = {index_of(colour_values, row[series_columns[0]]),
                             index_of(style_values, rest)};
      }
    }
    series[key].push_back({x, y->value, row[xi]});
  }
  if (series.empty()) throw PlotUsageError("--y " + spec.y + ": the CSV has no values to plot");
  // Emphasised series last: gnuplot draws in order, so they end up on top.
  std::stable_partition(series_order.begin(), series_order.end(),
                        [&](const std::string& key) { return !emphasised[key]; });
  if (spec.xbytes) {
    for (const auto& row : table.rows) {
      const auto n = split_number(row[xi]);
      if (!numeric || !n || !(n->value > 0)) {
        throw PlotUsageError("--xbytes: expected positive byte counts in column " + spec.x +
                             ", found \"" + row[xi] + "\"");
      }
    }
  }
  if (spec.yzero && spec.logy) throw PlotUsageError("--yzero: a --logy axis has no 0");

  std::ostringstream s;
  const std::string ext = ends_with_lower(spec.out);
  s << "# Written by `syncsim plot`; run `gnuplot " << spec.out << ".gp` to redraw.\n";
  if (ext == "png") {
    s << "set terminal pngcairo size 900,560 noenhanced font 'Sans,11'\n";
  } else {
    s << "set terminal svg size 900,560 dynamic noenhanced font 'Sans,12' background rgb 'white'\n";
  }
  s << "set output " << gp_quote(spec.out) << "\n";
  if (!spec.title.empty()) s << "set title " << gp_quote(spec.title) << "\n";
  const std::string xlabel = spec.xlabel.empty() ? spec.x : spec.xlabel;
  s << "set xlabel " << gp_quote(unit.empty() ? xlabel : xlabel + " (" + unit + ")") << "\n";
  s << "set ylabel " << gp_quote(spec.ylabel.empty() ? spec.y : spec.ylabel) << "\n";
  s << "set grid\nset key below\nset datafile separator '\\t'\n";
  if (spec.xbytes) {
    double lo = 0;
    double hi = 0;
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
      const double v = split_number(table.rows[r][xi])->value;
      lo = r == 0 ? v : std::min(lo, v);
      hi = r == 0 ? v : std::max(hi, v);
    }
    const int e_lo = static_cast<int>(std::ceil(std::log2(lo)));
    const int e_hi = std::max(e_lo, static_cast<int>(std::floor(std::log2(hi))));
    // A third of an octave of room at each end, so the end tics and points are not on the border.
    const double pad = std::exp2(1.0 / 3);
    s << "set logscale x 2\nset xrange [" << fmt(lo / pad) << ":" << fmt(hi * pad)
      << "]\nset xtics (";
    const auto tics = byte_tic_exponents(e_lo, e_hi);
    for (std::size_t i = 0; i < tics.size(); ++i) {
      s << (i ? ", " : "") << gp_quote(power_of_two_bytes_label(tics[i])) << " "
        << fmt(std::ldexp(1.0, tics[i]));
    }
    s << ")\nset mxtics default\n";
  } else if (spec.logx && numeric) {
    s << "set logscale x\n";
    // A sweep's x values are few and often powers of two, which decade tics hide: tic each value,
    // and pad the ends instead of widening the range to whole decades.
    std::vector<double> xs;
    for (const auto& row : table.rows) xs.push_back(split_number(row[xi])->value);
    std::sort(xs.begin(), xs.end());
    xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
    if (xs.size() <= 16 && std::all_of(xs.begin(), xs.end(), [](double v) { return v > 0; })) {
      s << "set xtics (";
      for (std::size_t i = 0; i < xs.size(); ++i) s << (i ? ", " : "") << fmt(xs[i]);
      s << ")\nset autoscale xfix\nset offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05\n";
    }
  }
  if (spec.logy) s << "set logscale y\n";
  if (spec.yzero) s << "set yrange [0:*]\n";
  if (!numeric) s << "set xtics rotate by -30\nset offsets 0.3, 0.3, 0, 0\n";

  std::size_t block = 0;
  for (const auto& key : series_order) {
    auto pts = series[key];
    if (numeric)
      std::stable_sort(pts.begin(), pts.end(), [](const Pt& a, const Pt& b) { return a.x < b.x; });
    s << "$d" << block++ << " << EOD\n";
    for (const auto& p : pts) {
      std::string label = p.label;
      std::replace(label.begin(), label.end(), '\t', ' ');
      std::replace(label.begin(), label.end(), '\n', ' ');
      s << fmt(p.x) << "\t" << fmt(p.y) << "\t" << label << "\n";
    }
    s << "EOD\n";
  }
  s << "plot ";
  block = 0;
  for (const auto& key : series_order) {
    if (block) s << ", \\\n     ";
    s << "$d" << block++ << " using 1:2" << (numeric ? "" : ":xtic(3)");
    if (emphasised[key]) {
      s << " with linespoints lw 3.5 lc rgb 'black' pt 7 ps 1.1 ";
    } else if (styled) {
      s << (spec.points ? " with points " : " with linespoints lw 2 ");
      // gnuplot point types: filled circle, open square, open triangle, open inverted triangle,
      // open diamond.
      constexpr int kPointTypes[] = {7, 4, 8, 10, 12};
      constexpr std::size_t kStyles = sizeof kPointTypes / sizeof kPointTypes[0];
      const auto [colour, style] = series_style[key];
      s << "lc " << colour + 1 << " dt " << style % kStyles + 1 << " pt "
        << kPointTypes[style % kStyles] << " ps " << (style % kStyles == 0 ? "1" : "1.6") << " ";
    } else if (spec.points) {
      // One marker shape per series: filled circle, square, triangle, diamond, inverted triangle.
      constexpr int kMarkers[] = {7, 5, 9, 13, 11};
      s << " with points pt " << kMarkers[(block - 1) % (sizeof kMarkers / sizeof kMarkers[0])]
        << " ps 1.4 ";
    } else {
      s << " with linespoints lw 2 pt 7 ";
    }
    s << "title " << gp_quote(has_series ? key : spec.y);
  }
  if (spec.diagonal) s << ", \\\n     x with lines dt 2 lc rgb 'gray40' title 'y = x'";
  s << "\n";
  return s.str();
}

std::string find_gnuplot() {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (const char* forced = std::getenv("SYNCSIM_GNUPLOT"); forced != nullptr && *forced != '\0') {
    return executable(forced) ? std::string(forced) : std::string();
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const auto end = std::min(dirs.find(':', start), dirs.size());
    std::string candidate =
        (end == start ? std::string(".") : dirs.substr(start, end - start)) + "/gnuplot";
    if (executable(candidate)) return candidate;
    start = end + 1;
  }
  return "";
}

int plot_main(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  PlotSpec spec;
  std::string csv_path;
  std::string script;
  try {
    po::options_description opts("options");
    opts.add_options()("help,h", "show this help")("x", po::value<std::string>(&spec.x),
                                                   "column for the x axis")(
        "y", po::value<std::string>(&spec.y), "column for the y axis")(
        "series", po::value<std::string>(&spec.series),
        "one line per value of this column (COLUMN[,COLUMN...]: per combination of values)")(
        "out", po::value<std::string>(&spec.out), "picture to write: FILE.svg or FILE.png")(
        "title", po::value<std::string>(&spec.title), "title of the plot")(
        "xlabel", po::value<std::string>(&spec.xlabel),
        "x axis label (default: the column's name)")("ylabel", po::value<std::string>(&spec.ylabel),
                                                     "y axis label (default: the column's name)")(
        "logx", po::bool_switch(&spec.logx), "logarithmic x axis")(
        "logy", po::bool_switch(&spec.logy), "logarithmic y axis")(
        "points", po::bool_switch(&spec.points), "markers only, no lines between points")(
        "diagonal", po::bool_switch(&spec.diagonal), "add a dashed y = x line")(
        "xbytes", po::bool_switch(&spec.xbytes),
        "x is a byte count: log2 axis, tics labelled 1K, 1M, 1G")(
        "yzero", po::bool_switch(&spec.yzero), "start the y axis at 0")(
        "emphasise", po::value<std::string>(&spec.emphasise),
        "draw the series whose value starts with this last, thick and with points");
    po::options_description hidden;
    hidden.add_options()("csv", po::value<std::vector<std::string>>(), "sweep results");
    po::options_description all;
    all.add(opts).add(hidden);
    po::positional_options_description pos;
    pos.add("csv", -1);
    const CommandLine cl = parse_command_line<PlotUsageError>(args, all, pos);
    if (cl.has("help")) {
      print_help(out, kUsage, opts);
      return 0;
    }
    const std::vector<std::string> csvs = cl.all("csv");
    if (csvs.size() > 1) {
      throw PlotUsageError("expected one CSV file, found a second: \"" + csvs[1] + "\"");
    }
    if (!csvs.empty()) csv_path = csvs[0];
    if (csv_path.empty()) throw PlotUsageError(std::string("expected a CSV file\n") + kUsage);
    if (spec.x.empty() || spec.y.empty())
      throw PlotUsageError("expected --x COLUMN and --y COLUMN");
    const std::string ext = ends_with_lower(spec.out);
    if (ext != "svg" && ext != "png") {
      throw PlotUsageError("--out: expected a file name ending in .svg or .png, found \"" +
                           spec.out + "\"");
    }
    std::ifstream in(csv_path, std::ios::binary);
    if (!in) throw PlotUsageError(csv_path + ": cannot read file: " + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    script = gnuplot_script(parse_csv(text.str(), csv_path), spec);
  } catch (const PlotUsageError& e) {
    err << "syncsim plot: " << e.what() << "\n";
    return 2;
  }

  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) {
    err << "syncsim plot: gnuplot not found on PATH; install the Debian package " << kPackage
        << " (apt-get install " << kPackage << ")\n";
    return 1;
  }
  const std::string script_path = spec.out + ".gp";
  {
    std::ofstream f(script_path, std::ios::binary);
    f << script;
    if (!f) {
      err << "syncsim plot: cannot write " << script_path << "\n";
      return 1;
    }
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    err << "syncsim plot: cannot start gnuplot: " << std::strerror(errno) << "\n";
    return 1;
  }
  if (pid == 0) {
    const char* argv[] = {gnuplot.c_str(), script_path.c_str(), nullptr};
    ::execv(gnuplot.c_str(), const_cast<char* const*>(argv));
    std::_Exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    err << "syncsim plot: gnuplot failed on " << script_path << " (" << kPackage << ": " << gnuplot
        << ")\n";
    return 1;
  }
  struct stat st {};
  if (::stat(spec.out.c_str(), &st) != 0 || st.st_size == 0) {
    err << "syncsim plot: gnuplot wrote nothing to " << spec.out << "\n";
    return 1;
  }
  out << "wrote " << spec.out << " (script " << script_path << ")\n";
  return 0;
}

}  // namespace syncsim::app
