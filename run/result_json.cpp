// Renders a run through the result schema's one table (result_schema.hpp): the `--json` object,
// the markdown table of its keys that docs/cli.md carries, and the lookups by path and column.
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

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

const ResultKey* find_result_key(std::string_view path) {
  for (const ResultKey& k : result_keys()) {
    if (k.path == path && k.read != nullptr) return &k;
  }
  return nullptr;
}

const ResultKey* find_result_column(std::string_view column) {
  if (column.empty()) return nullptr;
  for (const ResultKey& k : result_keys()) {
    if (k.column == column) return &k;
  }
  return nullptr;
}

std::vector<std::string> result_column_names() {
  std::vector<std::string> names;
  for (const ResultKey& k : result_keys()) {
    if (!k.column.empty()) names.emplace_back(k.column);
  }
  return names;
}

}  // namespace syncsim::app
