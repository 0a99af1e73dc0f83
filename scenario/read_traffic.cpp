// `traffic:` (patterns and explicit messages) and `collective:` (NCCL knobs, calibration).
#include <exception>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "calibration/profile.hpp"
#include "scenario/section_readers.hpp"

namespace syncsim::app::yaml_reader {

namespace {

const std::vector<std::pair<std::string_view, models::TrafficPattern>> kPatterns{
    {"messages", models::TrafficPattern::Explicit},
    {"ring_shift", models::TrafficPattern::RingShift},
    {"permutation", models::TrafficPattern::Permutation},
    {"incast", models::TrafficPattern::Incast},
    {"all_to_all", models::TrafficPattern::AllToAll},
};

const std::vector<std::pair<std::string_view, models::IncastSenders>> kSenderPlacements{
    {"distinct_hosts", models::IncastSenders::DistinctHosts},
    {"consecutive", models::IncastSenders::Consecutive},
};

models::MessageSpec read_message(const Reader& in, const YAML::Node& node,
                                 const std::string& path) {
  const MapView m(in, node, path, {"src", "dst", "size", "start", "priority"});
  models::MessageSpec msg;
  msg.src_gpu = in.read_u32(m.require("src"), m.path_of("src"));
  msg.dst_gpu = in.read_u32(m.require("dst"), m.path_of("dst"));
  msg.size = in.read_bytes(m.require("size"), m.path_of("size"));
  if (const YAML::Node* v = m.find("start")) {
    msg.start = in.read_time(*v, m.path_of("start"));
  }
  if (const YAML::Node* v = m.find("priority")) {
    msg.priority = static_cast<uint8_t>(in.read_uint(*v, m.path_of("priority"), 0, kMaxPriority));
  }
  return msg;
}

models::TrafficSpec read_traffic_entry(const Reader& in, const YAML::Node& node,
                                       const std::string& path) {
  if (!node.IsMap()) {
    in.fail(path, node, "expected a traffic entry (a map), got " + describe(node));
  }
  // The pattern decides which keys are valid, so it is read before the keys are checked.
  const YAML::Node pattern_node = node["pattern"];
  if (!pattern_node.IsDefined()) {
    in.fail_at(path, node, join_path(path, "pattern"), "missing required key \"pattern\"");
  }
  models::TrafficSpec t;
  t.pattern = in.read_enum(pattern_node, join_path(path, "pattern"), kPatterns);
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
    allowed.insert(allowed.end(), {"senders", "receiver", "sender_placement"});
  }
  const MapView m(in, node, path, allowed, " for pattern " + pattern_name);

  if (t.pattern == models::TrafficPattern::Explicit) {
    const YAML::Node& list = m.require("messages");
    const std::string list_path = m.path_of("messages");
    if (!list.IsSequence()) {
      in.fail(list_path, list, "expected a sequence of messages, got " + describe(list));
    }
    if (list.size() == 0) {
      in.fail(list_path, list, "expected at least one message, got an empty sequence");
    }
    for (std::size_t k = 0; k < list.size(); ++k) {
      t.messages.push_back(read_message(in, list[k], join_path(list_path, k)));
    }
    return t;
  }
  t.size = in.read_bytes(m.require("size"), m.path_of("size"));
  if (const YAML::Node* v = m.find("start")) {
    t.start = in.read_time(*v, m.path_of("start"));
  }
  if (const YAML::Node* v = m.find("priority")) {
    t.priority = static_cast<uint8_t>(in.read_uint(*v, m.path_of("priority"), 0, kMaxPriority));
  }
  if (const YAML::Node* v = m.find("shift")) {
    t.shift = in.read_int(*v, m.path_of("shift"));
  }
  if (t.pattern == models::TrafficPattern::Incast) {
    t.senders = in.read_u32(m.require("senders"), m.path_of("senders"));
    if (const YAML::Node* v = m.find("receiver")) {
      t.receiver = in.read_u32(*v, m.path_of("receiver"));
    }
    if (const YAML::Node* v = m.find("sender_placement")) {
      t.sender_placement = in.read_enum(*v, m.path_of("sender_placement"), kSenderPlacements);
    }
  }
  return t;
}

}  // namespace

// `traffic:` a non-empty sequence of entries, each a pattern or a list of explicit messages.
std::vector<models::TrafficSpec> read_traffic(const Reader& in, const YAML::Node& node,
                                              const std::string& path) {
  if (!node.IsSequence()) {
    in.fail(path, node, "expected a sequence of traffic entries, got " + describe(node));
  }
  if (node.size() == 0) {
    in.fail(path, node, "expected at least one traffic entry, got an empty sequence");
  }
  std::vector<models::TrafficSpec> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    out.push_back(read_traffic_entry(in, node[i], join_path(path, i)));
  }
  return out;
}

// `collective:`: NCCL's knobs, NCCL's defaults for what is left out (models::CollectiveConfig).
models::CollectiveConfig read_collective(const Reader& in, const YAML::Node& node,
                                         const std::string& path) {
  const MapView m(
      in, node, path,
      {"algorithm", "protocol", "channels", "buffer_size", "ll_buffer_size", "ll128_buffer_size",
       "steps", "calibration", "qps_per_connection", "channel_copy_bandwidth"});
  models::CollectiveConfig c;
  if (const YAML::Node* v = m.find("algorithm")) {
    const std::string text = in.read_string(*v, m.path_of("algorithm"));
    if (text != "auto") {
      try {
        c.algorithm = models::parse_collective_algo(text);
      } catch (const std::invalid_argument& e) {
        in.fail(m.path_of("algorithm"), *v, std::string(e.what()) + " or auto");
      }
    }
  }
  if (const YAML::Node* v = m.find("protocol")) {
    const std::string text = in.read_string(*v, m.path_of("protocol"));
    if (text != "auto") {
      try {
        c.protocol = models::parse_nccl_protocol(text);
      } catch (const std::invalid_argument& e) {
        in.fail(m.path_of("protocol"), *v, std::string(e.what()) + " or auto");
      }
    }
  }
  if (const YAML::Node* v = m.find("channels")) {
    if (!(v->IsScalar() && v->Scalar() == "auto")) {
      c.channels = in.read_u32(*v, m.path_of("channels"), 1);
    }
  }
  if (const YAML::Node* v = m.find("steps")) c.steps = in.read_u32(*v, m.path_of("steps"), 1);
  if (const YAML::Node* v = m.find("qps_per_connection")) {
    c.qps_per_connection = in.read_u32(*v, m.path_of("qps_per_connection"), 0);
    if (c.qps_per_connection > 256) {
      in.fail(m.path_of("qps_per_connection"), *v,
              "expected 0 (a new queue pair per transfer) .. 256, got " + v->Scalar());
    }
  }
  // Its default, the GPU preset's, is set once the GPU is known (scenario_loader.cpp).
  if (const YAML::Node* v = m.find("channel_copy_bandwidth")) {
    const Bandwidth b = in.read_bandwidth(*v, m.path_of("channel_copy_bandwidth"));
    if (b.bits_per_second() <= 0) {
      in.fail(m.path_of("channel_copy_bandwidth"), *v,
              "expected a positive bandwidth (one channel's copy rate), got " + v->Scalar());
    }
    c.channel_copy_bytes_per_s = b.bytes_per_second();
  }
  const std::pair<std::string_view, int64_t*> buffers[] = {
      {"buffer_size", &c.buffer_size},
      {"ll_buffer_size", &c.ll_buffer_size},
      {"ll128_buffer_size", &c.ll128_buffer_size}};
  for (const auto& [key, field] : buffers) {
    if (const YAML::Node* v = m.find(key)) {
      const int64_t b = in.read_bytes(*v, m.path_of(key)).count();
      if (b <= 0) {
        in.fail(m.path_of(key), *v,
                "expected a positive size, got " + std::to_string(b) + " bytes");
      }
      *field = b;
    }
  }
  return c;
}

// `collective.calibration: FILE`: a profile with fitted collective lines or physical parameters
// (`syncsim calibrate fit --out`, syncsim-probe; the loader applies the parameters). A relative
// path is taken from the scenario file's folder, or from the working directory when it came from
// --set. A profile without collective lines is an error here; (op, rank count) pairs it lacks are
// reported where they are needed (they fall back to simulation).
CollectiveCalibration read_collective_calibration(const Reader& in, const YAML::Node& node,
                                                  const std::string& path) {
  std::string file = in.read_string(node, path);
  if (!in.from_override(path) && file.front() != '/' &&
      in.source().find('/') != std::string::npos) {
    file = in.source().substr(0, in.source().rfind('/') + 1) + file;
  }
  CollectiveCalibration c;
  c.file = file;
  try {
    calibration::CalibrationProfile profile = calibration::read_profile_file(file);
    c.collectives = std::move(profile.collectives);
    c.gpu_name = profile.gpu_name;
    c.gpu_count = profile.gpu_count;
    if (profile.physical) c.physical = profile.physical->parameters;
  } catch (const std::exception& e) {
    in.fail(path, node, std::string("expected a readable calibration profile, got: ") + e.what());
  }
  if (c.collectives.empty() && c.physical.empty()) {
    in.fail(path, node,
            "expected a profile with fitted collectives (`collectives:`) or physical parameters "
            "(`physical:`), got neither in " +
                file);
  }
  return c;
}

}  // namespace syncsim::app::yaml_reader
