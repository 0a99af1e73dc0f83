// The sweep page of `syncsim report`: a `syncsim sweep --csv` table (run/sweep.hpp: the axis
// columns, named by their dotted scenario path, then result-schema columns) drawn as one small line
// plot per metric column and swept axis, then the table.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "run/csv_records.hpp"
#include "run/report_format.hpp"
#include "run/report_page.hpp"
#include "run/report_sections.hpp"
#include "run/result_schema.hpp"

namespace syncsim::app::report {

namespace {

using Row = std::vector<std::string>;

// The records with the 1-based line each starts on (run/csv_records.hpp).
std::vector<std::pair<int, Row>> parse_csv(const std::string& file, const std::string& text) {
  std::vector<std::pair<int, Row>> records;
  try {
    for (CsvRecord& r : read_csv_records(text)) records.emplace_back(r.line, std::move(r.fields));
  } catch (const CsvQuoteError& e) {
    throw ReportInputError(file, "", "expected a closing quote", e.line, 1);
  }
  return records;
}

bool parse_number(const std::string& s, double& out) {
  if (s.empty()) return false;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(out);
}

struct Plot {
  std::string x_name;
  std::string y_name;
  std::string y_unit;                 // the result schema's unit of the column ("s", "B", ...)
  std::vector<std::string> x_labels;  // categorical axis: in order of first appearance
  bool numeric_x = true;
  std::map<std::string, std::vector<std::pair<double, double>>> series;  // other axes -> (x, y)
};

// A value of the plotted column, in its unit.
std::string value_text(double v, const std::string& unit) {
  if (unit == "s") return seconds(v);
  if (unit == "B") return bytes(v);
  if (unit == "bit/s") return bits_per_second(v);
  return number(v);
}

std::string draw(const Plot& p) {
  constexpr double kW = 300;
  constexpr double kPlotH = 190;
  constexpr double kL = 58;
  constexpr double kR = 26;
  constexpr std::size_t kLegendMax = 6;
  const std::size_t legend = p.series.size() > 1 ? std::min(p.series.size(), kLegendMax) : 0;
  const double kH = kPlotH + 14.0 * static_cast<double>(legend);
  constexpr double kT = 22;
  constexpr double kB = 36;
  double x0 = 1e300;
  double x1 = -1e300;
  double y0 = 1e300;
  double y1 = -1e300;
  for (const auto& [name, points] : p.series) {
    for (const auto& [x, y] : points) {
      x0 = std::min(x0, x);
      x1 = std::max(x1, x);
      y0 = std::min(y0, y);
      y1 = std::max(y1, y);
    }
  }
  if (x1 <= x0) x1 = x0 + 1;
  if (y0 > 0 && y0 < 0.5 * y1) y0 = 0;  // from zero when that does not flatten the lines
  if (y1 <= y0) y1 = y0 + 1;
  const auto px = [&](double x) { return kL + (kW - kL - kR) * (x - x0) / (x1 - x0); };
  const auto py = [&](double y) { return kPlotH - kB - (kPlotH - kT - kB) * (y - y0) / (y1 - y0); };
  std::ostringstream o;
  o << "<svg viewBox=\"0 0 " << kW << " " << kH << "\" width=\"" << kW << "\" height=\"" << kH
    << "\" role=\"img\" aria-label=\"" << escape(p.y_name + " against " + p.x_name)
    << "\" class=\"sweep-plot\">\n";
  o << "<text x=\"" << kW / 2 << "\" y=\"14\" text-anchor=\"middle\">" << escape(p.y_name)
    << "</text>\n";
  o << "<line x1=\"" << kL << "\" y1=\"" << kPlotH - kB << "\" x2=\"" << kW - kR << "\" y2=\""
    << kPlotH - kB << "\" stroke=\"#8a919c\"/>\n<line x1=\"" << kL << "\" y1=\"" << kT << "\" x2=\""
    << kL << "\" y2=\"" << kPlotH - kB << "\" stroke=\"#8a919c\"/>\n";
  for (const double y : {y0, (y0 + y1) / 2, y1}) {
    o << "<text x=\"" << kL - 4 << "\" y=\"" << py(y) + 4 << "\" text-anchor=\"end\">"
      << value_text(y, p.y_unit) << "</text>\n";
  }
  if (p.numeric_x) {
    for (const double x : {x0, (x0 + x1) / 2, x1}) {
      o << "<text x=\"" << px(x) << "\" y=\"" << kPlotH - kB + 14 << "\" text-anchor=\"middle\">"
        << number(x) << "</text>\n";
    }
  } else {
    for (std::size_t i = 0; i < p.x_labels.size(); ++i) {
      o << "<text x=\"" << px(static_cast<double>(i)) << "\" y=\"" << kPlotH - kB + 14
        << "\" text-anchor=\"middle\">" << escape(p.x_labels[i]) << "</text>\n";
    }
  }
  o << "<text x=\"" << (kL + kW - kR) / 2 << "\" y=\"" << kPlotH - 6 << "\" text-anchor=\"middle\">"
    << escape(p.x_name) << "</text>\n";
  std::size_t s = 0;
  for (const auto& [name, points] : p.series) {
    const std::string colour = category_colour(s++);
    o << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\"";
    for (const auto& [x, y] : points) o << px(x) << "," << py(y) << " ";
    o << "\"><title>" << escape(name) << "</title></polyline>\n";
    for (const auto& [x, y] : points) {
      o << "<circle cx=\"" << px(x) << "\" cy=\"" << py(y) << "\" r=\"3\" fill=\"" << colour
        << "\"><title>" << escape(name) << " " << value_text(y, p.y_unit) << "</title></circle>\n";
    }
    if (s <= legend) {
      const double ly = kPlotH + 14.0 * static_cast<double>(s - 1) + 4;
      o << "<circle cx=\"" << kL << "\" cy=\"" << ly << "\" r=\"4\" fill=\"" << colour
        << "\"/><text x=\"" << kL + 8 << "\" y=\"" << ly + 4 << "\">"
        << escape(s == kLegendMax && p.series.size() > kLegendMax ? "... (hover the lines)" : name)
        << "</text>\n";
    }
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace

std::string sweep_body(const std::string& file, const std::string& text) {
  const auto records = parse_csv(file, text);
  const std::string expected =
      "expected a `syncsim run --json` result or a `syncsim sweep --csv` "
      "table";
  if (records.size() < 2 || records.front().second.size() < 2) {
    throw ReportInputError(file, "", expected + ", found neither", 1, 1);
  }
  const Row& header = records.front().second;
  std::vector<std::size_t> axes;
  std::vector<std::size_t> metrics;
  for (std::size_t c = 0; c < header.size(); ++c) {
    (find_result_column(header[c]) != nullptr ? metrics : axes).push_back(c);
  }
  if (metrics.empty() || axes.empty()) {
    throw ReportInputError(
        file, "",
        expected + ", found a header with " +
            (metrics.empty() ? std::string("no result column") : std::string("no swept axis")) +
            " (\"" + header.front() + "\", ...)",
        1, 1);
  }
  for (const auto& [line, row] : records) {
    if (row.size() != header.size()) {
      throw ReportInputError(file, "",
                             "expected " + std::to_string(header.size()) +
                                 " fields as in the header, found " + std::to_string(row.size()),
                             line, 1);
    }
  }
  std::ostringstream plots;
  std::vector<std::string> constant;
  std::vector<std::string> text_columns;
  std::size_t drawn = 0;
  for (const std::size_t m : metrics) {
    if (header[m] == "wall_s") continue;  // the machine's time, not the model's
    std::vector<double> ys;
    bool numeric = true;
    for (std::size_t r = 1; r < records.size() && numeric; ++r) {
      double y = 0;
      numeric = parse_number(records[r].second[m], y);
      ys.push_back(y);
    }
    if (!numeric) {
      text_columns.push_back(header[m]);
      continue;
    }
    if (std::all_of(ys.begin(), ys.end(), [&](double y) { return y == ys.front(); })) {
      constant.push_back(header[m] + " = " + number(ys.front()));
      continue;
    }
    for (const std::size_t a : axes) {
      Plot p{header[a], header[m], std::string(find_result_column(header[m])->unit), {}, true, {}};
      for (std::size_t r = 1; r < records.size(); ++r) {
        double x = 0;
        if (!parse_number(records[r].second[a], x)) p.numeric_x = false;
      }
      for (std::size_t r = 1; r < records.size(); ++r) {
        const Row& row = records[r].second;
        std::string series;
        for (const std::size_t other : axes) {
          if (other != a) series += (series.empty() ? "" : ", ") + header[other] + "=" + row[other];
        }
        double x = 0;
        if (p.numeric_x) {
          parse_number(row[a], x);
        } else {
          auto it = std::find(p.x_labels.begin(), p.x_labels.end(), row[a]);
          if (it == p.x_labels.end()) it = p.x_labels.insert(p.x_labels.end(), row[a]);
          x = static_cast<double>(it - p.x_labels.begin());
        }
        p.series[series.empty() ? header[m] : series].emplace_back(x, ys[r - 1]);
      }
      for (auto& [name, points] : p.series) std::sort(points.begin(), points.end());
      plots << draw(p);
      ++drawn;
    }
  }
  std::ostringstream o;
  o << "<section id=\"sweep\" class=\"wide\"" << (drawn > 0 ? " data-expect-svg" : "")
    << "><h2>Sweep: " << records.size() - 1 << " points over " << axes.size()
    << (axes.size() == 1 ? " axis" : " axes") << "</h2>\n";
  if (axes.size() > 1) {
    o << note(
        "One plot per result column and swept axis; each line holds the other axes fixed "
        "(hover a line for its values).");
  }
  o << "<div class=\"plots\" style=\"display:flex;flex-wrap:wrap;gap:8px\">\n"
    << plots.str() << "</div>\n";
  if (drawn == 0) o << note("No result column varies across the points: nothing to plot.");
  if (!constant.empty()) {
    std::string list;
    for (const auto& c : constant) list += (list.empty() ? "" : ", ") + escape(c);
    o << note("The same at every point: " + list + ".");
  }
  if (!text_columns.empty()) {
    std::string list;
    for (const auto& c : text_columns) list += (list.empty() ? "" : ", ") + escape(c);
    o << note("Text columns (in the table, not plotted): " + list + ".");
  }
  o << "</section>\n<section id=\"sweep-table\" class=\"wide\"><h2>Points</h2>\n"
    << "<div style=\"overflow-x:auto\"><table>\n<tr>";
  for (const auto& h : header) o << "<th>" << escape(h) << "</th>";
  o << "</tr>\n";
  constexpr std::size_t kMaxRows = 500;
  for (std::size_t r = 1; r < records.size() && r <= kMaxRows; ++r) {
    o << "<tr>";
    for (std::size_t c = 0; c < header.size(); ++c) {
      double v = 0;
      const std::string& cell = records[r].second[c];
      if (parse_number(cell, v)) {
        o << "<td class=\"v\">" << number(v) << "</td>";
      } else {
        o << "<td>" << escape(cell) << "</td>";
      }
    }
    o << "</tr>\n";
  }
  o << "</table></div>\n";
  if (records.size() - 1 > kMaxRows) o << note("The first 500 points are listed.");
  o << "</section>\n";
  return o.str();
}

}  // namespace syncsim::app::report
