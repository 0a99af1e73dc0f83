// Renders a run through the result schema's one table (result_schema.hpp): the `--json` object
// and the markdown table of its keys that docs/cli.md carries.
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>

#include "run/result_schema.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

using json = nlohmann::json;

std::string result_keys_markdown() {
  std::ostringstream o;
  o << "| key | unit | description |\n|---|---|---|\n";
  for (const ResultKey& k : result_keys()) {
    o << "| `" << k.path << "` | " << k.unit << " | " << k.description;
    if (!k.column.empty() && k.column != k.path) o << "; sweep column `" << k.column << "`";
    o << " |\n";
  }
  return o.str();
}

nlohmann::json to_json(const RunResult& r) {
  json j = json::object();
  for (const ResultKey& k : result_keys()) {
    if (k.read == nullptr || !result_key_present(k, r)) continue;
    json* at = &j;
    std::string_view rest = k.path;
    for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
      at = &(*at)[std::string(rest.substr(0, dot))];
      rest.remove_prefix(dot + 1);
    }
    (*at)[std::string(rest)] = k.read(r);
  }
  return j;
}

}  // namespace syncsim::app
