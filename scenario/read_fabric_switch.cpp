// `fabric.switch:` buffer, traffic classes, ETS, PFC (thresholds, headroom, watchdog) and ECN
// marking.
#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "scenario/section_readers.hpp"
#include "scenario/units.hpp"
#include "sim/net/ib_presets.hpp"

namespace syncsim::app::yaml_reader {

namespace {

void read_pfc(const Reader& in, const YAML::Node& node, const std::string& path,
              net::PfcParams& pfc) {
  const MapView m(in, node, path,
                  {"enabled", "lossless_priorities", "threshold", "xon_offset", "headroom",
                   "response_time", "deadlock_detection_time", "watchdog", "pause_quanta"});
  if (const YAML::Node* v = m.find("enabled")) {
    pfc.enabled = in.read_bool(*v, m.path_of("enabled"));
  }
  if (const YAML::Node* v = m.find("lossless_priorities")) {
    const std::string list_path = m.path_of("lossless_priorities");
    if (!v->IsSequence() || v->size() == 0) {
      in.fail(list_path, *v,
              "expected a non-empty list of priorities like [3], got " +
                  (v->IsSequence() ? std::string("[]") : describe(*v)));
    }
    pfc.lossless_mask = 0;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const YAML::Node& item = (*v)[i];
      const auto prio = in.read_uint(item, join_path(list_path, i), 0, kMaxPriority);
      pfc.lossless_mask = static_cast<uint8_t>(pfc.lossless_mask | (1U << prio));
    }
  }
  const YAML::Node* threshold_node = m.find("threshold");
  if (threshold_node != nullptr) {
    const std::string tpath = m.path_of("threshold");
    const MapView t(in, *threshold_node, tpath, {"static", "dynamic_alpha"});
    const YAML::Node* st = t.find("static");
    const YAML::Node* dyn = t.find("dynamic_alpha");
    if ((st == nullptr) == (dyn == nullptr)) {
      in.fail(
          tpath, *threshold_node,
          "expected exactly one of: static (bytes), dynamic_alpha (a fraction of the free shared "
          "buffer)");
    }
    if (st != nullptr) {
      pfc.dynamic_threshold = false;
      pfc.static_xoff = in.read_bytes(*st, t.path_of("static"));
    } else {
      pfc.dynamic_threshold = true;
      pfc.alpha = in.read_number(*dyn, t.path_of("dynamic_alpha"));
    }
  }
  const YAML::Node* xon_node = m.find("xon_offset");
  if (xon_node != nullptr) {
    pfc.xon_offset = in.read_bytes(*xon_node, m.path_of("xon_offset"));
  }
  if (const YAML::Node* v = m.find("headroom")) {
    if (v->IsScalar() && v->Scalar() == "auto") {
      pfc.headroom_auto = true;
    } else {
      pfc.headroom_auto = false;
      const std::string& text =
          in.scalar(*v, m.path_of("headroom"), "auto or a size like \"64KiB\"");
      try {
        pfc.headroom = parse_bytes(text);
      } catch (const UnitError& e) {
        in.fail(
            m.path_of("headroom"), *v,
            "expected auto or a size like \"64KiB\", got " + quoted(text) + " (" + e.what() + ")");
      }
    }
  }
  if (const YAML::Node* v = m.find("response_time")) {
    pfc.response_time = in.read_time(*v, m.path_of("response_time"));
  }
  if (const YAML::Node* v = m.find("pause_quanta")) {
    pfc.pause_quanta = in.read_u32(*v, m.path_of("pause_quanta"));  // 0: until RESUME
  }
  if (const YAML::Node* v = m.find("deadlock_detection_time")) {
    pfc.deadlock_detection_time = in.read_time(*v, m.path_of("deadlock_detection_time"));  // 0: off
  }
  if (const YAML::Node* v = m.find("watchdog")) {
    const MapView w(in, *v, m.path_of("watchdog"), {"enabled", "detection_time", "action"});
    pfc.watchdog = true;
    if (const YAML::Node* e = w.find("enabled")) {
      pfc.watchdog = in.read_bool(*e, w.path_of("enabled"));
    }
    if (const YAML::Node* t = w.find("detection_time")) {
      pfc.watchdog_time = in.read_time(*t, w.path_of("detection_time"));
    }
    if (const YAML::Node* a = w.find("action")) {
      static const std::vector<std::pair<std::string_view, bool>> kActions{{"drop", true},
                                                                           {"disable", false}};
      pfc.watchdog_drop = in.read_enum(*a, w.path_of("action"), kActions);
    }
  }
  FieldErrors errors = pfc.check();
  // A static XOFF below the default xon_offset is the threshold's fault when xon_offset is unset.
  if (xon_node == nullptr && !errors.empty() && errors.front().field == "xon_offset") {
    errors.front() = {"threshold",
                      "expected a static XOFF threshold of at least the default xon_offset (" +
                          bytes_text(pfc.xon_offset) + "), or set xon_offset, got " +
                          bytes_text(pfc.static_xoff)};
  }
  in.check_fields(path, errors,
                  {{"static_xoff", "threshold.static"},
                   {"alpha", "threshold.dynamic_alpha"},
                   {"watchdog_time", "watchdog.detection_time"}});
}

const std::vector<std::pair<std::string_view, bool>> kEcnMarkOn{
    {"dequeue", false},
    {"enqueue", true},
};

void read_ecn(const Reader& in, const YAML::Node& node, const std::string& path,
              net::EcnParams& ecn) {
  const MapView m(in, node, path, {"enabled", "kmin", "kmax", "pmax", "mark_on"});
  if (const YAML::Node* v = m.find("enabled")) {
    ecn.enabled = in.read_bool(*v, m.path_of("enabled"));
  }
  const YAML::Node* kmin = m.find("kmin");
  const YAML::Node* kmax = m.find("kmax");
  if ((kmin == nullptr) != (kmax == nullptr)) {
    const std::string missing = kmin == nullptr ? "kmin" : "kmax";
    in.fail_at(
        path, node, m.path_of(missing),
        "missing key \"" + missing +
            "\": give kmin and kmax together (or neither, for the RoCE defaults 150KB and 1.5MB)");
  }
  if (kmin != nullptr) {
    ecn.kmin_auto = false;
    ecn.kmax_auto = false;
    ecn.kmin = in.read_bytes(*kmin, m.path_of("kmin"));
    ecn.kmax = in.read_bytes(*kmax, m.path_of("kmax"));
  }
  if (const YAML::Node* v = m.find("pmax")) {
    ecn.pmax = in.read_number(*v, m.path_of("pmax"));
  }
  if (const YAML::Node* v = m.find("mark_on")) {
    ecn.mark_on_enqueue = in.read_enum(*v, m.path_of("mark_on"), kEcnMarkOn);
  }
  in.check_fields(path, ecn.check());  // kmin < kmax, pmax range
}

// `ets:` weights per traffic class (percent, summing to 100) and strict classes. Given weights
// replace the default ones as a whole; so does a given `strict` list.
void read_ets(const Reader& in, const YAML::Node& node, const std::string& path, uint32_t classes,
              net::EtsParams& ets) {
  const MapView m(in, node, path, {"enabled", "weights", "strict"});
  if (const YAML::Node* v = m.find("enabled")) {
    ets.enabled = in.read_bool(*v, m.path_of("enabled"));
  }
  const uint32_t cnp_class = classes - 1;
  const auto read_class = [&](const YAML::Node& key, const std::string& key_path) {
    const uint64_t c = in.read_uint(key, key_path, 0, kMaxPriority);
    if (c >= classes) {
      in.fail(key_path, key,
              "expected a traffic class in 0.." + std::to_string(classes - 1) +
                  " (fabric.switch.priorities is " + std::to_string(classes) + "), got " +
                  key.Scalar());
    }
    return static_cast<uint32_t>(c);
  };
  if (const YAML::Node* v = m.find("strict")) {
    const std::string list_path = m.path_of("strict");
    if (!v->IsSequence()) {
      in.fail(list_path, *v, "expected a list of traffic classes like [6], got " + describe(*v));
    }
    ets.strict_mask = 0;
    for (std::size_t i = 0; i < v->size(); ++i) {
      const uint32_t c = read_class((*v)[i], join_path(list_path, i));
      ets.strict_mask = static_cast<uint8_t>(ets.strict_mask | (1U << c));
    }
  }
  if (const YAML::Node* v = m.find("weights")) {
    const std::string map_path = m.path_of("weights");
    if (!v->IsMap() || v->size() == 0) {
      in.fail(
          map_path, *v,
          "expected a map of traffic class to percent like {0: 50, 3: 50}, got " + describe(*v));
    }
    ets.weight_percent.fill(0);
    for (const auto& entry : *v) {
      const std::string class_path = join_path(map_path, entry.first.Scalar());
      const uint32_t c = read_class(entry.first, class_path);
      if (c == cnp_class) {
        in.fail(class_path, entry.first,
                "expected a class below " + std::to_string(cnp_class) + ": class " +
                    std::to_string(cnp_class) +
                    " (the highest) carries CNPs and is always strict, got " +
                    entry.first.Scalar());
      }
      const auto percent = static_cast<uint32_t>(in.read_uint(entry.second, class_path, 1, 100));
      ets.weight_percent[c] = static_cast<uint8_t>(percent);
    }
  }
  // A class both strict and weighted is reported at the weights when given, else at the strict
  // list, which then clashes with the default weights.
  const bool weights_given = m.find("weights") != nullptr;
  FieldErrors errors = ets.check();
  for (FieldError& e : errors) {
    if (e.field == "strict_mask" && !weights_given) {
      e.message += " (the default weights are {0: 50, 3: 50})";
    }
  }
  in.check_fields(
      path, errors,
      {{"weight_percent", "weights"}, {"strict_mask", weights_given ? "weights" : "strict"}});
}

}  // namespace

void read_switch(const Reader& in, const YAML::Node& node, const std::string& path,
                 topo::FabricParams& p, NetworkBehaviour& behaviour) {
  const MapView m(in, node, path,
                  {"buffer", "priorities", "pfc", "ecn", "ets", "preset", "latency"});
  if (const YAML::Node* v = m.find("preset")) {
    // An InfiniBand switch: its port-to-port latency and radix (sim/net/ib_presets.hpp).
    const std::string name = in.read_string(*v, m.path_of("preset"));
    const auto preset = net::ib_switch_preset(name);
    if (!preset) {
      std::string names;
      for (const auto& sp : net::ib_switch_presets()) {
        names += (names.empty() ? "" : ", ") + std::string(sp.name);
      }
      in.fail(m.path_of("preset"), *v,
              "expected a switch preset (" + names + "), got " + quoted(name));
    }
    behaviour.switch_latency = preset->latency;
    behaviour.switch_radix = preset->ports;
    p.sharp.trees_per_switch = preset->sharp_trees;
  }
  if (const YAML::Node* v = m.find("latency")) {
    behaviour.switch_latency = in.read_time(*v, m.path_of("latency"));
    if (behaviour.switch_latency < Time::zero()) {
      in.fail(m.path_of("latency"), *v, "expected a latency >= 0, got " + quoted(v->Scalar()));
    }
  }
  if (const YAML::Node* v = m.find("priorities")) {
    p.switch_params.priorities = in.read_u32(*v, m.path_of("priorities"));
  }
  if (const YAML::Node* v = m.find("ets")) {
    read_ets(in, *v, m.path_of("ets"), std::clamp<uint32_t>(p.switch_params.priorities, 1, 8),
             behaviour.ets);
  }
  if (const YAML::Node* v = m.find("pfc")) {
    read_pfc(in, *v, m.path_of("pfc"), behaviour.pfc);
  }
  if (const YAML::Node* v = m.find("ecn")) {
    read_ecn(in, *v, m.path_of("ecn"), behaviour.ecn);
  }
  if (const YAML::Node* v = m.find("buffer")) {
    p.switch_params.buffer = in.read_bytes(*v, m.path_of("buffer"));
  }
}

}  // namespace syncsim::app::yaml_reader
