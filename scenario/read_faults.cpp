// `faults:` a list of timed events (docs/faults.md): each a map with `kind`, `at` and the keys of
// its kind; fabric.routing_convergence; and the check of the names against the built fabric.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "scenario/section_readers.hpp"
#include "sim/net/port_names.hpp"

namespace syncsim::app::yaml_reader {

namespace {

const std::vector<std::pair<std::string_view, FaultKind>> kFaultKinds{
    {"link_down", FaultKind::LinkDown},
    {"link_up", FaultKind::LinkUp},
    {"link_degraded", FaultKind::LinkDegraded},
    {"switch_down", FaultKind::SwitchDown},
    {"switch_up", FaultKind::SwitchUp},
    {"nic_down", FaultKind::NicDown},
    {"nic_up", FaultKind::NicUp},
    {"straggler", FaultKind::Straggler},
    {"pfc_storm", FaultKind::PfcStorm},
};

// The key naming a kind's target, and the keys it allows beyond kind and at.
struct KindKeys {
  std::string_view target;
  std::vector<std::string_view> keys;
};

KindKeys keys_of(FaultKind k) {
  const std::vector<std::string_view> timed{"duration", "period", "count"};
  auto with = [&](std::string_view target, std::vector<std::string_view> extra) {
    std::vector<std::string_view> keys{"kind", "at", target};
    keys.insert(keys.end(), extra.begin(), extra.end());
    return KindKeys{target, keys};
  };
  switch (k) {
    case FaultKind::LinkDown:
      return with("link", timed);
    case FaultKind::LinkDegraded: {
      std::vector<std::string_view> extra = timed;
      extra.emplace_back("fraction");
      return with("link", extra);
    }
    case FaultKind::LinkUp:
      return with("link", {});
    case FaultKind::SwitchDown:
      return with("switch", timed);
    case FaultKind::SwitchUp:
      return with("switch", {});
    case FaultKind::NicDown:
      return with("nic", timed);
    case FaultKind::NicUp:
      return with("nic", {});
    case FaultKind::Straggler:
      return with("gpu", {"slowdown", "duration"});
    case FaultKind::PfcStorm:
      return with("nic", {"priority", "duration", "period", "count"});
  }
  return {};
}

Time non_negative_time(const Reader& in, const YAML::Node& n, const std::string& path,
                       bool positive) {
  const Time t = in.read_time(n, path);
  if (t < Time::zero() || (positive && t == Time::zero())) {
    in.fail(path, n,
            std::string("expected a ") + (positive ? "positive" : "non-negative") + " time, got " +
                quoted(n.Scalar()));
  }
  return t;
}

}  // namespace

std::vector<FaultSpec> read_faults(const Reader& in, const YAML::Node& node,
                                   const std::string& path) {
  if (!node.IsSequence()) {
    in.fail(path, node, "expected a list of {kind, at, ...} events, got " + describe(node));
  }
  std::vector<FaultSpec> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = join_path(path, i);
    const YAML::Node& entry = node[i];
    if (!entry.IsMap() || !entry["kind"]) {
      in.fail(at, entry,
              "expected a map with `kind` (" + one_of([] {
                std::vector<std::string_view> n;
                for (const auto& [name, kind] : kFaultKinds) n.push_back(name);
                return n;
              }()) +
                  ") and `at`, got " + describe(entry));
    }
    FaultSpec f;
    f.path = at;
    f.kind = in.read_enum(entry["kind"], join_path(at, "kind"), kFaultKinds);
    const KindKeys k = keys_of(f.kind);
    const MapView m(in, entry, at, k.keys);
    f.at = non_negative_time(in, m.require("at"), m.path_of("at"), false);
    const YAML::Node& target = m.require(k.target);
    if (f.kind == FaultKind::Straggler) {
      f.gpu = in.read_u32(target, m.path_of("gpu"));
      const YAML::Node& s = m.require("slowdown");
      f.slowdown = in.read_number(s, m.path_of("slowdown"));
      if (!(f.slowdown >= 1.0) || f.slowdown > 1000.0) {
        in.fail(m.path_of("slowdown"), s,
                "expected a factor from 1 to 1000 (1.3: compute takes 1.3x as long), got " +
                    quoted(s.Scalar()));
      }
    } else {
      f.target = in.read_string(target, m.path_of(k.target));
    }
    if (const YAML::Node* v = m.find("fraction")) {
      f.fraction = in.read_number(*v, m.path_of("fraction"));
      if (!(f.fraction > 0.0 && f.fraction <= 1.0)) {
        in.fail(m.path_of("fraction"), *v,
                "expected a fraction of the link's rate in (0, 1], got " + quoted(v->Scalar()));
      }
    } else if (f.kind == FaultKind::LinkDegraded) {
      m.require("fraction");
    }
    if (const YAML::Node* v = m.find("priority")) {
      f.priority = static_cast<uint8_t>(in.read_uint(*v, m.path_of("priority"), 0, kMaxPriority));
    }
    if (const YAML::Node* v = m.find("duration")) {
      f.duration = non_negative_time(in, *v, m.path_of("duration"), true);
    } else if (f.kind == FaultKind::PfcStorm) {
      m.require("duration");
    }
    if (const YAML::Node* v = m.find("period")) {
      f.period = non_negative_time(in, *v, m.path_of("period"), true);
      const YAML::Node& c = m.require("count");
      f.count = in.read_u32(c, m.path_of("count"), 1);
      if (!f.duration) f.duration = Time::ps(f.period.picoseconds() / 2);  // half down, half up
      if (*f.duration >= f.period) {
        in.fail(m.path_of("duration"), m.find("duration") ? *m.find("duration") : *v,
                "expected a duration shorter than the period, so each repeat ends first");
      }
    } else if (const YAML::Node* c = m.find("count")) {
      in.fail(m.path_of("count"), *c, "expected `period` with `count` (the time between repeats)");
    }
    out.push_back(std::move(f));
  }
  return out;
}

Time read_routing_convergence(const Reader& in, const YAML::Node& node, const std::string& path) {
  return non_negative_time(in, node, path, false);
}

void check_faults(const Reader& in, const Scenario& scenario, const net::NetworkSpec& spec) {
  if (spec.links.empty()) return;  // a fabric too big to build here: the run checks the names
  for (const FaultSpec& f : scenario.faults) {
    const KindKeys k = keys_of(f.kind);
    const std::string path = join_path(f.path, k.target);
    switch (f.kind) {
      case FaultKind::LinkDown:
      case FaultKind::LinkUp:
      case FaultKind::LinkDegraded:
        if (net::find_egress_port(spec, f.target) == UINT32_MAX) {
          in.fail_path(path,
                       "expected a link \"a->b\" of this fabric (`syncsim ports` lists "
                       "them, either direction names the cable), got \"" +
                           f.target + "\"; did you mean \"" +
                           net::closest_egress_port(spec, f.target) + "\"?");
        }
        break;
      case FaultKind::SwitchDown:
      case FaultKind::SwitchUp:
      case FaultKind::NicDown:
      case FaultKind::NicUp:
      case FaultKind::PfcStorm: {
        const net::NodeKind want = f.kind == FaultKind::SwitchDown || f.kind == FaultKind::SwitchUp
                                       ? net::NodeKind::Switch
                                       : net::NodeKind::Nic;
        bool found = false;
        for (const net::NodeSpec& n : spec.nodes)
          found = found || (n.name == f.target && n.kind == want);
        if (!found) {
          in.fail_path(path, std::string("expected the name of a ") +
                                 (want == net::NodeKind::Switch ? "switch (\"spine0\", \"leaf3\")"
                                                                : "NIC (\"host0.nic0\")") +
                                 " of this fabric, got \"" + f.target + "\"");
        }
        break;
      }
      case FaultKind::Straggler:
        if (f.gpu >= spec.gpus.size()) {
          in.fail_path(path, "expected a GPU below the fabric's " +
                                 std::to_string(spec.gpus.size()) + ", got " +
                                 std::to_string(f.gpu));
        }
        break;
    }
    if (f.kind == FaultKind::PfcStorm && f.priority >= scenario.fabric.switch_params.priorities) {
      in.fail_path(join_path(f.path, "priority"),
                   "expected a priority below fabric.switch.priorities (" +
                       std::to_string(scenario.fabric.switch_params.priorities) + ")");
    }
  }
}

}  // namespace syncsim::app::yaml_reader
