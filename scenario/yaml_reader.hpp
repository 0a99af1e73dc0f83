#pragma once
// Private to scenario/ (includes yaml-cpp, which is linked PRIVATE): the typed readers every
// section reader uses, and the file:line:col error construction. Nothing in run/ or cli/ includes
// this.
//
// yaml-cpp handles are kept by value and never assigned to: Node::operator= writes through to the
// tree, so a copy is made with the copy constructor or Node::reset.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "sim/core/field_error.hpp"
#include "sim/core/units.hpp"

namespace syncsim::app::yaml_reader {

// Errors in values that came from --set are reported against this file name.
inline constexpr const char* kOverrideSource = "--set";

std::string quoted(std::string_view s);
std::string join_path(const std::string& parent, std::string_view key);
std::string join_path(const std::string& parent, std::size_t index);
std::vector<std::string> split_path(const std::string& path);
// A path component that indexes a sequence: digits only.
std::optional<std::size_t> parse_index(const std::string& s);
// What a node is, for "expected X, got Y" messages.
std::string describe(const YAML::Node& node);
std::string one_of(const std::vector<std::string_view>& names);
std::string one_of_names(const std::vector<std::string>& names);

// A YAML tree after --set overrides, with the paths the overrides wrote (assigned values and maps
// created on the way to them), so errors in them point at --set instead of the file.
struct OverriddenTree {
  YAML::Node root;
  std::vector<std::string> override_paths;
};

// Reads typed values out of one scenario's tree and turns every problem into a ScenarioError at
// the offending node's file:line:col (or at --set for overridden values).
class Reader {
 public:
  Reader(std::string source, const OverriddenTree& tree);

  const std::string& source() const { return source_; }
  const YAML::Node& root() const { return root_; }
  // Whether the node at `path` (or a map above it) was written by --set.
  bool from_override(const std::string& path) const;

  [[noreturn]] void fail(const std::string& path, const YAML::Node& node,
                         const std::string& message) const {
    fail_at(path, node, path, message);
  }
  // Reports `path` at the position of `where`, the node found at `where_path` (they differ for a
  // missing key, which is reported at its parent).
  [[noreturn]] void fail_at(const std::string& where_path, const YAML::Node& where,
                            const std::string& path, const std::string& message) const;
  // The same `file:line:col: path: message` text for a warning at `node` (nothing is thrown).
  std::string warning_at(const std::string& path, const YAML::Node& node,
                         const std::string& message) const;
  // For errors found after reading (builder, traffic expansion, range rules of parameter
  // structs): points at the deepest node that exists along `path`, so a defaulted key is reported
  // at its parent.
  [[noreturn]] void fail_path(const std::string& path, const std::string& message) const;
  // Where the YAML key of a struct field differs from its name: {field, key}. A field that starts
  // with `field.` has that part replaced too ({"gbn", "go_back_n"} maps "gbn.timeout").
  using FieldKeys = std::vector<std::pair<std::string_view, std::string_view>>;
  // The range rules of a parameter struct read at `path`: the first error, if any, is reported at
  // its field's key (or the deepest node along it), citing the value as written in the YAML.
  void check_fields(const std::string& path, const FieldErrors& errors,
                    const FieldKeys& keys = {}) const;
  // Whether the scenario (after --set) writes the key at `path`, so a warning about a setting is
  // given only where the user stated it, not for a default.
  bool has(const std::string& path) const;
  // A legal but likely wrong input: recorded as `file:line:col: path: message` at the deepest node
  // along `path` (just `message` for an empty path) and reported with the scenario's
  // load_warnings, never an error.
  void warn(const std::string& path, const std::string& message) const;
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Scalar readers. Each checks the node's type and range and reports expected vs got.
  const std::string& scalar(const YAML::Node& node, const std::string& path,
                            const std::string& expected) const;
  std::string read_string(const YAML::Node& node, const std::string& path) const;
  uint64_t read_uint(const YAML::Node& node, const std::string& path, uint64_t min,
                     uint64_t max) const;
  uint32_t read_u32(const YAML::Node& node, const std::string& path, uint32_t min = 0) const {
    return static_cast<uint32_t>(read_uint(node, path, min, std::numeric_limits<uint32_t>::max()));
  }
  int64_t read_int(const YAML::Node& node, const std::string& path) const;
  double read_number(const YAML::Node& node, const std::string& path) const;
  bool read_bool(const YAML::Node& node, const std::string& path) const;
  Time read_time(const YAML::Node& node, const std::string& path) const;
  Bytes read_bytes(const YAML::Node& node, const std::string& path) const;
  Bandwidth read_bandwidth(const YAML::Node& node, const std::string& path) const;
  template <typename E>
  E read_enum(const YAML::Node& node, const std::string& path,
              const std::vector<std::pair<std::string_view, E>>& table) const;

 private:
  ScenarioError error_at(const std::string& where_path, const YAML::Node& where,
                         const std::string& path, const std::string& message) const;

  // The deepest node that exists along `path`; `walked` is set to its path.
  YAML::Node deepest_node(const std::string& path, std::string& walked) const;

  std::string source_;
  YAML::Node root_;
  std::vector<std::string> override_paths_;
  // Readers hold the Reader by const reference; warnings are a log beside the reading.
  mutable std::vector<std::string> warnings_;
};

// The entries of one YAML map, checked against the keys allowed at that place: an unknown or a
// duplicate key is an error when the view is made.
class MapView {
 public:
  MapView(const Reader& reader, const YAML::Node& node, std::string path,
          const std::vector<std::string_view>& allowed, const std::string& context = "");

  const YAML::Node* find(std::string_view key) const;
  // A missing required key is reported at this map's mark (the parent of the missing key).
  const YAML::Node& require(std::string_view key) const;
  std::string path_of(std::string_view key) const { return join_path(path_, key); }
  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }

 private:
  struct Entry {
    std::string key;
    YAML::Node key_node;
    YAML::Node value;
  };
  const Reader& reader_;
  YAML::Node node_;
  std::string path_;
  std::vector<Entry> entries_;
};

template <typename E>
E Reader::read_enum(const YAML::Node& node, const std::string& path,
                    const std::vector<std::pair<std::string_view, E>>& table) const {
  std::vector<std::string_view> names;
  for (const auto& [name, value] : table) {
    names.push_back(name);
  }
  const std::string& s = scalar(node, path, "one of: " + one_of(names));
  for (const auto& [name, value] : table) {
    if (name == s) {
      return value;
    }
  }
  fail(path, node, "expected one of: " + one_of(names) + "; got " + yaml_reader::quoted(s));
}

}  // namespace syncsim::app::yaml_reader
