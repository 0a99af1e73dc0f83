#include "scenario/scenario_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "scenario/default_scenario.hpp"
#include "scenario/units.hpp"
#include "calibration/profile.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app {

namespace {

std::string format_what(const std::string& file, int line, int column, const std::string& path,
                        const std::string& message) {
  std::string out = file;
  if (line > 0) {
    out += ":" + std::to_string(line) + ":" + std::to_string(column);
  }
  out += ": ";
  if (!path.empty()) {
    out += path + ": ";
  }
  return out + message;
}

}  // namespace

ScenarioError::ScenarioError(std::string file, int line, int column, std::string path,
                             std::string message)
    : std::runtime_error(format_what(file, line, column, path, message)),
      file_(std::move(file)),
      line_(line),
      column_(column),
      path_(std::move(path)),
      message_(std::move(message)) {}

namespace {

constexpr const char* kOverrideSource = "--set";

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

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

// A path component that indexes a sequence: digits only.
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

// What a node is, for "expected X, got Y" messages.
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

class Loader;

// The entries of one YAML map, checked against the keys allowed at that place. yaml-cpp handles are
// kept by value and never assigned to: Node::operator= writes through to the tree.
class MapView {
 public:
  MapView(const Loader& loader, const YAML::Node& node, std::string path,
          std::vector<std::string_view> allowed, const std::string& context = "");

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
  const Loader& loader_;
  YAML::Node node_;
  std::string path_;
  std::vector<Entry> entries_;
};

class Loader {
 public:
  Loader(std::string source, const LoadOptions& options)
      : source_(std::move(source)), options_(options) {}

  Scenario load(const std::string& text);

  [[noreturn]] void fail(const std::string& path, const YAML::Node& node,
                         const std::string& message) const {
    fail_at(path, node, path, message);
  }
  // Reports `path` at the position of `where`, the node found at `where_path` (they differ for a
  // missing key, which is reported at its parent).
  [[noreturn]] void fail_at(const std::string& where_path, const YAML::Node& where,
                            const std::string& path, const std::string& message) const {
    if (from_override(where_path)) {
      const YAML::Mark m = where.Mark();
      const bool valid = !m.is_null();
      throw ScenarioError(kOverrideSource, valid ? m.line + 1 : 1, valid ? m.column + 1 : 1, path,
                          message);
    }
    const YAML::Mark m = where.Mark();
    if (m.is_null()) {
      throw ScenarioError(source_, 1, 1, path, message);
    }
    throw ScenarioError(source_, m.line + 1, m.column + 1, path, message);
  }
  // For errors found after reading (builder, traffic expansion): points at the deepest node that
  // exists along `path`, so a defaulted key is reported at its parent.
  [[noreturn]] void fail_path(const std::string& path, const std::string& message) const;

  // Scalar readers. Each checks the node's type and range and reports expected vs got.
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
  bool from_override(const std::string& path) const;
  void apply_override(const Override& o);
  const std::string& scalar(const YAML::Node& node, const std::string& path,
                            const std::string& expected) const;

  Scenario read_root();
  topo::FabricParams read_fabric(const YAML::Node& node, const std::string& path) const;
  void read_link(const YAML::Node& node, const std::string& path, net::LinkParams& link) const;
  void read_pfc(const YAML::Node& node, const std::string& path, net::PfcParams& pfc) const;
  void read_ecn(const YAML::Node& node, const std::string& path, net::EcnParams& ecn) const;
  void read_dcqcn(const YAML::Node& node, const std::string& path, net::DcqcnParams& d) const;
  void read_transport(const YAML::Node& node, const std::string& path, net::TransportParams& t) const;
  void read_impairments(const YAML::Node& node, const std::string& path,
                        net::ImpairmentParams& imp) const;
  ObserveSpec read_observe(const YAML::Node& node, const std::string& path) const;
  ReportSpec read_report(const YAML::Node& node, const std::string& path) const;
  net::FlowCcCorrection read_flow_options(const YAML::Node& node, const std::string& path) const;
  std::vector<RouteOverrideSpec> read_route_overrides(const YAML::Node& node,
                                                      const std::string& path) const;
  models::TrafficSpec read_traffic_entry(const YAML::Node& node, const std::string& path) const;
  models::CollectiveConfig read_collective(const YAML::Node& node, const std::string& path) const;
  models::MessageSpec read_message(const YAML::Node& node, const std::string& path) const;
  WorkloadSpec read_workload(const YAML::Node& node, const std::string& path) const;
  void apply_calibration(const YAML::Node& node, const std::string& path, models::StepConfig& c) const;
  CollectiveCalibration read_collective_calibration(const YAML::Node& node, const std::string& path) const;
  void read_parallelism(const MapView& m, models::StepConfig& c) const;
  void validate(const Scenario& scenario) const;

  std::string source_;
  const LoadOptions& options_;
  YAML::Node root_;
  // Paths whose nodes came from --set (assigned values and maps created on the way to them).
  std::vector<std::string> override_paths_;
};

MapView::MapView(const Loader& loader, const YAML::Node& node, std::string path,
                 std::vector<std::string_view> allowed, const std::string& context)
    : loader_(loader), node_(node), path_(std::move(path)) {
  if (!node.IsMap()) {
    loader.fail(path_, node, "expected a map, got " + describe(node));
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node key_node = it->first;
    if (!key_node.IsScalar()) {
      loader.fail(path_, key_node, "expected a plain key, got " + describe(key_node));
    }
    const std::string key = key_node.Scalar();
    bool known = false;
    for (std::string_view a : allowed) {
      known = known || a == key;
    }
    if (!known) {
      loader.fail(path_of(key), key_node,
                  "unknown key " + quoted(key) + context + "; expected one of: " + one_of(allowed));
    }
    for (const Entry& e : entries_) {
      if (e.key == key) {
        loader.fail(path_of(key), key_node,
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
    loader_.fail_at(path_, node_, path_of(key), "missing required key " + quoted(key));
  }
  return *v;
}

bool Loader::from_override(const std::string& path) const {
  for (const std::string& o : override_paths_) {
    if (path == o ||
        (path.size() > o.size() && path.compare(0, o.size(), o) == 0 && path[o.size()] == '.')) {
      return true;
    }
  }
  return false;
}

void Loader::apply_override(const Override& o) {
  const std::vector<std::string> parts = split_path(o.path);
  for (const std::string& part : parts) {
    if (part.empty()) {
      throw ScenarioError(
          kOverrideSource, 1, 1, o.path,
          "expected a dotted path with non-empty components, got " + quoted(o.path));
    }
  }
  YAML::Node value;
  try {
    value.reset(YAML::Load(o.value));
  } catch (const YAML::ParserException& e) {
    throw ScenarioError(kOverrideSource, e.mark.line + 1, e.mark.column + 1, o.path,
                        "invalid YAML value " + quoted(o.value) + ": " + e.msg);
  }
  // An empty document has no root node to write into; start from an empty map.
  if (!root_.IsDefined() || root_.IsNull()) {
    root_.reset(YAML::Node(YAML::NodeType::Map));
  }
  YAML::Node cur;
  cur.reset(root_);
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string here = join_path(walked, part);
    if (cur.IsSequence()) {
      const std::optional<std::size_t> index = parse_index(part);
      if (!index) {
        throw ScenarioError(
            kOverrideSource, 1, 1, o.path,
            "cannot set " + quoted(o.path) + ": " + walked +
                " is a sequence, so the next path component must be an index, got " + quoted(part));
      }
      if (*index >= cur.size()) {
        throw ScenarioError(kOverrideSource, 1, 1, o.path,
                            "cannot set " + quoted(o.path) + ": index " + part +
                                " is out of range, " + walked + " has " +
                                std::to_string(cur.size()) + " entries");
      }
      if (last) {
        cur[*index] = value;
      } else {
        YAML::Node next = cur[*index];
        cur.reset(next);
      }
    } else if (cur.IsMap() || cur.IsNull() || !cur.IsDefined()) {
      // A null node (an empty `key:` or an empty document) becomes a map, as writing into it
      // implies.
      if (last) {
        cur[part] = value;
      } else {
        const YAML::Node& const_cur = cur;
        if (!const_cur[part].IsDefined()) {
          cur[part] = YAML::Node(YAML::NodeType::Map);
          override_paths_.push_back(here);
        }
        YAML::Node next = cur[part];
        cur.reset(next);
      }
    } else {
      throw ScenarioError(kOverrideSource, 1, 1, o.path,
                          "cannot set " + quoted(o.path) + ": " + walked + " is " + describe(cur) +
                              ", not a map or sequence");
    }
    walked = here;
  }
  override_paths_.push_back(o.path);
}

void Loader::fail_path(const std::string& path, const std::string& message) const {
  YAML::Node cur;
  cur.reset(root_);
  std::string walked;
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
  fail_at(walked, cur, path, message);
}

const std::string& Loader::scalar(const YAML::Node& node, const std::string& path,
                                  const std::string& expected) const {
  if (!node.IsScalar()) {
    fail(path, node, "expected " + expected + ", got " + describe(node));
  }
  return node.Scalar();
}

std::string Loader::read_string(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a string");
  if (s.empty()) {
    fail(path, node, "expected a non-empty string, got \"\"");
  }
  return s;
}

uint64_t Loader::read_uint(const YAML::Node& node, const std::string& path, uint64_t min,
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

int64_t Loader::read_int(const YAML::Node& node, const std::string& path) const {
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

double Loader::read_number(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a number");
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE || !std::isfinite(v)) {
    fail(path, node, "expected a finite number, got " + quoted(s));
  }
  return v;
}

bool Loader::read_bool(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "true or false");
  if (s == "true" || s == "True" || s == "TRUE") {
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    return false;
  }
  fail(path, node, "expected true or false, got " + quoted(s));
}

Time Loader::read_time(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a time like \"1.5us\"");
  try {
    return parse_time(s);
  } catch (const UnitError& e) {
    fail(path, node, e.what());
  }
}

Bytes Loader::read_bytes(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a size like \"64MiB\"");
  try {
    return parse_bytes(s);
  } catch (const UnitError& e) {
    fail(path, node, e.what());
  }
}

Bandwidth Loader::read_bandwidth(const YAML::Node& node, const std::string& path) const {
  const std::string& s = scalar(node, path, "a bandwidth like \"400Gbps\"");
  try {
    return parse_bandwidth(s);
  } catch (const UnitError& e) {
    fail(path, node, e.what());
  }
}

template <typename E>
E Loader::read_enum(const YAML::Node& node, const std::string& path,
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
  fail(path, node, "expected one of: " + one_of(names) + "; got " + quoted(s));
}

const std::vector<std::pair<std::string_view, topo::TopologyKind>> kTopologies{
    {"spine_leaf", topo::TopologyKind::SpineLeaf},
    {"fat_tree", topo::TopologyKind::FatTree},
    {"rail_optimized", topo::TopologyKind::RailOptimized},
};

const std::vector<std::pair<std::string_view, Fidelity>> kFidelities{
    {"packet", Fidelity::Packet},
    {"analytic", Fidelity::Analytic},
    {"flow", Fidelity::Flow},
};

const std::vector<std::pair<std::string_view, models::TrafficPattern>> kPatterns{
    {"messages", models::TrafficPattern::Explicit},
    {"ring_shift", models::TrafficPattern::RingShift},
    {"permutation", models::TrafficPattern::Permutation},
    {"incast", models::TrafficPattern::Incast},
    {"all_to_all", models::TrafficPattern::AllToAll},
};

constexpr uint64_t kMaxPriority = 7;  // 802.1p classes 0..7
// Fabrics up to this many nodes (plus routing-table bytes / 8) are built to validate them.
constexpr uint64_t kBuildToValidateLimit = 2'000'000;

Scenario Loader::load(const std::string& text) {
  try {
    root_.reset(YAML::Load(text));
  } catch (const YAML::ParserException& e) {
    throw ScenarioError(source_, e.mark.line + 1, e.mark.column + 1, "", e.msg);
  }
  for (const Override& o : options_.overrides) {
    apply_override(o);
  }
  Scenario scenario = read_root();
  if (options_.seed) {
    scenario.seed = *options_.seed;
  }
  validate(scenario);
  return scenario;
}

Scenario Loader::read_root() {
  const MapView top(*this, root_, "",
                    {"name", "seed", "fidelity", "fabric", "traffic", "collective", "workload",
                     "sweep", "observe", "report"});
  Scenario s;
  s.source = source_;
  s.name = read_string(top.require("name"), "name");
  if (const YAML::Node* n = top.find("seed")) {
    s.seed = read_uint(*n, "seed", 0, std::numeric_limits<uint64_t>::max());
  }
  if (const YAML::Node* n = top.find("fidelity")) {
    s.fidelity = read_enum(*n, "fidelity", kFidelities);
  }
  s.fabric = read_fabric(top.require("fabric"), "fabric");
  if (const YAML::Node& f = top.require("fabric"); f.IsMap() && f["route_overrides"]) {
    s.route_overrides = read_route_overrides(f["route_overrides"], "fabric.route_overrides");
  }
  if (const YAML::Node& f = top.require("fabric"); f.IsMap() && f["flow"]) {
    s.flow_cc = read_flow_options(f["flow"], "fabric.flow");
  }
  if (const YAML::Node* n = top.find("collective")) s.collective = read_collective(*n, "collective");
  if (const YAML::Node* n = top.find("collective")) {
    if (n->IsMap() && (*n)["calibration"]) {
      s.collective_calibration = read_collective_calibration((*n)["calibration"], "collective.calibration");
    }
  }

  if (const YAML::Node* n = top.find("workload")) s.workload = read_workload(*n, "workload");
  if (const YAML::Node* n = top.find("observe")) s.observe = read_observe(*n, "observe");
  if (const YAML::Node* n = top.find("report")) s.report = read_report(*n, "report");
  if (const YAML::Node* n = top.find("sweep")) {
    if (!n->IsMap() || n->size() == 0) {
      fail("sweep", *n, "expected a map of dotted.path: [values...], got " + describe(*n));
    }
    for (const auto& kv : *n) {
      const std::string axis = kv.first.Scalar();
      const std::string path = join_path("sweep", axis);
      const YAML::Node& values = kv.second;
      if (!values.IsSequence() || values.size() < 2) {
        fail(path, values, "expected a list of at least two values, got " + describe(values));
      }
      std::vector<std::string> texts;
      for (std::size_t i = 0; i < values.size(); ++i) {
        if (!values[i].IsScalar()) {
          fail(join_path(path, i), values[i], "expected a scalar value, got " + describe(values[i]));
        }
        texts.push_back(values[i].Scalar());
      }
      s.sweep.emplace_back(axis, std::move(texts));
    }
  }
  // A training workload may run alone; without one, traffic is the whole scenario.
  if (s.workload && top.find("traffic") == nullptr) return s;
  const YAML::Node& traffic = top.require("traffic");
  if (!traffic.IsSequence()) {
    fail("traffic", traffic, "expected a sequence of traffic entries, got " + describe(traffic));
  }
  if (traffic.size() == 0) {
    fail("traffic", traffic, "expected at least one traffic entry, got an empty sequence");
  }
  for (std::size_t i = 0; i < traffic.size(); ++i) {
    s.traffic.push_back(read_traffic_entry(traffic[i], join_path("traffic", i)));
  }
  return s;
}

// `collective:`: NCCL's knobs, NCCL's defaults for what is left out (models::CollectiveConfig).
models::CollectiveConfig Loader::read_collective(const YAML::Node& node,
                                                 const std::string& path) const {
  const MapView m(*this, node, path,
                  {"algorithm", "protocol", "channels", "buffer_size", "ll_buffer_size",
                   "ll128_buffer_size", "steps", "calibration"});
  models::CollectiveConfig c;
  if (const YAML::Node* v = m.find("algorithm")) {
    const std::string text = read_string(*v, m.path_of("algorithm"));
    if (text != "auto") {
      try {
        c.algorithm = models::parse_collective_algo(text);
      } catch (const std::invalid_argument& e) {
        fail(m.path_of("algorithm"), *v, std::string(e.what()) + " or auto");
      }
    }
  }
  if (const YAML::Node* v = m.find("protocol")) {
    const std::string text = read_string(*v, m.path_of("protocol"));
    if (text != "auto") {
      try {
        c.protocol = models::parse_nccl_protocol(text);
      } catch (const std::invalid_argument& e) {
        fail(m.path_of("protocol"), *v, std::string(e.what()) + " or auto");
      }
    }
  }
  if (const YAML::Node* v = m.find("channels")) c.channels = read_u32(*v, m.path_of("channels"), 1);
  if (const YAML::Node* v = m.find("steps")) c.steps = read_u32(*v, m.path_of("steps"), 1);
  const std::pair<std::string_view, int64_t*> buffers[] = {
      {"buffer_size", &c.buffer_size},
      {"ll_buffer_size", &c.ll_buffer_size},
      {"ll128_buffer_size", &c.ll128_buffer_size}};
  for (const auto& [key, field] : buffers) {
    if (const YAML::Node* v = m.find(key)) {
      const int64_t b = read_bytes(*v, m.path_of(key)).count();
      if (b <= 0) fail(m.path_of(key), *v, "expected a positive size, got " + std::to_string(b) + " bytes");
      *field = b;
    }
  }
  return c;
}

// `workload.calibration: FILE`: a profile from `syncsim calibrate fit --out` or syncsim-probe. Its
// GEMM fit for the workload's dtype replaces the GPU's peak and efficiency curve; its HBM copy probe
// replaces the HBM bandwidth. A relative path is taken from the scenario file's folder.
void Loader::apply_calibration(const YAML::Node& node, const std::string& path,
                               models::StepConfig& c) const {
  std::string file = read_string(node, path);
  if (!file.empty() && file.front() != '/' && source_.find('/') != std::string::npos) {
    file = source_.substr(0, source_.rfind('/') + 1) + file;
  }
  calibration::CalibrationProfile profile;
  try {
    profile = calibration::read_profile_file(file);
  } catch (const std::exception& e) {
    fail(path, node, std::string("expected a readable calibration profile, got: ") + e.what());
  }
  const char* dtype = c.compute.dtype == models::DType::Fp8    ? "fp8"
                      : c.compute.dtype == models::DType::Fp16 ? "fp16"
                                                               : "bf16";
  bool used = false;
  for (const calibration::GemmFit& g : profile.gemm) {
    if (g.dtype != dtype) continue;
    double& peak = c.compute.dtype == models::DType::Fp8    ? c.gpu.fp8_tflops
                   : c.compute.dtype == models::DType::Fp16 ? c.gpu.fp16_tflops
                                                            : c.gpu.bf16_tflops;
    if (g.peak_tflops > 0) peak = g.peak_tflops;
    c.gpu.max_gemm_efficiency = g.e_max;
    c.gpu.gemm_intensity_half = g.intensity_half;
    used = true;
  }
  for (const calibration::ProbeValue& p : profile.probes) {
    if (p.name == "hbm_copy_bandwidth" && p.unit == "GB/s" && p.mean > 0) {
      c.gpu.hbm_bytes_per_s = p.mean * 1e9;
      used = true;
    }
  }
  if (!used) {
    fail(path, node,
         std::string("expected a profile with a ") + dtype +
             " GEMM fit or an hbm_copy_bandwidth probe, got neither in " + file);
  }
  c.gpu.calibrated_from = file;
}

// `collective.calibration: FILE`: a profile with fitted collective lines (`syncsim calibrate fit
// --out`, syncsim-probe). A relative path is taken from the scenario file's folder, or from the
// working directory when it came from --set. A profile without collective lines is an error here;
// (op, rank count) pairs it lacks are reported where they are needed (they fall back to simulation).
CollectiveCalibration Loader::read_collective_calibration(const YAML::Node& node,
                                                          const std::string& path) const {
  std::string file = read_string(node, path);
  if (!from_override(path) && file.front() != '/' && source_.find('/') != std::string::npos) {
    file = source_.substr(0, source_.rfind('/') + 1) + file;
  }
  CollectiveCalibration c;
  c.file = file;
  try {
    c.collectives = calibration::read_profile_file(file).collectives;
  } catch (const std::exception& e) {
    fail(path, node, std::string("expected a readable calibration profile, got: ") + e.what());
  }
  if (c.collectives.empty()) {
    fail(path, node, "expected a profile with fitted collectives (`collectives:`), got none in " + file);
  }
  return c;
}

// `workload:` a DDP training step. Presets by name, or a map starting from a preset (or from
// nothing) with fields overridden.
WorkloadSpec Loader::read_workload(const YAML::Node& node, const std::string& path) const {
  const MapView m(*this, node, path,
                  {"model", "gpu", "data_parallel", "micro_batch", "grad_accumulation", "recompute",
                   "dtype", "ddp", "optimizer", "algorithm", "channels", "perturbations",
                   "reuse_bucket_timings", "calibration", "parallelism", "fsdp", "tensor_parallel",
                   "pipeline_parallel", "context_parallel", "sequence_parallel", "placement",
                   "bucket_timing"});
  WorkloadSpec w;
  models::StepConfig& c = w.step;

  const YAML::Node& model = m.require("model");
  const std::string model_path = m.path_of("model");
  if (model.IsMap()) {
    const MapView mm(*this, model, model_path,
                     {"preset", "layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "sequence",
                      "tied_embeddings", "mlp"});
    if (const YAML::Node* v = mm.find("preset")) {
      const std::string name = read_string(*v, mm.path_of("preset"));
      const auto preset = models::transformer_preset(name);
      if (!preset) {
        fail(mm.path_of("preset"), *v,
             "expected a model preset (" + one_of_names(models::transformer_preset_names()) +
                 "), got " + quoted(name));
      }
      c.model = *preset;
    } else {
      c.model = models::TransformerShape{.name = "custom", .mlp = models::MlpKind::SwiGlu};
    }
    const std::pair<std::string_view, uint32_t*> counts[] = {
        {"layers", &c.model.layers}, {"hidden", &c.model.hidden},     {"ffn", &c.model.ffn},
        {"heads", &c.model.heads},   {"kv_heads", &c.model.kv_heads}, {"vocab", &c.model.vocab},
        {"sequence", &c.model.sequence}};
    for (const auto& [key, field] : counts) {
      if (const YAML::Node* v = mm.find(key)) *field = read_u32(*v, mm.path_of(key), 1);
    }
    if (c.model.kv_heads == 0) c.model.kv_heads = c.model.heads;
    if (const YAML::Node* v = mm.find("tied_embeddings")) {
      c.model.tied_embeddings = read_bool(*v, mm.path_of("tied_embeddings"));
    }
    if (const YAML::Node* v = mm.find("mlp")) {
      c.model.mlp = read_enum(*v, mm.path_of("mlp"),
                              std::vector<std::pair<std::string_view, models::MlpKind>>{
                                  {"gelu", models::MlpKind::Gelu}, {"swiglu", models::MlpKind::SwiGlu}});
    }
    for (const char* key : {"layers", "hidden", "ffn", "heads", "vocab", "sequence"}) {
      if (mm.find(key) == nullptr && !mm.find("preset")) {
        fail_at(model_path, model, mm.path_of(key), "missing key (needed without a preset)");
      }
    }
    if (c.model.hidden % c.model.heads != 0 || c.model.heads % c.model.kv_heads != 0) {
      fail(model_path, model,
           "expected hidden divisible by heads and heads by kv_heads, got hidden " +
               std::to_string(c.model.hidden) + ", heads " + std::to_string(c.model.heads) +
               ", kv_heads " + std::to_string(c.model.kv_heads));
    }
  } else {
    const std::string name = read_string(model, model_path);
    const auto preset = models::transformer_preset(name);
    if (!preset) {
      fail(model_path, model,
           "expected a model preset (" + one_of_names(models::transformer_preset_names()) +
               ") or a map of fields, got " + quoted(name));
    }
    c.model = *preset;
  }

  std::string gpu_name = "h100";
  const YAML::Node* gpu_node = m.find("gpu");
  if (gpu_node != nullptr) gpu_name = read_string(*gpu_node, m.path_of("gpu"));
  const auto gpu = models::gpu_preset(gpu_name);
  if (!gpu) {
    fail(m.path_of("gpu"), gpu_node ? *gpu_node : node,
         "expected a GPU preset (" + one_of_names(models::gpu_preset_names()) + "), got " +
             quoted(gpu_name));
  }
  c.gpu = *gpu;

  if (const YAML::Node* v = m.find("data_parallel")) {
    w.data_parallel = read_u32(*v, m.path_of("data_parallel"), 1);
  }
  if (const YAML::Node* v = m.find("micro_batch")) {
    c.compute.micro_batch = static_cast<int64_t>(read_u32(*v, m.path_of("micro_batch"), 1));
  }
  if (const YAML::Node* v = m.find("grad_accumulation")) {
    c.grad_accumulation = read_u32(*v, m.path_of("grad_accumulation"), 1);
  }
  if (const YAML::Node* v = m.find("recompute")) {
    c.compute.recompute = read_enum(*v, m.path_of("recompute"),
                                    std::vector<std::pair<std::string_view, models::Recompute>>{
                                        {"none", models::Recompute::None},
                                        {"selective", models::Recompute::Selective},
                                        {"full", models::Recompute::Full}});
  }
  if (const YAML::Node* v = m.find("dtype")) {
    c.compute.dtype = read_enum(*v, m.path_of("dtype"),
                                std::vector<std::pair<std::string_view, models::DType>>{
                                    {"bf16", models::DType::Bf16}, {"fp16", models::DType::Fp16},
                                    {"fp8", models::DType::Fp8}});
    if (models::peak_flops(c.gpu, c.compute.dtype) <= 0) {
      fail(m.path_of("dtype"), *v, "expected a dtype this GPU supports, got one it does not");
    }
  }
  if (const YAML::Node* v = m.find("ddp")) {
    const MapView d(*this, *v, m.path_of("ddp"), {"bucket_cap_mb", "first_bucket_mb", "bucket_order"});
    // ready: PyTorch's buckets after rebuild_buckets() (every step after the first); parameters:
    // the first iteration's, in reverse model.parameters() order.
    if (const YAML::Node* b = d.find("bucket_order")) {
      c.ddp.parameter_order =
          read_enum(*b, d.path_of("bucket_order"),
                    std::vector<std::pair<std::string_view, bool>>{{"ready", false}, {"parameters", true}});
    }
    // PyTorch's names and units: MB here means MiB (bucket_cap_mb=25 is 25 * 1024 * 1024 bytes).
    if (const YAML::Node* b = d.find("bucket_cap_mb")) {
      const double mb = read_number(*b, d.path_of("bucket_cap_mb"));
      if (!(mb > 0)) fail(d.path_of("bucket_cap_mb"), *b, "expected a positive size in MiB");
      c.ddp.bucket_cap = Bytes{static_cast<int64_t>(mb * 1024 * 1024)};
    }
    if (const YAML::Node* b = d.find("first_bucket_mb")) {
      const double mb = read_number(*b, d.path_of("first_bucket_mb"));
      if (!(mb > 0)) fail(d.path_of("first_bucket_mb"), *b, "expected a positive size in MiB");
      c.ddp.first_bucket = Bytes{static_cast<int64_t>(mb * 1024 * 1024)};
    }
  }
  if (const YAML::Node* v = m.find("optimizer")) {
    const std::string p = m.path_of("optimizer");
    if (!(v->IsScalar() && v->Scalar() == "auto")) c.optimizer = read_time(*v, p);
  }
  if (const YAML::Node* v = m.find("algorithm")) {
    const std::string text = read_string(*v, m.path_of("algorithm"));
    try {
      c.algorithm = models::parse_collective_algo(text);
    } catch (const std::invalid_argument& e) {
      fail(m.path_of("algorithm"), *v, e.what());
    }
  }
  if (const YAML::Node* v = m.find("channels")) c.channels = read_u32(*v, m.path_of("channels"), 1);
  c.gpus_per_host = 1;
  if (const YAML::Node* v = m.find("perturbations")) {
    const MapView pm(*this, *v, m.path_of("perturbations"), {"compute_noise_cv", "straggler"});
    if (const YAML::Node* n = pm.find("compute_noise_cv")) {
      const double cv = read_number(*n, pm.path_of("compute_noise_cv"));
      if (cv < 0 || cv > 1) fail(pm.path_of("compute_noise_cv"), *n, "expected a value in [0, 1]");
      c.perturbations.compute_noise_cv = cv;
    }
    if (const YAML::Node* n = pm.find("straggler")) {
      const MapView sm(*this, *n, pm.path_of("straggler"), {"rank", "slowdown"});
      c.perturbations.straggler = read_u32(sm.require("rank"), sm.path_of("rank"));
      const double slow = read_number(sm.require("slowdown"), sm.path_of("slowdown"));
      if (slow < 0) fail(sm.path_of("slowdown"), sm.require("slowdown"), "expected a slowdown >= 0");
      c.perturbations.straggler_slowdown = slow;
    }
  }
  if (const YAML::Node* v = m.find("placement")) {
    try {
      w.placement = topo::parse_placement(read_string(*v, m.path_of("placement")));
    } catch (const std::invalid_argument& e) {
      fail(m.path_of("placement"), *v, e.what());
    }
  }
  if (const YAML::Node* v = m.find("reuse_bucket_timings")) {
    w.reuse_bucket_timings = read_bool(*v, m.path_of("reuse_bucket_timings"));
  }
  if (const YAML::Node* v = m.find("bucket_timing")) {
    try {
      c.bucket_timing = models::parse_bucket_timing(read_string(*v, m.path_of("bucket_timing")));
    } catch (const std::invalid_argument& e) {
      fail(m.path_of("bucket_timing"), *v, e.what());
    }
  }
  if (const YAML::Node* v = m.find("calibration")) apply_calibration(*v, m.path_of("calibration"), c);
  read_parallelism(m, c);
  return w;
}

// `workload.parallelism: ddp | fsdp`, `workload.fsdp: {...}` and the model-parallel degrees.
void Loader::read_parallelism(const MapView& m, models::StepConfig& c) const {
  if (const YAML::Node* v = m.find("parallelism")) {
    c.parallelism = read_enum(*v, m.path_of("parallelism"),
                              std::vector<std::pair<std::string_view, models::DataParallelism>>{
                                  {"ddp", models::DataParallelism::Ddp},
                                  {"fsdp", models::DataParallelism::Fsdp}});
  }
  if (const YAML::Node* v = m.find("fsdp")) {
    const MapView f(*this, *v, m.path_of("fsdp"), {"layers_per_unit", "streams"});
    if (c.parallelism != models::DataParallelism::Fsdp) {
      fail(m.path_of("fsdp"), *v, "an fsdp block needs workload.parallelism: fsdp, got ddp");
    }
    if (const YAML::Node* n = f.find("layers_per_unit")) {
      c.fsdp.layers_per_unit = read_u32(*n, f.path_of("layers_per_unit"), 1);
      if (c.fsdp.layers_per_unit > c.model.layers) {
        fail(f.path_of("layers_per_unit"), *n,
             "expected at most the model's " + std::to_string(c.model.layers) + " layers");
      }
    }
    if (const YAML::Node* n = f.find("streams")) {
      c.fsdp.separate_streams =
          read_enum(*n, f.path_of("streams"),
                    std::vector<std::pair<std::string_view, bool>>{{"separate", true}, {"shared", false}});
    }
  }
  const std::pair<std::string_view, uint32_t*> degrees[] = {{"tensor_parallel", &c.layout.tensor},
                                                            {"pipeline_parallel", &c.layout.pipeline},
                                                            {"context_parallel", &c.layout.context}};
  for (const auto& [key, field] : degrees) {
    if (const YAML::Node* v = m.find(key)) *field = read_u32(*v, m.path_of(key), 1);
  }
  if (const YAML::Node* v = m.find("sequence_parallel")) {
    c.layout.sequence_parallel = read_bool(*v, m.path_of("sequence_parallel"));
  }
  auto check = [&](std::string_view key, bool ok, const std::string& expected) {
    if (const YAML::Node* v = m.find(key); v && !ok) fail(m.path_of(key), *v, expected);
  };
  const auto& mm = c.model;
  const uint32_t t = c.layout.tensor;
  check("tensor_parallel", mm.heads % t == 0 && mm.ffn % t == 0 && mm.hidden % t == 0 && mm.vocab >= t,
        "expected a tensor-parallel degree dividing the heads (" + std::to_string(mm.heads) +
            "), hidden and FFN sizes, got " + std::to_string(t));
  check("pipeline_parallel", mm.layers % c.layout.pipeline == 0,
        "expected a pipeline-parallel degree dividing the " + std::to_string(mm.layers) +
            " layers, got " + std::to_string(c.layout.pipeline));
  check("context_parallel", mm.sequence % (2 * c.layout.context) == 0 || c.layout.context == 1,
        "expected a context-parallel degree c with the sequence (" + std::to_string(mm.sequence) +
            ") divisible by 2c (load-balanced causal chunks), got " + std::to_string(c.layout.context));
  check("sequence_parallel", !c.layout.sequence_parallel || t > 1,
        "sequence parallelism needs tensor_parallel > 1");
  if (c.parallelism == models::DataParallelism::Fsdp && c.layout.model_parallel()) {
    fail(m.path_of("parallelism"), *m.find("parallelism"),
         "fsdp composed with tensor, pipeline or context parallelism is not modelled; expected ddp "
         "with model parallelism");
  }
}

topo::FabricParams Loader::read_fabric(const YAML::Node& node, const std::string& path) const {
  const MapView fabric(
      *this, node, path,
      {"topology", "spine_leaf", "fat_tree", "rail_optimized", "host", "links", "switch", "ecmp",
       "nic", "transport", "impairments", "route_overrides", "flow"});
  topo::FabricParams p;
  p.kind = read_enum(fabric.require("topology"), fabric.path_of("topology"), kTopologies);

  // Blocks of the topologies not selected are still read, so a typo there is caught before a sweep
  // flips `fabric.topology` to them.
  if (const YAML::Node* n = fabric.find("spine_leaf")) {
    const MapView m(
        *this, *n, fabric.path_of("spine_leaf"),
        {"leaves", "hosts_per_leaf", "spines", "uplinks_per_spine", "oversubscription"});
    auto& sl = p.spine_leaf;
    if (const YAML::Node* v = m.find("leaves")) {
      sl.leaves = read_u32(*v, m.path_of("leaves"));
    }
    if (const YAML::Node* v = m.find("hosts_per_leaf")) {
      sl.hosts_per_leaf = read_u32(*v, m.path_of("hosts_per_leaf"));
    }
    // null clears an optional field, so `--set fabric.spine_leaf.oversubscription=null` works.
    // Ranges and combinations (0 spines, spines together with oversubscription) are checked by
    // build_fabric, whose TopologyError is mapped back to the node here.
    if (const YAML::Node* v = m.find("spines"); v && !v->IsNull()) {
      sl.spines = read_u32(*v, m.path_of("spines"));
    }
    if (const YAML::Node* v = m.find("uplinks_per_spine")) {
      sl.uplinks_per_spine = read_u32(*v, m.path_of("uplinks_per_spine"));
    }
    if (const YAML::Node* v = m.find("oversubscription"); v && !v->IsNull()) {
      sl.oversubscription = read_number(*v, m.path_of("oversubscription"));
    }
  }
  if (const YAML::Node* n = fabric.find("fat_tree")) {
    const MapView m(*this, *n, fabric.path_of("fat_tree"),
                    {"k", "pods", "leaves_per_pod", "spines_per_pod", "hosts_per_leaf", "cores"});
    auto& ft = p.fat_tree;
    if (const YAML::Node* v = m.find("k"); v && !v->IsNull()) {
      ft.k = read_u32(*v, m.path_of("k"));
    }
    const std::pair<std::string_view, uint32_t*> counts[] = {
        {"pods", &ft.pods},
        {"leaves_per_pod", &ft.leaves_per_pod},
        {"spines_per_pod", &ft.spines_per_pod},
        {"hosts_per_leaf", &ft.hosts_per_leaf},
        {"cores", &ft.cores},
    };
    for (const auto& [key, field] : counts) {
      if (const YAML::Node* v = m.find(key)) {
        *field = read_u32(*v, m.path_of(key));
        // k fixes every count; an explicit count next to it would be silently ignored.
        if (ft.k) {
          fail(m.path_of(key), *v,
               "expected either k or explicit counts, got k = " + std::to_string(*ft.k) + " and " +
                   std::string(key) + " = " + std::to_string(*field));
        }
      }
    }
  }
  if (const YAML::Node* n = fabric.find("rail_optimized")) {
    const MapView m(*this, *n, fabric.path_of("rail_optimized"),
                    {"groups", "hosts_per_group", "spines", "uplinks_per_spine"});
    auto& r = p.rail;
    if (const YAML::Node* v = m.find("groups")) {
      r.groups = read_u32(*v, m.path_of("groups"));
    }
    if (const YAML::Node* v = m.find("hosts_per_group")) {
      r.hosts_per_group = read_u32(*v, m.path_of("hosts_per_group"));
    }
    if (const YAML::Node* v = m.find("spines")) {
      r.spines = read_u32(*v, m.path_of("spines"));
    }
    if (const YAML::Node* v = m.find("uplinks_per_spine")) {
      r.uplinks_per_spine = read_u32(*v, m.path_of("uplinks_per_spine"));
    }
  }
  if (const YAML::Node* n = fabric.find("host")) {
    const MapView m(*this, *n, fabric.path_of("host"), {"gpus", "nics"});
    if (const YAML::Node* v = m.find("gpus")) {
      p.host.gpus = read_u32(*v, m.path_of("gpus"));
    }
    if (const YAML::Node* v = m.find("nics")) {
      p.host.nics = read_u32(*v, m.path_of("nics"));
    }
  }
  if (const YAML::Node* n = fabric.find("links")) {
    const MapView m(*this, *n, fabric.path_of("links"), {"host", "fabric", "core", "nvlink"});
    const std::pair<std::string_view, net::LinkParams*> classes[] = {
        {"host", &p.links.host},
        {"fabric", &p.links.fabric},
        {"core", &p.links.core},
        {"nvlink", &p.links.nvlink},
    };
    for (const auto& [key, link] : classes) {
      if (const YAML::Node* v = m.find(key)) {
        read_link(*v, m.path_of(key), *link);
      }
    }
  }
  if (const YAML::Node* n = fabric.find("switch")) {
    const MapView m(*this, *n, fabric.path_of("switch"), {"buffer", "priorities", "pfc", "ecn"});
    if (const YAML::Node* v = m.find("pfc")) {
      read_pfc(*v, m.path_of("pfc"), p.pfc);
    }
    if (const YAML::Node* v = m.find("ecn")) {
      read_ecn(*v, m.path_of("ecn"), p.ecn);
    }
    if (const YAML::Node* v = m.find("buffer")) {
      p.switch_params.buffer = read_bytes(*v, m.path_of("buffer"));
    }
    if (const YAML::Node* v = m.find("priorities")) {
      p.switch_params.priorities = read_u32(*v, m.path_of("priorities"));
    }
  }
  if (const YAML::Node* n = fabric.find("nic")) {
    const MapView m(*this, *n, fabric.path_of("nic"), {"dcqcn", "rx_pfc"});
    if (const YAML::Node* v = m.find("dcqcn")) {
      read_dcqcn(*v, m.path_of("dcqcn"), p.nic.dcqcn);
    }
    if (const YAML::Node* v = m.find("rx_pfc")) {
      // fabric.nic.rx_pfc: {enabled, buffer, drain_rate, xoff, xon} (receiver-side PFC).
      const MapView r(*this, *v, m.path_of("rx_pfc"), {"enabled", "buffer", "drain_rate", "xoff", "xon"});
      net::NicParams& nic = p.nic;
      nic.rx_pfc = true;
      if (const YAML::Node* e = r.find("enabled")) nic.rx_pfc = read_bool(*e, r.path_of("enabled"));
      if (const YAML::Node* e = r.find("buffer")) nic.rx_buffer = read_bytes(*e, r.path_of("buffer"));
      if (const YAML::Node* e = r.find("drain_rate")) {
        nic.rx_drain_rate = read_bandwidth(*e, r.path_of("drain_rate"));
        if (nic.rx_drain_rate.bits_per_second() <= 0) {
          fail(r.path_of("drain_rate"), *e, "expected a positive rate, got " + e->Scalar());
        }
      }
      if (const YAML::Node* e = r.find("xoff")) nic.rx_xoff = read_bytes(*e, r.path_of("xoff"));
      if (const YAML::Node* e = r.find("xon")) nic.rx_xon = read_bytes(*e, r.path_of("xon"));
      if (!(nic.rx_xon < nic.rx_xoff && nic.rx_xoff <= nic.rx_buffer)) {
        fail(m.path_of("rx_pfc"), *v, "expected xon < xoff <= buffer");
      }
    }
  }
  if (const YAML::Node* n = fabric.find("transport")) {
    read_transport(*n, fabric.path_of("transport"), p.transport);
  }
  if (const YAML::Node* n = fabric.find("impairments")) {
    read_impairments(*n, fabric.path_of("impairments"), p.impairments);
  }
  if (const YAML::Node* n = fabric.find("ecmp")) {
    const MapView m(*this, *n, fabric.path_of("ecmp"), {"hash_seed", "per_switch_salt"});
    if (const YAML::Node* v = m.find("hash_seed")) {
      p.ecmp_hash_seed =
          read_uint(*v, m.path_of("hash_seed"), 0, std::numeric_limits<uint64_t>::max());
    }
    if (const YAML::Node* v = m.find("per_switch_salt")) {
      p.ecmp_per_switch_salt = read_bool(*v, m.path_of("per_switch_salt"));
    }
  }
  return p;
}

void Loader::read_link(const YAML::Node& node, const std::string& path,
                       net::LinkParams& link) const {
  const MapView m(*this, node, path, {"bandwidth", "delay", "mtu", "header"});
  // Positivity (bandwidth, MTU) is build_fabric's check, for the link classes it uses.
  if (const YAML::Node* v = m.find("bandwidth")) {
    link.bandwidth = read_bandwidth(*v, m.path_of("bandwidth"));
  }
  if (const YAML::Node* v = m.find("delay")) {
    link.delay = read_time(*v, m.path_of("delay"));
  }
  if (const YAML::Node* v = m.find("mtu")) {
    link.mtu = read_bytes(*v, m.path_of("mtu"));
  }
  if (const YAML::Node* v = m.find("header")) {
    link.header = read_bytes(*v, m.path_of("header"));
  }
}

void Loader::read_pfc(const YAML::Node& node, const std::string& path, net::PfcParams& pfc) const {
  const MapView m(*this, node, path,
                  {"enabled", "lossless_priorities", "threshold", "xon_offset", "headroom",
                   "response_time", "deadlock_detection_time", "watchdog", "pause_quanta"});
  if (const YAML::Node* v = m.find("enabled")) {
    pfc.enabled = read_bool(*v, m.path_of("enabled"));
  }
  if (const YAML::Node* v = m.find("lossless_priorities")) {
    const std::string list_path = m.path_of("lossless_priorities");
    if (!v->IsSequence() || v->size() == 0) {
      fail(list_path, *v,
           "expected a non-empty list of priorities like [3], got " +
               (v->IsSequence() ? std::string("[]") : describe(*v)));
    }
    pfc.lossless_mask = 0;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const YAML::Node& item = (*v)[i];
      const auto prio = read_uint(item, join_path(list_path, i), 0, kMaxPriority);
      pfc.lossless_mask = static_cast<uint8_t>(pfc.lossless_mask | (1U << prio));
    }
  }
  const YAML::Node* threshold_node = m.find("threshold");
  if (threshold_node != nullptr) {
    const std::string tpath = m.path_of("threshold");
    const MapView t(*this, *threshold_node, tpath, {"static", "dynamic_alpha"});
    const YAML::Node* st = t.find("static");
    const YAML::Node* dyn = t.find("dynamic_alpha");
    if ((st == nullptr) == (dyn == nullptr)) {
      fail(tpath, *threshold_node,
           "expected exactly one of: static (bytes), dynamic_alpha (a fraction of the free shared "
           "buffer)");
    }
    if (st != nullptr) {
      pfc.dynamic_threshold = false;
      pfc.static_xoff = read_bytes(*st, t.path_of("static"));
      if (pfc.static_xoff.count() <= 0) {
        fail(t.path_of("static"), *st, "expected a positive XOFF threshold, got 0 B");
      }
    } else {
      pfc.dynamic_threshold = true;
      pfc.alpha = read_number(*dyn, t.path_of("dynamic_alpha"));
      if (!(pfc.alpha > 0.0 && pfc.alpha <= 16.0)) {
        fail(t.path_of("dynamic_alpha"), *dyn,
             "expected 0 < dynamic_alpha <= 16 (HPCC uses 0.125), got " + dyn->Scalar());
      }
    }
  }
  if (const YAML::Node* v = m.find("xon_offset")) {
    pfc.xon_offset = read_bytes(*v, m.path_of("xon_offset"));
    if (pfc.xon_offset.count() <= 0) {
      fail(m.path_of("xon_offset"), *v, "expected xon_offset > 0 (XON must sit below XOFF), got 0 B");
    }
    if (!pfc.dynamic_threshold && pfc.xon_offset.count() > pfc.static_xoff.count()) {
      fail(m.path_of("xon_offset"), *v,
           "expected xon_offset <= the static XOFF threshold (" +
               std::to_string(pfc.static_xoff.count()) + " B) so that 0 <= XON < XOFF, got " +
               std::to_string(pfc.xon_offset.count()) + " B");
    }
  } else if (!pfc.dynamic_threshold && pfc.xon_offset.count() > pfc.static_xoff.count()) {
    fail(m.path_of("threshold"), *threshold_node,
         "expected a static XOFF threshold of at least the default xon_offset (" +
             std::to_string(pfc.xon_offset.count()) + " B), or set xon_offset, got " +
             std::to_string(pfc.static_xoff.count()) + " B");
  }
  if (const YAML::Node* v = m.find("headroom")) {
    if (v->IsScalar() && v->Scalar() == "auto") {
      pfc.headroom_auto = true;
    } else {
      pfc.headroom_auto = false;
      const std::string& text = scalar(*v, m.path_of("headroom"), "auto or a size like \"64KiB\"");
      try {
        pfc.headroom = parse_bytes(text);
      } catch (const UnitError& e) {
        fail(m.path_of("headroom"), *v,
             "expected auto or a size like \"64KiB\", got " + quoted(text) + " (" + e.what() + ")");
      }
    }
  }
  if (const YAML::Node* v = m.find("response_time")) {
    pfc.response_time = read_time(*v, m.path_of("response_time"));
    if (pfc.response_time < Time::zero()) {
      fail(m.path_of("response_time"), *v, "expected a non-negative time, got " + v->Scalar());
    }
  }
  if (const YAML::Node* v = m.find("pause_quanta")) {
    pfc.pause_quanta = read_u32(*v, m.path_of("pause_quanta"));  // 0: until RESUME
    if (pfc.pause_quanta > 65535) {
      fail(m.path_of("pause_quanta"), *v, "expected 0..65535 (a 16-bit field), got " + v->Scalar());
    }
  }
  if (const YAML::Node* v = m.find("deadlock_detection_time")) {
    pfc.deadlock_detection_time = read_time(*v, m.path_of("deadlock_detection_time"));  // 0: off
    if (pfc.deadlock_detection_time < Time::zero()) {
      fail(m.path_of("deadlock_detection_time"), *v, "expected a non-negative time, got " + v->Scalar());
    }
  }
  if (const YAML::Node* v = m.find("watchdog")) {
    const MapView w(*this, *v, m.path_of("watchdog"), {"enabled", "detection_time", "action"});
    pfc.watchdog = true;
    if (const YAML::Node* e = w.find("enabled")) pfc.watchdog = read_bool(*e, w.path_of("enabled"));
    if (const YAML::Node* t = w.find("detection_time")) {
      pfc.watchdog_time = read_time(*t, w.path_of("detection_time"));
      if (pfc.watchdog_time <= Time::zero()) {
        fail(w.path_of("detection_time"), *t, "expected a positive time, got " + t->Scalar());
      }
    }
    if (const YAML::Node* a = w.find("action")) {
      static const std::vector<std::pair<std::string_view, bool>> kActions{{"drop", true},
                                                                           {"disable", false}};
      pfc.watchdog_drop = read_enum(*a, w.path_of("action"), kActions);
    }
  }
}

const std::vector<std::pair<std::string_view, bool>> kEcnMarkOn{
    {"dequeue", false},
    {"enqueue", true},
};

void Loader::read_ecn(const YAML::Node& node, const std::string& path, net::EcnParams& ecn) const {
  const MapView m(*this, node, path, {"enabled", "kmin", "kmax", "pmax", "mark_on"});
  if (const YAML::Node* v = m.find("enabled")) {
    ecn.enabled = read_bool(*v, m.path_of("enabled"));
  }
  const YAML::Node* kmin = m.find("kmin");
  const YAML::Node* kmax = m.find("kmax");
  if ((kmin == nullptr) != (kmax == nullptr)) {
    const std::string missing = kmin == nullptr ? "kmin" : "kmax";
    fail_at(path, node, m.path_of(missing),
            "missing key \"" + missing +
                "\": give kmin and kmax together (or neither, for the per-link-speed defaults)");
  }
  if (kmin != nullptr) {
    ecn.kmin_auto = false;
    ecn.kmax_auto = false;
    ecn.kmin = read_bytes(*kmin, m.path_of("kmin"));
    ecn.kmax = read_bytes(*kmax, m.path_of("kmax"));
    if (ecn.kmin.count() >= ecn.kmax.count()) {
      fail(m.path_of("kmax"), *kmax,
           "expected kmax above kmin (" + std::to_string(ecn.kmin.count()) + " B), got " +
               std::to_string(ecn.kmax.count()) + " B");
    }
  }
  if (const YAML::Node* v = m.find("pmax")) {
    ecn.pmax = read_number(*v, m.path_of("pmax"));
    if (!(ecn.pmax > 0.0 && ecn.pmax <= 1.0)) {
      fail(m.path_of("pmax"), *v, "expected 0 < pmax <= 1, got " + v->Scalar());
    }
  }
  if (const YAML::Node* v = m.find("mark_on")) {
    ecn.mark_on_enqueue = read_enum(*v, m.path_of("mark_on"), kEcnMarkOn);
  }
}

const std::vector<std::pair<std::string_view, net::DcqcnPreset>> kDcqcnPresets{
    {"paper", net::DcqcnPreset::Paper},
    {"connectx", net::DcqcnPreset::ConnectX},
};

// fabric.nic.dcqcn: the preset (default connectx) first, then any explicit parameter over it.
void Loader::read_dcqcn(const YAML::Node& node, const std::string& path,
                        net::DcqcnParams& d) const {
  const MapView m(*this, node, path,
                  {"enabled", "preset", "g", "alpha_period", "rate_period", "byte_counter",
                   "fast_recovery_steps", "rai", "rhai", "min_rate", "decrease_period",
                   "cnp_interval", "initial_alpha", "clamp_target_rate"});
  net::DcqcnPreset preset = net::DcqcnPreset::ConnectX;
  if (const YAML::Node* v = m.find("preset")) preset = read_enum(*v, m.path_of("preset"), kDcqcnPresets);
  bool enabled = false;
  if (const YAML::Node* v = m.find("enabled")) enabled = read_bool(*v, m.path_of("enabled"));
  d = net::DcqcnParams::preset(preset);
  d.enabled = enabled;
  const auto fraction = [&](const char* key, double& out) {
    if (const YAML::Node* v = m.find(key)) {
      out = read_number(*v, m.path_of(key));
      if (!(out > 0.0 && out <= 1.0)) {
        fail(m.path_of(key), *v, "expected a number in (0, 1], got " + v->Scalar());
      }
    }
  };
  fraction("g", d.g);
  fraction("initial_alpha", d.initial_alpha);
  const auto positive_time = [&](const char* key, Time& out, bool allow_zero) {
    if (const YAML::Node* v = m.find(key)) {
      out = read_time(*v, m.path_of(key));
      if (out < Time::zero() || (!allow_zero && out == Time::zero())) {
        fail(m.path_of(key), *v,
             std::string(allow_zero ? "expected a non-negative time" : "expected a positive time") +
                 ", got " + v->Scalar());
      }
    }
  };
  positive_time("alpha_period", d.alpha_period, false);
  positive_time("rate_period", d.rate_period, false);
  positive_time("decrease_period", d.decrease_period, true);
  positive_time("cnp_interval", d.cnp_interval, true);
  if (const YAML::Node* v = m.find("byte_counter")) {
    d.byte_counter = read_bytes(*v, m.path_of("byte_counter")).count();  // 0 B: disabled
  }
  if (const YAML::Node* v = m.find("fast_recovery_steps")) {
    d.fast_recovery_steps = read_u32(*v, m.path_of("fast_recovery_steps"));
  }
  const auto rate = [&](const char* key, Bandwidth& out) {
    if (const YAML::Node* v = m.find(key)) {
      out = read_bandwidth(*v, m.path_of(key));
      if (out.bits_per_second() <= 0) fail(m.path_of(key), *v, "expected a positive rate, got 0");
    }
  };
  rate("rai", d.rai);
  rate("rhai", d.rhai);
  rate("min_rate", d.min_rate);
  if (const YAML::Node* v = m.find("clamp_target_rate")) {
    d.clamp_target_rate = read_bool(*v, m.path_of("clamp_target_rate"));
  }
}

const std::vector<std::pair<std::string_view, net::TransportKind>> kTransports{
    {"roce", net::TransportKind::Roce},
    {"roce_host_staged", net::TransportKind::RoceHostStaged},
    {"tcp", net::TransportKind::Tcp},
};

const std::vector<std::pair<std::string_view, net::TcpCongestionControl>> kTcpCcs{
    {"dctcp", net::TcpCongestionControl::Dctcp},
    {"reno", net::TcpCongestionControl::Reno},
};

const std::vector<std::pair<std::string_view, net::JitterDistribution>> kJitterDistributions{
    {"none", net::JitterDistribution::None},
    {"normal", net::JitterDistribution::Normal},
    {"exponential", net::JitterDistribution::Exponential},
};

// `fabric.transport`: the fabric-wide transport of inter-host messages and its parameters
// (sim/net/transport.hpp). Every message of the scenario (traffic and workload) uses it.
void Loader::read_transport(const YAML::Node& node, const std::string& path,
                            net::TransportParams& t) const {
  const MapView m(*this, node, path, {"kind", "go_back_n", "tcp", "host_staging"});
  if (const YAML::Node* v = m.find("kind")) t.kind = read_enum(*v, m.path_of("kind"), kTransports);
  const auto positive_time = [&](const MapView& mv, const char* key, Time& out) {
    if (const YAML::Node* v = mv.find(key)) {
      out = read_time(*v, mv.path_of(key));
      if (out <= Time::zero()) fail(mv.path_of(key), *v, "expected a positive time, got " + v->Scalar());
    }
  };
  const auto non_negative_time = [&](const MapView& mv, const char* key, Time& out) {
    if (const YAML::Node* v = mv.find(key)) {
      out = read_time(*v, mv.path_of(key));
      if (out < Time::zero()) fail(mv.path_of(key), *v, "expected a non-negative time, got " + v->Scalar());
    }
  };
  const auto positive_rate = [&](const MapView& mv, const char* key, Bandwidth& out) {
    if (const YAML::Node* v = mv.find(key)) {
      out = read_bandwidth(*v, mv.path_of(key));
      if (out.bits_per_second() <= 0) fail(mv.path_of(key), *v, "expected a positive rate, got 0");
    }
  };
  if (const YAML::Node* n = m.find("go_back_n")) {
    const MapView g(*this, *n, m.path_of("go_back_n"), {"enabled", "timeout", "ack_every"});
    if (const YAML::Node* v = g.find("enabled")) t.gbn.enabled = read_bool(*v, g.path_of("enabled"));
    positive_time(g, "timeout", t.gbn.timeout);
    if (const YAML::Node* v = g.find("ack_every")) t.gbn.ack_every = read_u32(*v, g.path_of("ack_every"), 1);
  }
  if (const YAML::Node* n = m.find("tcp")) {
    const MapView c(*this, *n, m.path_of("tcp"),
                    {"congestion_control", "rto_min", "rto_max", "initial_window", "dctcp_g",
                     "stack_latency", "cpu_per_byte"});
    if (const YAML::Node* v = c.find("congestion_control")) {
      t.tcp.cc = read_enum(*v, c.path_of("congestion_control"), kTcpCcs);
    }
    positive_time(c, "rto_min", t.tcp.rto_min);
    positive_time(c, "rto_max", t.tcp.rto_max);
    if (t.tcp.rto_max < t.tcp.rto_min) {
      fail_path(c.path_of("rto_max"), "expected rto_max >= rto_min");
    }
    if (const YAML::Node* v = c.find("initial_window")) {
      t.tcp.initial_window = read_u32(*v, c.path_of("initial_window"), 1);
    }
    if (const YAML::Node* v = c.find("dctcp_g")) {
      t.tcp.dctcp_g = read_number(*v, c.path_of("dctcp_g"));
      if (!(t.tcp.dctcp_g > 0.0 && t.tcp.dctcp_g <= 1.0)) {
        fail(c.path_of("dctcp_g"), *v, "expected a number in (0, 1], got " + v->Scalar());
      }
    }
    non_negative_time(c, "stack_latency", t.tcp.stack_latency);
    if (const YAML::Node* v = c.find("cpu_per_byte")) {
      const Time per_byte = read_time(*v, c.path_of("cpu_per_byte"));
      if (per_byte < Time::zero()) {
        fail(c.path_of("cpu_per_byte"), *v, "expected a non-negative time per byte, got " + v->Scalar());
      }
      t.tcp.cpu_ps_per_byte = static_cast<double>(per_byte.picoseconds());
    }
  }
  if (const YAML::Node* n = m.find("host_staging")) {
    const MapView h(*this, *n, m.path_of("host_staging"), {"pcie", "host_memory", "copy_latency"});
    positive_rate(h, "pcie", t.staging.pcie);
    positive_rate(h, "host_memory", t.staging.host_memory);
    non_negative_time(h, "copy_latency", t.staging.copy_latency);
  }
}

// `fabric.impairments`: per-link jitter and random loss (issue 5 perturbations).
void Loader::read_impairments(const YAML::Node& node, const std::string& path,
                              net::ImpairmentParams& imp) const {
  const MapView m(*this, node, path, {"links", "jitter", "loss"});
  if (const YAML::Node* v = m.find("links")) {
    const std::string lp = m.path_of("links");
    if (!v->IsSequence()) fail(lp, *v, "expected a list of link classes, got " + describe(*v));
    imp.link_classes.clear();
    for (std::size_t k = 0; k < v->size(); ++k) {
      const std::string name = read_string((*v)[k], join_path(lp, k));
      if (name != "host" && name != "fabric" && name != "core" && name != "nvlink") {
        fail(join_path(lp, k), (*v)[k],
             "expected one of: \"host\", \"fabric\", \"core\", \"nvlink\"; got " + quoted(name));
      }
      imp.link_classes.push_back(name);
    }
  }
  if (const YAML::Node* n = m.find("jitter")) {
    const MapView j(*this, *n, m.path_of("jitter"),
                    {"distribution", "mean", "stddev", "mean_fraction", "stddev_fraction"});
    imp.jitter = read_enum(j.require("distribution"), j.path_of("distribution"), kJitterDistributions);
    const auto time = [&](const char* key, Time& out) {
      if (const YAML::Node* v = j.find(key)) {
        out = read_time(*v, j.path_of(key));
        if (out < Time::zero()) fail(j.path_of(key), *v, "expected a non-negative time, got " + v->Scalar());
      }
    };
    const auto fraction = [&](const char* key, double& out) {
      if (const YAML::Node* v = j.find(key)) {
        out = read_number(*v, j.path_of(key));
        if (!(out >= 0.0 && out <= 100.0)) {
          fail(j.path_of(key), *v, "expected a fraction of the link delay in [0, 100], got " + v->Scalar());
        }
      }
    };
    time("mean", imp.jitter_mean);
    time("stddev", imp.jitter_stddev);
    fraction("mean_fraction", imp.jitter_mean_fraction);
    fraction("stddev_fraction", imp.jitter_stddev_fraction);
    if (imp.jitter == net::JitterDistribution::Exponential &&
        (j.find("stddev") != nullptr || j.find("stddev_fraction") != nullptr)) {
      fail_path(j.path_of("distribution"),
                "an exponential jitter's stddev is its mean: set mean or mean_fraction only");
    }
  }
  if (const YAML::Node* v = m.find("loss")) {
    imp.loss_probability = read_number(*v, m.path_of("loss"));
    if (!(imp.loss_probability >= 0.0 && imp.loss_probability < 1.0)) {
      fail(m.path_of("loss"), *v, "expected a probability in [0, 1), got " + v->Scalar());
    }
  }
}

models::TrafficSpec Loader::read_traffic_entry(const YAML::Node& node,
                                               const std::string& path) const {
  if (!node.IsMap()) {
    fail(path, node, "expected a traffic entry (a map), got " + describe(node));
  }
  // The pattern decides which keys are valid, so it is read before the keys are checked.
  const YAML::Node pattern_node = node["pattern"];
  if (!pattern_node.IsDefined()) {
    fail_at(path, node, join_path(path, "pattern"), "missing required key \"pattern\"");
  }
  models::TrafficSpec t;
  t.pattern = read_enum(pattern_node, join_path(path, "pattern"), kPatterns);
  const std::string pattern_name = pattern_node.Scalar();

  std::vector<std::string_view> allowed{"pattern"};
  if (t.pattern == models::TrafficPattern::Explicit) {
    allowed.push_back("messages");
  } else {
    allowed.insert(allowed.end(), {"size", "start", "priority"});
  }
  if (t.pattern == models::TrafficPattern::RingShift) {
    allowed.push_back("shift");
  }
  if (t.pattern == models::TrafficPattern::Incast) {
    allowed.insert(allowed.end(), {"senders", "receiver"});
  }
  const MapView m(*this, node, path, allowed, " for pattern " + pattern_name);

  if (t.pattern == models::TrafficPattern::Explicit) {
    const YAML::Node& list = m.require("messages");
    const std::string list_path = m.path_of("messages");
    if (!list.IsSequence()) {
      fail(list_path, list, "expected a sequence of messages, got " + describe(list));
    }
    if (list.size() == 0) {
      fail(list_path, list, "expected at least one message, got an empty sequence");
    }
    for (std::size_t k = 0; k < list.size(); ++k) {
      t.messages.push_back(read_message(list[k], join_path(list_path, k)));
    }
    return t;
  }
  t.size = read_bytes(m.require("size"), m.path_of("size"));
  if (const YAML::Node* v = m.find("start")) {
    t.start = read_time(*v, m.path_of("start"));
  }
  if (const YAML::Node* v = m.find("priority")) {
    t.priority = static_cast<uint8_t>(read_uint(*v, m.path_of("priority"), 0, kMaxPriority));
  }
  if (const YAML::Node* v = m.find("shift")) {
    t.shift = read_int(*v, m.path_of("shift"));
  }
  if (t.pattern == models::TrafficPattern::Incast) {
    t.senders = read_u32(m.require("senders"), m.path_of("senders"));
    if (const YAML::Node* v = m.find("receiver")) {
      t.receiver = read_u32(*v, m.path_of("receiver"));
    }
  }
  return t;
}

models::MessageSpec Loader::read_message(const YAML::Node& node, const std::string& path) const {
  const MapView m(*this, node, path, {"src", "dst", "size", "start", "priority"});
  models::MessageSpec msg;
  msg.src_gpu = read_u32(m.require("src"), m.path_of("src"));
  msg.dst_gpu = read_u32(m.require("dst"), m.path_of("dst"));
  msg.size = read_bytes(m.require("size"), m.path_of("size"));
  if (const YAML::Node* v = m.find("start")) {
    msg.start = read_time(*v, m.path_of("start"));
  }
  if (const YAML::Node* v = m.find("priority")) {
    msg.priority = static_cast<uint8_t>(read_uint(*v, m.path_of("priority"), 0, kMaxPriority));
  }
  return msg;
}

void Loader::validate(const Scenario& scenario) const {
  // The builder checks every fabric range and combination; its path is relative to `fabric.`.
  // Fabrics too big to build here (a million GPUs) are only sized: the run's memory estimate
  // refuses them with numbers instead of this check allocating gigabytes of routing tables.
  net::NetworkSpec spec;
  try {
    const topo::FabricSize size = topo::fabric_size(scenario.fabric);
    if (size.nodes + size.routing_entries / 8 < kBuildToValidateLimit) {
      spec = topo::build_fabric(scenario.fabric);
    } else {
      spec.gpus.resize(size.gpus);  // only the count is read below
    }
  } catch (const topo::TopologyError& e) {
    fail_path(e.path().empty() ? "fabric" : join_path("fabric", e.path()), e.what());
  }

  // A priority without an output queue would have nowhere to go in the switches (priorities is
  // known to be >= 1 once the fabric is built).
  const uint32_t classes = scenario.fabric.switch_params.priorities;
  const auto check_priority = [&](uint8_t priority, const std::string& path) {
    if (priority >= classes) {
      fail_path(path, "expected a priority in 0.." + std::to_string(classes - 1) +
                          " (fabric.switch.priorities is " + std::to_string(classes) + "), got " +
                          std::to_string(priority));
    }
  };
  const net::PfcParams& pfc = scenario.fabric.pfc;
  if (pfc.enabled && (pfc.lossless_mask >> classes) != 0) {
    fail_path("fabric.switch.pfc.lossless_priorities",
              "expected lossless priorities in 0.." + std::to_string(classes - 1) +
                  " (fabric.switch.priorities is " + std::to_string(classes) + ")");
  }
  for (std::size_t i = 0; i < scenario.traffic.size(); ++i) {
    const models::TrafficSpec& t = scenario.traffic[i];
    const std::string entry = join_path("traffic", i);
    if (t.pattern != models::TrafficPattern::Explicit) {
      check_priority(t.priority, join_path(entry, "priority"));
    }
    for (std::size_t k = 0; k < t.messages.size(); ++k) {
      check_priority(t.messages[k].priority,
                     join_path(join_path(join_path(entry, "messages"), k), "priority"));
    }
  }

  // build_fabric caps the GPU count at 2^32 - 1, so the rank count fits.
  try {
    models::expand_traffic(scenario.traffic, static_cast<uint32_t>(spec.gpus.size()),
                           scenario.seed);
  } catch (const models::TrafficError& e) {
    const std::string entry = join_path("traffic", e.index());
    fail_path(e.path().empty() ? entry : join_path(entry, e.path()), e.what());
  }

  if (scenario.workload) {
    const WorkloadSpec& w = *scenario.workload;
    const auto gpus = static_cast<uint32_t>(spec.gpus.size());
    if (w.data_parallel > gpus) {
      fail_path("workload.data_parallel", "expected at most the fabric's " + std::to_string(gpus) +
                                              " GPUs, got " + std::to_string(w.data_parallel));
    }
    const models::ParallelLayout& lay = w.step.layout;
    const uint32_t model_parallel = lay.tensor * lay.context * lay.pipeline;
    if (model_parallel > 1) {
      const uint64_t product = uint64_t{model_parallel} * (w.data_parallel == 0 ? 1 : w.data_parallel);
      if (w.data_parallel == 0 && gpus % model_parallel != 0) {
        fail_path("workload.tensor_parallel",
                  "expected tensor_parallel x context_parallel x pipeline_parallel (" +
                      std::to_string(lay.tensor) + " x " + std::to_string(lay.context) + " x " +
                      std::to_string(lay.pipeline) + " = " + std::to_string(model_parallel) +
                      ") to divide the fabric's " + std::to_string(gpus) + " GPUs");
      }
      if (product > gpus) {
        fail_path("workload.data_parallel",
                  "expected tensor_parallel x context_parallel x pipeline_parallel x data_parallel (" +
                      std::to_string(lay.tensor) + " x " + std::to_string(lay.context) + " x " +
                      std::to_string(lay.pipeline) + " x " + std::to_string(w.data_parallel) + " = " +
                      std::to_string(product) + ") to be at most the fabric's " +
                      std::to_string(gpus) + " GPUs");
      }
    }
    const uint32_t ranks = (w.data_parallel == 0 ? gpus / model_parallel : w.data_parallel) * model_parallel;
    if (w.step.perturbations.straggler && *w.step.perturbations.straggler >= ranks) {
      fail_path("workload.perturbations.straggler.rank",
                "expected a rank below " + std::to_string(ranks) + ", got " +
                    std::to_string(*w.step.perturbations.straggler));
    }
    if (w.step.algorithm == models::CollectiveAlgo::Hierarchical &&
        ranks % scenario.fabric.host.gpus != 0) {
      fail_path("workload.algorithm", "hierarchical all-reduce needs whole hosts: " +
                                          std::to_string(ranks) + " ranks on hosts of " +
                                          std::to_string(scenario.fabric.host.gpus) + " GPUs");
    }
    if (w.step.algorithm == models::CollectiveAlgo::Pairwise) {
      fail_path("workload.algorithm",
                "expected an all-reduce algorithm (ring, tree, halving_doubling, hierarchical), got "
                "pairwise");
    }
  }
}

}  // namespace

Scenario load_scenario_text(const std::string& yaml_text, const std::string& source_name,
                            const LoadOptions& options) {
  Loader loader(source_name, options);
  return loader.load(yaml_text);
}

Scenario load_scenario_file(const std::string& path, const LoadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw ScenarioError(
        path, 0, 0, "",
        std::string("cannot read file: ") + (err != 0 ? std::strerror(err) : "open failed"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw ScenarioError(path, 0, 0, "", "cannot read file: read error");
  }
  return load_scenario_text(text.str(), path, options);
}

Scenario load_default_scenario(const LoadOptions& options) {
  return load_scenario_text(default_scenario_yaml(), kDefaultScenarioSource, options);
}

Override parse_override(const std::string& arg) {
  const std::size_t eq = arg.find('=');
  if (eq == std::string::npos) {
    throw ScenarioError(kOverrideSource, 0, 0, "",
                        "expected dotted.path=value, got " + quoted(arg));
  }
  Override o{arg.substr(0, eq), arg.substr(eq + 1)};
  for (const std::string& part : split_path(o.path)) {
    if (part.empty()) {
      throw ScenarioError(
          kOverrideSource, 0, 0, "",
          "expected dotted.path=value with non-empty path components, got " + quoted(arg));
    }
  }
  return o;
}

// `observe:` {interval, ports: ["leaf0->host0.nic0", ...], flows, rate_window: {start, end}}.
// Port names are checked against the built fabric by the runner.
ReportSpec Loader::read_report(const YAML::Node& node, const std::string& path) const {
  const MapView m(*this, node, path, {"allreduce_small", "allreduce_large"});
  ReportSpec r;
  // At least one float (nccl-tests rounds sizes down to whole 4-byte elements); at most 64 GiB.
  auto size = [&](std::string_view key) {
    const std::string p = m.path_of(key);
    const YAML::Node& n = m.require(key);
    const Bytes b = read_bytes(n, p);
    if (b.count() < 4 || b.count() > (int64_t{64} << 30)) {
      fail(p, n, "expected a size from 4B to 64GiB, got " + quoted(n.Scalar()));
    }
    return b.count();
  };
  r.allreduce_small_bytes = size("allreduce_small");
  r.allreduce_large_bytes = size("allreduce_large");
  return r;
}

// `fabric.flow:` options of the flow-level backend (read whatever the fidelity, so a sweep that
// flips `fidelity` to flow finds typos early): {cc_correction: {contended_efficiency, enabled}}.
net::FlowCcCorrection Loader::read_flow_options(const YAML::Node& node, const std::string& path) const {
  const MapView m(*this, node, path, {"cc_correction"});
  net::FlowCcCorrection c;
  const YAML::Node* cc = m.find("cc_correction");
  if (cc == nullptr || cc->IsNull()) return c;
  const MapView cm(*this, *cc, m.path_of("cc_correction"), {"contended_efficiency", "enabled"});
  const YAML::Node& e = cm.require("contended_efficiency");
  c.contended_efficiency = read_number(e, cm.path_of("contended_efficiency"));
  if (!(c.contended_efficiency > 0 && c.contended_efficiency <= 1)) {
    fail(cm.path_of("contended_efficiency"), e,
         "expected an efficiency in (0, 1] (1 = no correction), got " + quoted(e.Scalar()));
  }
  c.enabled = true;
  if (const YAML::Node* v = cm.find("enabled")) c.enabled = read_bool(*v, cm.path_of("enabled"));
  return c;
}

ObserveSpec Loader::read_observe(const YAML::Node& node, const std::string& path) const {
  const MapView m(*this, node, path, {"interval", "ports", "flows", "rate_window"});
  ObserveSpec o;
  if (const YAML::Node* v = m.find("interval")) {
    o.interval = read_time(*v, m.path_of("interval"));
    if (o.interval <= Time::zero()) fail(m.path_of("interval"), *v, "expected a positive time, got " + v->Scalar());
  }
  if (const YAML::Node* v = m.find("ports")) {
    if (!v->IsSequence()) fail(m.path_of("ports"), *v, "expected a list of \"owner->peer\" port names, got " + describe(*v));
    for (std::size_t i = 0; i < v->size(); ++i) {
      o.ports.push_back(read_string((*v)[i], join_path(m.path_of("ports"), i)));
    }
  }
  if (const YAML::Node* v = m.find("flows")) o.flows = read_bool(*v, m.path_of("flows"));
  if (const YAML::Node* v = m.find("rate_window")) {
    const MapView w(*this, *v, m.path_of("rate_window"), {"start", "end"});
    o.window_start = read_time(w.require("start"), w.path_of("start"));
    o.window_end = read_time(w.require("end"), w.path_of("end"));
    if (o.window_start < Time::zero() || o.window_end <= o.window_start) {
      fail(m.path_of("rate_window"), *v, "expected 0 <= start < end");
    }
    o.rate_window = true;
  }
  return o;
}

// `fabric.route_overrides: [{src: GPU, dst: GPU, via: [leaf1, ...]}]`; switch names are checked by
// the runner against the built fabric.
std::vector<RouteOverrideSpec> Loader::read_route_overrides(const YAML::Node& node,
                                                            const std::string& path) const {
  if (!node.IsSequence()) fail(path, node, "expected a list of {src, dst, via}, got " + describe(node));
  std::vector<RouteOverrideSpec> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = join_path(path, i);
    const MapView m(*this, node[i], at, {"src", "dst", "via"});
    RouteOverrideSpec r;
    r.src_gpu = read_u32(m.require("src"), m.path_of("src"));
    r.dst_gpu = read_u32(m.require("dst"), m.path_of("dst"));
    const YAML::Node& via = m.require("via");
    if (!via.IsSequence() || via.size() == 0) {
      fail(m.path_of("via"), via, "expected a non-empty list of switch names, got " + describe(via));
    }
    for (std::size_t k = 0; k < via.size(); ++k) r.via.push_back(read_string(via[k], join_path(m.path_of("via"), k)));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace syncsim::app
