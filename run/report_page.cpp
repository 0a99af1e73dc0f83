#include "run/report_page.hpp"

#include <array>
#include <cstddef>
#include <sstream>
#include <utility>

#include "run/report_format.hpp"
#include "run/report_sections.hpp"

namespace syncsim::app {

using json = nlohmann::json;

namespace {

std::string what_text(const std::string& file, const std::string& path, const std::string& message,
                      int line, int column) {
  std::ostringstream w;  // (not string +: GCC 12's -Wrestrict misfires on that chain)
  w << file;
  if (line > 0) w << ":" << line << ":" << column;
  w << ": ";
  if (!path.empty()) w << path << ": ";
  w << message;
  return w.str();
}

}  // namespace

ReportInputError::ReportInputError(std::string file, std::string path, std::string message,
                                   int line, int column)
    : std::invalid_argument(what_text(file, path, message, line, column)),
      file_(std::move(file)),
      path_(std::move(path)),
      message_(std::move(message)),
      line_(line),
      column_(column) {}

namespace report {

const json* RunInput::find(std::string_view dotted) const {
  const json* at = &j;
  while (!dotted.empty()) {
    const auto dot = dotted.find('.');
    const std::string key(dotted.substr(0, dot));
    if (!at->is_object()) return nullptr;
    const auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
    dotted = dot == std::string_view::npos ? std::string_view{} : dotted.substr(dot + 1);
  }
  return at;
}

const json* RunInput::number(std::string_view dotted) const {
  const json* v = find(dotted);
  if (v != nullptr && !v->is_number()) {
    throw ReportInputError(file, std::string(dotted), "expected a number, found " + v->dump());
  }
  return v;
}

const json& RunInput::list(std::string_view dotted) const {
  static const json kEmpty = json::array();
  const json* v = find(dotted);
  if (v == nullptr) return kEmpty;
  if (!v->is_array()) {
    throw ReportInputError(file, std::string(dotted),
                           "expected a list, found " + std::string(v->type_name()));
  }
  return *v;
}

double RunInput::member(const json& value, std::string_view list_path,
                        std::string_view name) const {
  const std::string path = std::string(list_path) + "[]." + std::string(name);
  if (!value.is_object()) throw ReportInputError(file, path, "expected an object");
  const auto it = value.find(std::string(name));
  if (it == value.end() || !it->is_number()) {
    throw ReportInputError(file, path,
                           it == value.end() ? "expected a number, found nothing"
                                             : "expected a number, found " + it->dump());
  }
  return it->get<double>();
}

std::string note(std::string_view html) {
  return "<p class=\"note\">" + std::string(html) + "</p>\n";
}

}  // namespace report

namespace {

using report::escape;

// Offline by construction: the Content-Security-Policy forbids every fetch (no connect, no
// external script, style or image), so a page that tried would log a violation the browser test
// catches. The first script records errors (uncaught and console.error) for the last one, which
// checks every section that promises a chart has drawn one.
constexpr const char* kHead = R"(<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d2330;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}
header p{margin:2px 0 0;color:#b8c0cc;font-size:12px}
main{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:16px;padding:16px 24px}
section{background:#fff;border:1px solid #dde1e7;border-radius:6px;padding:12px 16px}
section h2{font-size:15px;margin:0 0 8px}section.wide{grid-column:1/-1}
table{border-collapse:collapse;font-size:13px}td,th{padding:2px 10px 2px 0;text-align:left;vertical-align:top}
td.v{font-variant-numeric:tabular-nums;text-align:right}th{border-bottom:1px solid #dde1e7}
.note{color:#5a6270;font-style:italic;margin:6px 0}.warn{color:#9a3b00}
svg{display:block;max-width:100%;height:auto}svg text{font:11px system-ui,sans-serif;fill:#1d2330}
footer{padding:4px 24px 16px;color:#5a6270;font-size:12px}
</style>
<script>
window.pageErrors = [];
window.addEventListener("error", function (e) { window.pageErrors.push(String(e.message)); });
(function () {
  var original = console.error;
  console.error = function () {
    window.pageErrors.push(Array.prototype.join.call(arguments, " "));
    original.apply(console, arguments);
  };
})();
</script>
)";

constexpr const char* kCheck =
    R"(<footer><span id="page-check" data-status="pending">page check: pending</span></footer>
<script>
document.addEventListener("DOMContentLoaded", function () {
  var missing = [];
  document.querySelectorAll("[data-expect-svg]").forEach(function (s) {
    if (!s.querySelector("svg")) missing.push(s.id);
  });
  var check = document.getElementById("page-check");
  var ok = missing.length === 0 && window.pageErrors.length === 0;
  check.dataset.status = ok ? "ok" : "failed";
  check.textContent = "page check: " + (ok ? "ok, " + document.querySelectorAll("svg").length +
      " charts drawn" : "failed: " + missing.concat(window.pageErrors).join("; "));
});
</script>
)";

std::string page(const std::string& title, const std::string& file, const std::string& body) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<title>syncsim report: " << escape(title)
    << "</title>\n"
    << kHead << "</head>\n<body>\n<header><h1>syncsim report: " << escape(title) << "</h1><p>from "
    << escape(file) << "</p></header>\n<main>\n"
    << body << "</main>\n"
    << kCheck << "</body>\n</html>\n";
  return o.str();
}

enum class Unit : std::uint8_t { Text, Count, Seconds, Bytes, Ratio, Percent };

struct SummaryRow {
  const char* path;
  const char* label;
  Unit unit;
};

std::string summary_value(const json& v, Unit unit) {
  if (v.is_string()) return escape(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (!v.is_number()) return escape(v.dump());
  const double x = v.get<double>();
  switch (unit) {
    case Unit::Seconds:
      return report::seconds(x);
    case Unit::Bytes:
      return report::bytes(x);
    case Unit::Percent:
      return report::percent(x);
    case Unit::Ratio:
      return report::number(x);
    case Unit::Count:
    case Unit::Text:
      break;
  }
  return v.dump();
}

std::string summary_section(const report::RunInput& in) {
  static constexpr std::array<SummaryRow, 24> kRows{{
      {"fidelity", "fidelity", Unit::Text},
      {"seed", "seed", Unit::Count},
      {"transport", "transport", Unit::Text},
      {"sim_time_s", "simulated time", Unit::Seconds},
      {"wall_s", "wall time", Unit::Seconds},
      {"events", "events", Unit::Count},
      {"fabric.gpus", "GPUs", Unit::Count},
      {"fabric.hosts", "hosts", Unit::Count},
      {"fabric.switches", "switches", Unit::Count},
      {"fabric.links", "links", Unit::Count},
      {"step_time_s", "step time", Unit::Seconds},
      {"mfu", "MFU", Unit::Percent},
      {"tokens_per_s", "tokens/s", Unit::Ratio},
      {"exposed_comm_s", "exposed communication", Unit::Seconds},
      {"bound_by", "bound by", Unit::Text},
      {"parallelism", "parallelism", Unit::Text},
      {"memory_per_gpu_bytes", "memory per GPU", Unit::Bytes},
      {"messages.count", "messages", Unit::Count},
      {"messages.completed", "messages completed", Unit::Count},
      {"messages.fct_s.p50", "FCT median", Unit::Seconds},
      {"messages.fct_s.p99", "FCT p99", Unit::Seconds},
      {"bytes_delivered", "bytes delivered", Unit::Bytes},
      {"bytes_dropped", "bytes dropped", Unit::Bytes},
      {"max_queue_bytes", "deepest queue", Unit::Bytes},
  }};
  std::ostringstream o;
  const json* messages = in.number("messages.count");
  const bool no_messages = messages == nullptr || messages->get<double>() == 0;
  o << "<section id=\"summary\"><h2>Scenario summary</h2>\n<table>\n";
  for (const SummaryRow& row : kRows) {
    const json* v = in.find(row.path);
    if (v == nullptr || v->is_null()) continue;
    // A run without `traffic:` messages: leave out their empty statistics.
    if (std::string_view(row.path).starts_with("messages.") && no_messages) continue;
    o << "<tr><td>" << row.label << "</td><td class=\"v\">" << summary_value(*v, row.unit)
      << "</td></tr>\n";
  }
  o << "</table>\n";
  const json& warnings = in.list("warnings");
  for (const json& w : warnings) {
    o << "<p class=\"warn\">warning: " << escape(w.is_string() ? w.get<std::string>() : w.dump())
      << "</p>\n";
  }
  o << "</section>\n";
  return o.str();
}

// 1-based line and column of byte `offset` of `text`.
std::pair<int, int> line_column(const std::string& text, std::size_t offset) {
  int line = 1;
  int column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

std::string run_page(const std::string& file, const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_column(text, e.byte > 0 ? e.byte - 1 : 0);
    throw ReportInputError(file, "", "expected a `syncsim run --json` result, found invalid JSON",
                           line, column);
  }
  const report::RunInput in{j, file};
  for (const char* key : {"scenario", "fidelity"}) {
    const json* v = in.find(key);
    if (v == nullptr || !v->is_string()) {
      throw ReportInputError(file, key,
                             "expected a `syncsim run --json` result with a text `" +
                                 std::string(key) + "`, found " +
                                 (v == nullptr ? std::string("no such key") : v->dump()));
    }
  }
  if (in.number("sim_time_s") == nullptr) {
    throw ReportInputError(file, "sim_time_s",
                           "expected a `syncsim run --json` result, found no such key");
  }
  const std::string body = summary_section(in) + report::fabric_section(in) +
                           report::step_section(in) + report::ports_section(in) +
                           report::timeline_section(in);
  return page(j["scenario"].get<std::string>(), file, body);
}

}  // namespace

std::string report_page(const std::string& file, const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    throw ReportInputError(file, "",
                           "expected a `syncsim run --json` result or a sweep CSV, found an empty "
                           "file");
  }
  if (text[first] == '{') return run_page(file, text);
  if (text[first] == '[') {
    throw ReportInputError(file, "",
                           "expected a `syncsim run --json` result or a sweep CSV, found a JSON "
                           "list (`syncsim sweep --json` output? write the sweep with --csv)");
  }
  return page("sweep " + file, file, report::sweep_body(file, text));
}

}  // namespace syncsim::app
