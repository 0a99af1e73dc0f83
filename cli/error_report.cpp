#include "cli/error_report.hpp"

#include "calibration/nccl_tests_log.hpp"
#include "run/report_page.hpp"
#include "scenario/scenario_loader.hpp"

namespace syncsim::app {

ErrorReport error_report(const std::exception& e) {
  if (const auto* s = dynamic_cast<const ScenarioError*>(&e)) {
    return {s->file(), s->line(), s->column(), s->path(), s->message()};
  }
  if (const auto* r = dynamic_cast<const ReportInputError*>(&e)) {
    return {r->file(), r->line(), r->column(), r->path(), r->message()};
  }
  if (const auto* p = dynamic_cast<const calibration::ParseError*>(&e)) {
    return {p->file(), p->line(), 0, {}, p->message()};
  }
  return {{}, 0, 0, {}, e.what()};
}

nlohmann::json error_json(const ErrorReport& r) {
  using json = nlohmann::json;
  const auto text_or_null = [](const std::string& s) {
    return s.empty() ? json(nullptr) : json(s);
  };
  const auto number_or_null = [](int n) { return n > 0 ? json(n) : json(nullptr); };
  return {{"error",
           {{"file", text_or_null(r.file)},
            {"line", number_or_null(r.line)},
            {"column", number_or_null(r.column)},
            {"path", text_or_null(r.path)},
            {"message", r.message}}}};
}

}  // namespace syncsim::app
