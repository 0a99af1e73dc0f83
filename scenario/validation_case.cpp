// validation/*.yaml -> ValidationCase, with the scenario readers' typed values and errors.
#include "scenario/validation_case.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenario/scenario_loader.hpp"
#include "scenario/yaml_reader.hpp"

namespace syncsim::app {

namespace {

using yaml_reader::MapView;
using yaml_reader::OverriddenTree;
using yaml_reader::Reader;

const std::vector<std::pair<std::string_view, ValidationGroup>> kGroups{
    {"collectives", ValidationGroup::Collectives},
    {"training_steps", ValidationGroup::TrainingSteps},
    {"congestion", ValidationGroup::Congestion},
};

const std::vector<MeasuredUnit>& units() {
  static const std::vector<MeasuredUnit> table{
      {"us", UnitDimension::Time, 1e-6},
      {"ms", UnitDimension::Time, 1e-3},
      {"s", UnitDimension::Time, 1},
      {"GB/s", UnitDimension::Bandwidth, 1},
      {"tokens/s", UnitDimension::Throughput, 1},
      {"%", UnitDimension::Ratio, 0.01},
      {"-", UnitDimension::Ratio, 1},
  };
  return table;
}

CasePosition position(const Reader& in, const YAML::Node& node, const std::string& path) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {in.source(), 1, 1, path};
  return {in.source(), m.line + 1, m.column + 1, path};
}

std::vector<Override> read_sets(const Reader& in, const YAML::Node& node, const std::string& path) {
  if (!node.IsSequence()) {
    in.fail(
        path, node,
        "expected a list of \"dotted.path=value\" overrides, got " + yaml_reader::describe(node));
  }
  std::vector<Override> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string item_path = yaml_reader::join_path(path, i);
    const YAML::Node item = node[i];
    const std::string text = in.read_string(item, item_path);
    try {
      out.push_back(parse_override(text));
    } catch (const ScenarioError& e) {
      in.fail(item_path, item, e.message());
    }
  }
  return out;
}

// "15%" or 0.15; at most 10 (1000 %), so a typo of 15 for 15 % is caught.
double read_tolerance(const Reader& in, const YAML::Node& node, const std::string& path) {
  const std::string& s = in.scalar(node, path, "a relative tolerance like 0.15 or \"15%\"");
  double v = 0;
  if (!s.empty() && s.back() == '%') {
    char* end = nullptr;
    errno = 0;
    v = std::strtod(s.c_str(), &end) / 100;
    if (end != s.c_str() + s.size() - 1 || errno == ERANGE || s.size() == 1) {
      in.fail(path, node,
              "expected a relative tolerance like 0.15 or \"15%\", got " + yaml_reader::quoted(s));
    }
  } else {
    v = in.read_number(node, path);
  }
  if (!(v > 0) || v > 10) {
    in.fail(path, node, "expected a relative tolerance in (0, 10] (0..1000%), got " + s);
  }
  return v;
}

std::optional<std::string> resolve_scenario(const std::string& file, const std::string& base_dir) {
  namespace fs = std::filesystem;
  const fs::path p(file);
  if (p.is_absolute()) return fs::exists(p) ? std::optional(p.string()) : std::nullopt;
  const fs::path base(base_dir.empty() ? "." : base_dir);
  for (const fs::path& dir : {base, base.parent_path()}) {
    std::error_code ec;
    if (fs::is_regular_file(dir / p, ec)) return (dir / p).lexically_normal().string();
  }
  return std::nullopt;
}

void read_scenario(const Reader& in, const YAML::Node& node, const std::string& path,
                   const std::string& base_dir, ValidationCase& c) {
  const MapView s(in, node, path, {"file", "inline", "set"});
  const YAML::Node* file = s.find("file");
  const YAML::Node* inline_map = s.find("inline");
  if ((file == nullptr) == (inline_map == nullptr)) {
    in.fail(path, node, "expected exactly one of \"file\" and \"inline\"");
  }
  if (file != nullptr) {
    const std::string name = in.read_string(*file, s.path_of("file"));
    c.scenario_file = resolve_scenario(name, base_dir);
    if (!c.scenario_file) {
      in.fail(s.path_of("file"), *file,
              "expected a scenario file (relative to the case's folder or its parent), found "
              "none at " +
                  yaml_reader::quoted(name));
    }
  } else {
    if (!inline_map->IsMap()) {
      in.fail(s.path_of("inline"), *inline_map,
              "expected a scenario map, got " + yaml_reader::describe(*inline_map));
    }
    YAML::Emitter emitter;
    emitter << *inline_map;
    c.scenario_inline = emitter.c_str();
    const YAML::Mark m = inline_map->Mark();
    c.inline_source = in.source() + ":" + std::to_string(m.line + 1) + " (inline scenario)";
  }
  if (const YAML::Node* n = s.find("set")) c.overrides = read_sets(in, *n, s.path_of("set"));
}

ValidationMetric read_metric(const Reader& in, const YAML::Node& node, const std::string& path) {
  const MapView m(in, node, path, {"collective", "ranks", "bandwidth", "run", "per_gpu"});
  ValidationMetric out;
  out.where = position(in, node, path);
  const YAML::Node* collective = m.find("collective");
  const YAML::Node* run = m.find("run");
  if ((collective == nullptr) == (run == nullptr)) {
    in.fail(path, node, "expected exactly one of \"collective\" and \"run\"");
  }
  auto only_with = [&](std::string_view key, const YAML::Node* owner, const char* what) {
    if (const YAML::Node* n = m.find(key); n != nullptr && owner == nullptr) {
      in.fail(m.path_of(key), *n, std::string("expected only with ") + what);
    }
  };
  only_with("ranks", collective, "\"collective\"");
  only_with("bandwidth", collective, "\"collective\"");
  only_with("per_gpu", run, "\"run\"");
  if (collective != nullptr) {
    CollectiveMetric cm;
    const std::string op = in.read_string(*collective, m.path_of("collective"));
    try {
      cm.op = models::parse_collective_op(op);
    } catch (const std::invalid_argument& e) {
      in.fail(m.path_of("collective"), *collective, e.what());
    }
    if (const YAML::Node* n = m.find("ranks")) cm.ranks = in.read_u32(*n, m.path_of("ranks"), 2);
    if (const YAML::Node* n = m.find("bandwidth")) {
      cm.algbw = in.read_enum(
          *n, m.path_of("bandwidth"),
          std::vector<std::pair<std::string_view, bool>>{{"busbw", false}, {"algbw", true}});
    }
    out.collective = cm;
  } else {
    RunMetric rm;
    rm.key = in.read_string(*run, m.path_of("run"));
    rm.where = position(in, *run, m.path_of("run"));
    if (const YAML::Node* n = m.find("per_gpu"))
      rm.per_gpu = in.read_bool(*n, m.path_of("per_gpu"));
    out.run = rm;
  }
  return out;
}

MeasuredValue read_value(const Reader& in, const YAML::Node& node, const std::string& path,
                         const ValidationCase& c) {
  const MapView m(in, node, path, {"quantity", "value", "unit", "size", "set", "inexpressible"});
  MeasuredValue v;
  v.where = position(in, node, path);
  v.quantity = in.read_string(m.require("quantity"), m.path_of("quantity"));
  if (const YAML::Node* n = m.find("inexpressible")) {
    v.inexpressible = in.read_string(*n, m.path_of("inexpressible"));
  }
  if (const YAML::Node* n = m.find("value")) {
    v.value = in.read_number(*n, m.path_of("value"));
    if (!(*v.value > 0)) in.fail(m.path_of("value"), *n, "expected a positive number");
  } else if (c.inexpressible.empty()) {
    in.fail_at(path, node, m.path_of("value"),
               "missing required key \"value\" (only an inexpressible case may leave it out)");
  }
  const YAML::Node& unit = m.require("unit");
  const std::string unit_name = in.read_string(unit, m.path_of("unit"));
  const auto u = find_measured_unit(unit_name);
  if (!u) {
    in.fail(
        m.path_of("unit"), unit,
        "expected one of: " + measured_unit_names() + "; got " + yaml_reader::quoted(unit_name));
  }
  v.unit = *u;
  const bool collective = c.metric && c.metric->collective;
  if (const YAML::Node* n = m.find("size")) {
    if (c.metric && !collective) {
      in.fail(m.path_of("size"), *n, "expected only with a collective metric");
    }
    v.size = in.read_bytes(*n, m.path_of("size")).count();
  } else if (collective && c.inexpressible.empty() && v.inexpressible.empty()) {
    in.fail_at(path, node, m.path_of("size"),
               "missing required key \"size\" (the message size of the collective metric)");
  }
  if (collective && v.unit.dimension != UnitDimension::Time &&
      v.unit.dimension != UnitDimension::Bandwidth) {
    in.fail(m.path_of("unit"), unit,
            "expected a time (us, ms, s) or a bandwidth (GB/s) for a collective metric, got " +
                yaml_reader::quoted(unit_name));
  }
  if (const YAML::Node* n = m.find("set")) v.overrides = read_sets(in, *n, m.path_of("set"));
  return v;
}

ValidationCase read_case(const Reader& in, const std::string& base_dir) {
  const MapView top(in, in.root(), "",
                    {"id", "group", "source", "hardware", "software", "conditions", "scenario",
                     "metric", "tolerance", "inexpressible", "measured"});
  ValidationCase c;
  c.file = in.source();
  c.id = in.read_string(top.require("id"), "id");
  c.id_where = position(in, top.require("id"), "id");
  for (char ch : c.id) {
    const bool ok =
        (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.';
    if (!ok) {
      in.fail("id", top.require("id"),
              "expected lower-case letters, digits, '-', '_' and '.', got " +
                  yaml_reader::quoted(c.id));
    }
  }
  c.group = in.read_enum(top.require("group"), "group", kGroups);
  c.source = in.read_string(top.require("source"), "source");
  c.hardware = in.read_string(top.require("hardware"), "hardware");
  c.software = in.read_string(top.require("software"), "software");
  c.conditions = in.read_string(top.require("conditions"), "conditions");
  if (const YAML::Node* n = top.find("inexpressible")) {
    c.inexpressible = in.read_string(*n, "inexpressible");
  }
  const bool expressible = c.inexpressible.empty();
  const YAML::Node* scenario = expressible ? &top.require("scenario") : top.find("scenario");
  if (scenario != nullptr) read_scenario(in, *scenario, "scenario", base_dir, c);
  const YAML::Node* metric = expressible ? &top.require("metric") : top.find("metric");
  if (metric != nullptr) c.metric = read_metric(in, *metric, "metric");
  {
    const YAML::Node& t = top.require("tolerance");
    const MapView tm(in, t, "tolerance", {"relative", "reason"});
    c.tolerance = read_tolerance(in, tm.require("relative"), tm.path_of("relative"));
    c.tolerance_reason = in.read_string(tm.require("reason"), tm.path_of("reason"));
  }
  const YAML::Node& measured = top.require("measured");
  if (!measured.IsSequence() || measured.size() == 0) {
    in.fail("measured", measured,
            "expected a non-empty list of measured values, got " + yaml_reader::describe(measured));
  }
  for (std::size_t i = 0; i < measured.size(); ++i) {
    c.measured.push_back(read_value(in, measured[i], yaml_reader::join_path("measured", i), c));
  }
  return c;
}

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw ScenarioError(path, 0, 0, "", "expected a YAML validation case, found a directory");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    const int err = errno;
    throw ScenarioError(
        path, 0, 0, "",
        std::string("cannot read file: ") + (err != 0 ? std::strerror(err) : "open failed"));
  }
  std::ostringstream text;
  text << f.rdbuf();
  return text.str();
}

}  // namespace

std::string_view to_string(ValidationGroup group) {
  for (const auto& [name, g] : kGroups) {
    if (g == group) return name;
  }
  return "?";
}

std::vector<std::string> validation_group_names() {
  std::vector<std::string> out;
  for (const auto& [name, g] : kGroups) out.emplace_back(name);
  return out;
}

std::string_view to_string(UnitDimension dimension) {
  switch (dimension) {
    case UnitDimension::Time:
      return "a time";
    case UnitDimension::Bandwidth:
      return "a bandwidth";
    case UnitDimension::Throughput:
      return "a throughput";
    case UnitDimension::Ratio:
      return "a ratio";
  }
  return "?";
}

std::optional<MeasuredUnit> find_measured_unit(std::string_view name) {
  for (const MeasuredUnit& u : units()) {
    if (u.name == name) return u;
  }
  return std::nullopt;
}

std::string measured_unit_names() {
  std::string out;
  for (const MeasuredUnit& u : units()) out += (out.empty() ? "" : ", ") + u.name;
  return out;
}

ValidationCase load_validation_case_text(const std::string& yaml_text,
                                         const std::string& source_name,
                                         const std::string& base_dir) {
  OverriddenTree tree;
  try {
    tree.root.reset(YAML::Load(yaml_text));
  } catch (const YAML::ParserException& e) {
    throw ScenarioError(source_name, e.mark.line + 1, e.mark.column + 1, "", e.msg);
  }
  if (!tree.root.IsMap()) {
    throw ScenarioError(source_name, 1, 1, "",
                        "expected a validation case (a map with id, group, source, ...), got " +
                            yaml_reader::describe(tree.root));
  }
  const Reader in(source_name, tree);
  return read_case(in, base_dir);
}

ValidationCase load_validation_case_file(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return load_validation_case_text(read_text(path), path, dir);
}

std::vector<ValidationCase> load_validation_suite(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ScenarioError(dir, 0, 0, "", "expected a folder of validation cases (*.yaml)");
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<ValidationCase> cases;
  for (const std::string& f : files) {
    ValidationCase c = load_validation_case_file(f);
    for (const ValidationCase& other : cases) {
      if (other.id == c.id) {
        throw ScenarioError(
            f, c.id_where.line, c.id_where.column, "id",
            "duplicate case id " + yaml_reader::quoted(c.id) + " (first in " + other.file + ")");
      }
    }
    cases.push_back(std::move(c));
  }
  if (cases.empty()) {
    throw ScenarioError(dir, 0, 0, "", "expected validation cases (*.yaml), found none");
  }
  return cases;
}

}  // namespace syncsim::app
