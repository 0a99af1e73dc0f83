// `--set dotted.path=value`: parsed from the command line, then written into the YAML tree before
// any section is read, so an overridden value is checked exactly like one from the file.
#include <optional>
#include <string>
#include <vector>

#include "scenario/section_readers.hpp"

namespace syncsim::app {

using yaml_reader::kOverrideSource;
using yaml_reader::quoted;
using yaml_reader::split_path;

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

Override unset_override(const std::string& path) {
  for (const std::string& part : split_path(path)) {
    if (part.empty()) {
      throw ScenarioError(
          kOverrideSource, 0, 0, "",
          "expected --unset dotted.path with non-empty path components, got " + quoted(path));
    }
  }
  return Override{path, "null"};
}

namespace yaml_reader {

namespace {

std::string out_of_range(const std::string& verb, const Override& o, const std::string& part,
                         const std::string& walked, std::size_t size) {
  return "cannot " + verb + " " + quoted(o.path) + ": index " + part + " is out of range, " +
         walked + " has " + std::to_string(size) + " entries";
}

std::string not_an_index(const std::string& verb, const Override& o, const std::string& part,
                         const std::string& walked) {
  return "cannot " + verb + " " + quoted(o.path) + ": " + walked +
         " is a sequence, so the next path component must be an index, got " + quoted(part);
}

// `--set path=null` or `--unset path`: the key is removed, so its section reads as if the file
// never had it (a sweep can then switch `workload.fsdp` off and `workload.ddp` on). A key that is
// not there is left alone, so the same override applies to every scenario of a sweep.
void remove_key(OverriddenTree& tree, const Override& o, const std::vector<std::string>& parts) {
  YAML::Node cur;
  cur.reset(tree.root);
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    if (cur.IsSequence()) {
      const std::optional<std::size_t> index = parse_index(part);
      if (!index) {
        throw ScenarioError(kOverrideSource, 1, 1, o.path, not_an_index("unset", o, part, walked));
      }
      if (*index >= cur.size()) {
        throw ScenarioError(kOverrideSource, 1, 1, o.path,
                            out_of_range("unset", o, part, walked, cur.size()));
      }
      if (last) {
        throw ScenarioError(kOverrideSource, 1, 1, o.path,
                            "cannot unset " + quoted(o.path) +
                                ": the entries of a sequence cannot be removed; set " + walked +
                                " to the whole sequence instead");
      }
      YAML::Node next = cur[*index];
      cur.reset(next);
    } else if (cur.IsMap()) {
      const YAML::Node& const_cur = cur;
      if (!const_cur[part].IsDefined()) {
        return;
      }
      if (last) {
        cur.remove(part);
        return;
      }
      YAML::Node next = cur[part];
      cur.reset(next);
    } else if (cur.IsNull() || !cur.IsDefined()) {
      return;
    } else {
      throw ScenarioError(kOverrideSource, 1, 1, o.path,
                          "cannot unset " + quoted(o.path) + ": " + walked + " is " +
                              describe(cur) + ", not a map or sequence");
    }
    walked = join_path(walked, part);
  }
}

}  // namespace

void apply_override(OverriddenTree& tree, const Override& o) {
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
  if (value.IsNull()) {
    remove_key(tree, o, parts);
    return;
  }
  // An empty document has no root node to write into; start from an empty map.
  if (!tree.root.IsDefined() || tree.root.IsNull()) {
    tree.root.reset(YAML::Node(YAML::NodeType::Map));
  }
  YAML::Node cur;
  cur.reset(tree.root);
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    const std::string here = join_path(walked, part);
    if (cur.IsSequence()) {
      const std::optional<std::size_t> index = parse_index(part);
      if (!index) {
        throw ScenarioError(kOverrideSource, 1, 1, o.path, not_an_index("set", o, part, walked));
      }
      if (*index >= cur.size()) {
        throw ScenarioError(kOverrideSource, 1, 1, o.path,
                            out_of_range("set", o, part, walked, cur.size()));
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
          tree.override_paths.push_back(here);
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
  tree.override_paths.push_back(o.path);
}

}  // namespace yaml_reader

}  // namespace syncsim::app
