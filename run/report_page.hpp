#pragma once
// `syncsim report`: one self-contained HTML page (inline CSS, inline SVG drawn here, a few lines of
// inline script that only check the page; no external URL, so it opens offline) from either
//   - a `syncsim run --json` result: the scenario summary, the fabric drawn as tiers coloured by
//     link utilisation (link_tiers), the step breakdown as a bar (step_shares), the per-rank
//     timeline of the first ranks (rank_timeline, buckets, collectives), the most paused ports and
//     the congested queue; or
//   - a `syncsim sweep --csv` table: every metric column that varies plotted against each swept
//     axis (one line per value of the other axes), then the table itself.
// What the input does not hold is said on the page (an analytic run has no paused ports), never
// drawn from made-up numbers. Sections: report_run_sections.cpp, report_sweep.cpp.
#include <stdexcept>
#include <string>

namespace syncsim::app {

// Input that is neither a run result nor a sweep CSV, or a value of the wrong type. `path` is the
// dotted key (or "row N" of a CSV); line and column are 1-based, 0 when unknown. The CLI prints
// what() on one line and exits 2.
class ReportInputError : public std::invalid_argument {
 public:
  ReportInputError(std::string file, std::string path, std::string message, int line = 0,
                   int column = 0);
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }
  const std::string& message() const { return message_; }
  int line() const { return line_; }
  int column() const { return column_; }

 private:
  std::string file_;
  std::string path_;
  std::string message_;
  int line_;
  int column_;
};

// The page for `text`, the contents of `file` (named on the page and in errors): a JSON object is
// read as a run result, anything else as a sweep CSV. Throws ReportInputError.
std::string report_page(const std::string& file, const std::string& text);

}  // namespace syncsim::app
