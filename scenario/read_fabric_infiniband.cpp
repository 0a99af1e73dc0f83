// `fabric.infiniband:` SL2VL, the per-VL receive buffer (credits), IB congestion control and
// SHARP. The mechanisms: sim/net/infiniband_params.hpp, sim/net/sharp_aggregation.hpp,
// docs/infiniband.md.
#include <string>

#include "scenario/section_readers.hpp"
#include "scenario/units.hpp"

namespace syncsim::app::yaml_reader {

namespace {

void read_congestion_control(const Reader& in, const YAML::Node& node, const std::string& path,
                             net::IbCongestionControlParams& cc) {
  const MapView m(in, node, path,
                  {"enabled", "threshold", "ccti_timer", "ccti_increase", "ccti_min", "ccti_limit",
                   "cct_step"});
  cc.enabled = true;  // a block turns it on unless it says otherwise
  if (const YAML::Node* v = m.find("enabled")) cc.enabled = in.read_bool(*v, m.path_of("enabled"));
  if (const YAML::Node* v = m.find("threshold")) {
    cc.threshold = in.read_bytes(*v, m.path_of("threshold"));
  }
  if (const YAML::Node* v = m.find("ccti_timer")) {
    cc.ccti_timer = in.read_time(*v, m.path_of("ccti_timer"));
  }
  if (const YAML::Node* v = m.find("ccti_increase")) {
    cc.ccti_increase = in.read_u32(*v, m.path_of("ccti_increase"));
  }
  if (const YAML::Node* v = m.find("ccti_min")) {
    cc.ccti_min = in.read_u32(*v, m.path_of("ccti_min"));
  }
  if (const YAML::Node* v = m.find("ccti_limit")) {
    cc.ccti_limit = in.read_u32(*v, m.path_of("ccti_limit"));
  }
  if (const YAML::Node* v = m.find("cct_step")) {
    cc.cct_step = in.read_time(*v, m.path_of("cct_step"));
  }
}

void read_sharp(const Reader& in, const YAML::Node& node, const std::string& path,
                net::SharpParams& sharp) {
  const MapView m(in, node, path, {"enabled", "trees_per_switch", "outstanding_operations"});
  sharp.enabled = true;  // a block turns it on unless it says otherwise
  if (const YAML::Node* v = m.find("enabled"))
    sharp.enabled = in.read_bool(*v, m.path_of("enabled"));
  if (const YAML::Node* v = m.find("trees_per_switch")) {
    sharp.trees_per_switch = in.read_u32(*v, m.path_of("trees_per_switch"));
  }
  if (const YAML::Node* v = m.find("outstanding_operations")) {
    sharp.outstanding_operations = in.read_u32(*v, m.path_of("outstanding_operations"));
  }
  in.check_fields(path, sharp.check());
}

}  // namespace

void read_infiniband(const Reader& in, const YAML::Node& node, const std::string& path,
                     net::InfinibandParams& ib, net::SharpParams& sharp) {
  const MapView m(in, node, path, {"sl_to_vl", "vl_buffer", "congestion_control", "sharp"});
  if (const YAML::Node* v = m.find("sharp")) read_sharp(in, *v, m.path_of("sharp"), sharp);
  if (const YAML::Node* v = m.find("sl_to_vl")) {
    // A list of VLs indexed by SL ([0, 0, 0, 1, ...]), SLs beyond the list keeping their own VL.
    const std::string list_path = m.path_of("sl_to_vl");
    if (!v->IsSequence() || v->size() == 0 || v->size() > net::kMaxPriorities) {
      in.fail(list_path, *v,
              "expected a list of up to 8 VLs indexed by service level like [0, 0, 0, 1], got " +
                  describe(*v));
    }
    for (std::size_t sl = 0; sl < v->size(); ++sl) {
      ib.sl_to_vl[sl] =
          static_cast<uint8_t>(in.read_uint((*v)[sl], join_path(list_path, sl), 0, kMaxPriority));
    }
  }
  if (const YAML::Node* v = m.find("vl_buffer")) {
    if (v->IsScalar() && v->Scalar() == "auto") {
      ib.vl_buffer_auto = true;
    } else {
      ib.vl_buffer_auto = false;
      const std::string& text =
          in.scalar(*v, m.path_of("vl_buffer"), "auto or a size like \"64KiB\"");
      try {
        ib.vl_buffer = parse_bytes(text);
      } catch (const UnitError& e) {
        in.fail(
            m.path_of("vl_buffer"), *v,
            "expected auto or a size like \"64KiB\", got " + quoted(text) + " (" + e.what() + ")");
      }
    }
  }
  if (const YAML::Node* v = m.find("congestion_control")) {
    read_congestion_control(in, *v, m.path_of("congestion_control"), ib.congestion_control);
  }
  in.check_fields(path, ib.check());
}

}  // namespace syncsim::app::yaml_reader
