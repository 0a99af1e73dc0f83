// The typed YAML readers, map views and error construction shared by every section reader.
#include "scenario/yaml_reader.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "scenario/scenario_loader.hpp"
#include "scenario/units.hpp"

namespace syncsim::app::yaml_reader {

// Appended piecewise: GCC 12 at -O3 reports a false -Wrestrict for `"\"" + std::string(s)`.
std::string quoted(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  return out.append("\"").append(s).append("\"");
}

std::string join_path(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string join_path(const std::string& parent, std::size_t index) {
  return join_path(parent, std::to_string(index));
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) {
      break;
    }
    start = dot + 1;
  }
  return parts;
}

std::optional<std::size_t> parse_index(const std::string& s) {
  if (s.empty() || s.size() > 9) {
    return std::nullopt;
  }
  std::size_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    v = v * 10 + static_cast<std::size_t>(c - '0');
  }
  return v;
}

std::string describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Scalar:
      return quoted(node.Scalar());
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return "nothing (null)";
}

std::string one_of(const std::vector<std::string_view>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) {
      out += ", ";
    }
    out += names[i];
  }
  return out;
}

std::string one_of_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Reader::Reader(std::string source, const OverriddenTree& tree)
    : source_(std::move(source)), root_(tree.root), override_paths_(tree.override_paths) {}

ScenarioError Reader::error_at(const std::string& where_path, const YAML::Node& where,
                               const std::string& path, const std::string& message) const {
  const YAML::Mark m = where.Mark();
  const bool valid = !m.is_null();
  if (from_override(where_path)) {
    return {kOverrideSource, valid ? m.line + 1 : 1, valid ? m.column + 1 : 1, path, message};
  }
  if (!valid) return {source_, 1, 1, path, message};
  return {source_, m.line + 1, m.column + 1, path, message};
}

void Reader::fail_at(const std::string& where_path, const YAML::Node& where,
                     const std::string& path, const std::string& message) const {
  throw error_at(where_path, where, path, message);
}

std::string Reader::warning_at(const std::string& path, const YAML::Node& node,
                               const std::string& message) const {
  return error_at(path, node, path, message).what();
}

bool Reader::from_override(const std::string& path) const {
  for (const std::string& o : override_paths_) {
    if (path == o ||
        (path.size() > o.size() && path.compare(0, o.size(), o) == 0 && path[o.size()] == '.')) {
      return true;
    }
  }
  return false;
}

YAML::Node Reader::deepest_node(const std::string& path, std::string& walked) const {
  YAML::Node cur;
  cur.reset(root_);
  walked.clear();
  for (const std::string& part : split_path(path)) {
    YAML::Node next;
    if (cur.IsMap()) {
      const YAML::Node& const_cur = cur;
      const YAML::Node child = const_cur[part];
      if (!child.IsDefined()) {
        break;
      }
      next.reset(child);
    } else if (cur.IsSequence()) {
      const std::optional<std::size_t> index = parse_index(part);
      if (!index || *index >= cur.size()) {
        break;
      }
      const YAML::Node& const_cur = cur;
      next.reset(const_cur[*index]);
    } else {
      break;
    }
    cur.reset(next);
    walked = join_path(walked, part);
  }
  return cur;
}

void Reader::fail_path(const std::string& path, const std::string& message) const {
  std::string walked;
  const YAML::Node node = deepest_node(path, walked);
  fail_at(walked, node, path, message);
}

bool Reader::has(const std::string& path) const {
  std::string walked;
  const YAML::Node node = deepest_node(path, walked);
  return walked == path && !node.IsNull();
}

void Reader::warn(const std::string& path, const std::string& message) const {
  if (path.empty()) {
    warnings_.push_back(message);
    return;
  }
  std::string walked;
  const YAML::Node node = deepest_node(path, walked);
  warnings_.push_back(error_at(walked, node, path, message).what());
}

namespace {

// The YAML path below `path` of a struct field, through `keys`.
std::string key_path(const std::string& path, const std::string& field,
                     const Reader::FieldKeys& keys) {
  for (const auto& [name, key] : keys) {
    if (field == name) return join_path(path, key);
    if (field.size() > name.size() && field.compare(0, name.size(), name) == 0 &&
        field[name.size()] == '.') {
      return join_path(path, std::string(key) + field.substr(name.size()));
    }
  }
  return join_path(path, field);
}

}  // namespace

void Reader::check_fields(const std::string& path, const FieldErrors& errors,
                          const FieldKeys& keys) const {
  if (errors.empty()) {
    return;
  }
  const FieldError& e = errors.front();
  const std::string field_path = key_path(path, e.field, keys);
  std::string walked;
  const YAML::Node node = deepest_node(field_path, walked);
  // Cite the value as written ("0.0", "2e1") when the field itself is in the file.
  const bool written = walked == field_path && node.IsScalar();
  const std::string message =
      e.value.empty() ? e.message : e.message + ", got " + (written ? node.Scalar() : e.value);
  fail_at(walked, node, field_path, message);
}

const std::string& Reader::scalar(const YAML::Node& node, const std::string& path,
                                  const std::string& expected) const {
  if (!node.IsScalar()) {
    fail(path, node, "expected " + expected + ", got " + describe(node));
  }
  return node.Scalar();
}

std::string Reader::read_string(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a string");
  if (s.empty()) {
    fail(path, node, "expected a non-empty string, got \"\"");
  }
  return s;
}

uint64_t Reader::read_uint(const YAML::Node& node, const std::string& path, uint64_t min,
                           uint64_t max) const {
  const std::string& s = scalar(node, path, "a non-negative integer");
  bool digits = !s.empty();
  for (char c : s) {
    digits = digits && c >= '0' && c <= '9';
  }
  // Also rejects "-3", "1.5", "1e3", "0x10": counts are written as plain decimal integers.
  if (!digits) {
    fail(path, node, "expected a non-negative integer, got " + quoted(s));
  }
  errno = 0;
  const unsigned long long v = std::strtoull(s.c_str(), nullptr, 10);
  if (errno == ERANGE || v < min || v > max) {
    fail(path, node,
         "expected an integer in " + std::to_string(min) + ".." + std::to_string(max) + ", got " +
             s);
  }
  return v;
}

int64_t Reader::read_int(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "an integer");
  const std::size_t first = !s.empty() && (s[0] == '-' || s[0] == '+') ? 1 : 0;
  bool digits = s.size() > first;
  for (std::size_t i = first; i < s.size(); ++i) {
    digits = digits && s[i] >= '0' && s[i] <= '9';
  }
  if (!digits) {
    fail(path, node, "expected an integer, got " + quoted(s));
  }
  errno = 0;
  const long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) {
    fail(path, node, "expected a 64-bit integer, got " + s);
  }
  return v;
}

double Reader::read_number(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a number");
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) {
    fail(path, node, "expected a finite number, got " + quoted(s));
  }
  return v;
}

bool Reader::read_bool(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "true or false");
  if (s == "true" || s == "True" || s == "TRUE") {
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    return false;
  }
  fail(path, node, "expected true or false, got " + quoted(s));
}

Time Reader::read_time(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a time like \"1.5us\"");
  try {
    return parse_time(s);
  } catch (const UnitError& e) {
    fail(path, node, e.what());
  }
}

Bytes Reader::read_bytes(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a size like \"64MiB\"");
  try {
    return parse_bytes(s);
  } catch (const UnitError& e) {
    fail(path, node, e.what());
  }
}

Bandwidth Reader::read_bandwidth(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a bandwidth like \"400Gbps\"");
  try {
    return parse_bandwidth(s);
  } catch (const UnitError& e) {
    fail(path, node, e.what());
  }
}

MapView::MapView(const Reader& reader, const YAML::Node& node, std::string path,
                 const std::vector<std::string_view>& allowed, const std::string& context)
    : reader_(reader), node_(node), path_(std::move(path)) {
  if (!node.IsMap()) {
    reader.fail(path_, node, "expected a map, got " + describe(node));
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key_node = it->first;
    if (!key_node.IsScalar()) {
      reader.fail(path_, key_node, "expected a plain key, got " + describe(key_node));
    }
    const std::string key = key_node.Scalar();
    bool known = false;
    for (std::string_view a : allowed) {
      known = known || a == key;
    }
    if (!known) {
      reader.fail(path_of(key), key_node,
                  "unknown key " + quoted(key) + context + "; expected one of: " + one_of(allowed));
    }
    for (const Entry& e : entries_) {
      if (e.key == key) {
        reader.fail(path_of(key), key_node,
                    "duplicate key " + quoted(key) + " (first given on line " +
                        std::to_string(e.key_node.Mark().line + 1) + ")");
      }
    }
    entries_.push_back(Entry{key, key_node, it->second});
  }
}

const YAML::Node* MapView::find(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) {
      return &e.value;
    }
  }
  return nullptr;
}

const YAML::Node& MapView::require(std::string_view key) const {
  const YAML::Node* v = find(key);
  if (v == nullptr) {
    reader_.fail_at(path_, node_, path_of(key), "missing required key " + quoted(key));
  }
  return *v;
}

}  // namespace syncsim::app::yaml_reader
