// `observe:` (time series, flow-rate window), `report:` (extra all_reduce figures) and `sweep:`.
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "scenario/section_readers.hpp"

namespace syncsim::app::yaml_reader {

// `report:` {allreduce_small, allreduce_large}: the sizes of the extra all_reduce figures.
ReportSpec read_report(const Reader& in, const YAML::Node& node, const std::string& path) {
  const MapView m(in, node, path, {"allreduce_small", "allreduce_large"});
  ReportSpec report;
  // At least one float (nccl-tests rounds sizes down to whole 4-byte elements); at most 64 GiB.
  auto size = [&](std::string_view key) {
    const std::string p = m.path_of(key);
    const YAML::Node& n = m.require(key);
    const Bytes b = in.read_bytes(n, p);
    if (b.count() < 4 || b.count() > (int64_t{64} << 30)) {
      in.fail(p, n, "expected a size from 4B to 64GiB, got " + quoted(n.Scalar()));
    }
    return b.count();
  };
  report.allreduce_small_bytes = size("allreduce_small");
  report.allreduce_large_bytes = size("allreduce_large");
  return report;
}

// `observe:` {interval, ports: ["leaf0->host0.nic0", ...], flows, rate_window: {start, end}}.
// Port names are checked against the built fabric by the runner.
ObserveSpec read_observe(const Reader& in, const YAML::Node& node, const std::string& path) {
  const MapView m(in, node, path, {"interval", "ports", "flows", "rate_window"});
  ObserveSpec o;
  if (const YAML::Node* v = m.find("interval")) {
    o.interval = in.read_time(*v, m.path_of("interval"));
    if (o.interval <= Time::zero()) {
      in.fail(m.path_of("interval"), *v, "expected a positive time, got " + v->Scalar());
    }
  }
  if (const YAML::Node* v = m.find("ports")) {
    if (!v->IsSequence()) {
      in.fail(m.path_of("ports"), *v,
              "expected a list of \"owner->peer\" port names, got " + describe(*v));
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      o.ports.push_back(in.read_string((*v)[i], join_path(m.path_of("ports"), i)));
    }
  }
  if (const YAML::Node* v = m.find("flows")) o.flows = in.read_bool(*v, m.path_of("flows"));
  if (const YAML::Node* v = m.find("rate_window")) {
    const MapView w(in, *v, m.path_of("rate_window"), {"start", "end"});
    o.window_start = in.read_time(w.require("start"), w.path_of("start"));
    o.window_end = in.read_time(w.require("end"), w.path_of("end"));
    if (o.window_start < Time::zero() || o.window_end <= o.window_start) {
      in.fail(m.path_of("rate_window"), *v, "expected 0 <= start < end");
    }
    o.rate_window = true;
  }
  return o;
}

// `sweep:` {dotted.path: [value, value, ...]} or {dotted.path: {label: value, ...}}: each axis with
// at least two values, kept as written (`syncsim sweep` applies them as --set overrides). A list
// holds scalars (the column shows them); a map names each value, which may then be any YAML (a
// traffic entry, a block of settings) and the column shows its label.
std::vector<SweepAxisSpec> read_sweep(const Reader& in, const YAML::Node& node,
                                      const std::string& path) {
  if (!node.IsMap() || node.size() == 0) {
    in.fail(path, node, "expected a map of dotted.path: [values...], got " + describe(node));
  }
  std::vector<SweepAxisSpec> axes;
  for (const auto& kv : node) {
    SweepAxisSpec axis{.path = kv.first.Scalar(), .values = {}};
    const std::string axis_path = join_path(path, axis.path);
    const YAML::Node& values = kv.second;
    if (values.IsMap() && values.size() >= 2) {
      for (const auto& labelled : values) {
        const std::string label = labelled.first.Scalar();
        if (label.empty() || label.find_first_of(",\"\n") != std::string::npos) {
          in.fail(axis_path, labelled.first,
                  "expected a label without commas, quotes or line breaks, got \"" + label + "\"");
        }
        YAML::Emitter text;
        text << YAML::Flow << labelled.second;
        axis.labels.push_back(label);
        axis.values.emplace_back(text.c_str());
      }
      axes.push_back(std::move(axis));
      continue;
    }
    if (!values.IsSequence() || values.size() < 2) {
      in.fail(axis_path, values,
              "expected a list of at least two values or a map of at least two {label: value}, "
              "got " +
                  describe(values));
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (!values[i].IsScalar()) {
        in.fail(join_path(axis_path, i), values[i],
                "expected a scalar value (name non-scalar values: {label: value, ...}), got " +
                    describe(values[i]));
      }
      axis.values.push_back(values[i].Scalar());
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

}  // namespace syncsim::app::yaml_reader
