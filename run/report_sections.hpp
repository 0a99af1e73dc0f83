#pragma once
// The sections of the report page (run/report_page.hpp), each an HTML fragment with its own id so
// the browser test (tests/cli/test_report_browser.sh) can find it.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace syncsim::app::report {

// A result being read: the JSON and the file it came from, for errors.
struct RunInput {
  const nlohmann::json& j;
  const std::string& file;
  // The value at a dotted path ("pfc.top_paused_ports"), nullptr when absent.
  const nlohmann::json* find(std::string_view dotted) const;
  // The number at `dotted`, or nullptr when absent; ReportInputError when it is not a number.
  const nlohmann::json* number(std::string_view dotted) const;
  // The list at `dotted` (empty when absent); ReportInputError when it is not a list.
  const nlohmann::json& list(std::string_view dotted) const;
  // `value` must be an object with a number `member`; its value.
  double member(const nlohmann::json& value, std::string_view list_path,
                std::string_view member) const;
};

std::string fabric_section(const RunInput& in);    // id="fabric"
std::string step_section(const RunInput& in);      // id="step"
std::string timeline_section(const RunInput& in);  // id="timeline"
std::string ports_section(const RunInput& in);     // id="ports"

// The whole page for a sweep CSV (id="sweep").
std::string sweep_body(const std::string& file, const std::string& text);

// "<p class=note>text</p>", for what the input does not contain.
std::string note(std::string_view html);

}  // namespace syncsim::app::report
