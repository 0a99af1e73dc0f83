#pragma once
// Small Chakra traces built in the tests with the generated protobuf classes and written in
// Chakra's layout (a GlobalMetadata message, then Node messages, each after its length as a
// varint32: Chakra's protolib.py encodeMessage), by hand rather than through chakra/'s writer.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "et_def.pb.h"

namespace syncsim::chakra_fixtures {

namespace pb = ChakraProtoMsg;

inline pb::AttributeProto int_attr(const std::string& name, int64_t v) {
  pb::AttributeProto a;
  a.set_name(name);
  a.set_int64_val(v);
  return a;
}

inline pb::Node comp(uint64_t id, uint64_t micros, const std::vector<uint64_t>& deps = {}) {
  pb::Node n;
  n.set_id(id);
  n.set_name("comp" + std::to_string(id));
  n.set_type(pb::COMP_NODE);
  n.set_duration_micros(micros);
  for (uint64_t d : deps) n.add_data_deps(d);
  pb::AttributeProto cpu;
  cpu.set_name("is_cpu_op");
  cpu.set_bool_val(false);
  *n.add_attr() = cpu;
  return n;
}

inline pb::Node coll(uint64_t id, pb::CollectiveCommType type, int64_t bytes,
                     const std::vector<uint64_t>& deps = {}, const std::string& pg = "") {
  pb::Node n;
  n.set_id(id);
  n.set_name("coll" + std::to_string(id));
  n.set_type(pb::COMM_COLL_NODE);
  for (uint64_t d : deps) n.add_data_deps(d);
  *n.add_attr() = int_attr("comm_type", type);
  pb::AttributeProto size;  // comm_size as uint64_val, as Chakra's generator writes it
  size.set_name("comm_size");
  size.set_uint64_val(static_cast<uint64_t>(bytes));
  *n.add_attr() = size;
  if (!pg.empty()) {
    pb::AttributeProto a;
    a.set_name("pg_name");
    a.set_string_val(pg);
    *n.add_attr() = a;
  }
  return n;
}

inline pb::Node p2p(uint64_t id, bool send, uint32_t peer, int64_t bytes,
                    const std::vector<uint64_t>& deps = {}) {
  pb::Node n;
  n.set_id(id);
  n.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
  for (uint64_t d : deps) n.add_data_deps(d);
  *n.add_attr() = int_attr(send ? "comm_dst" : "comm_src", peer);
  *n.add_attr() = int_attr("comm_size", bytes);
  *n.add_attr() = int_attr("comm_tag", 7);
  return n;
}

// Writes `nodes` as `path` in Chakra's length-delimited layout.
inline void write_et(const std::string& path, const std::vector<pb::Node>& nodes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  google::protobuf::io::OstreamOutputStream raw(&file);
  google::protobuf::io::CodedOutputStream out(&raw);
  pb::GlobalMetadata meta;
  meta.set_version("0.0.4");
  auto put = [&](const google::protobuf::Message& m) {
    const std::string bytes = m.SerializeAsString();
    out.WriteVarint32(static_cast<uint32_t>(bytes.size()));
    out.WriteRaw(bytes.data(), static_cast<int>(bytes.size()));
  };
  put(meta);
  for (const pb::Node& n : nodes) put(n);
}

// The folders temp_dir made, removed when the test process exits.
struct TempDirs {
  std::vector<std::filesystem::path> dirs;
  TempDirs() = default;
  TempDirs(const TempDirs&) = delete;
  TempDirs& operator=(const TempDirs&) = delete;
  ~TempDirs() {
    for (const auto& d : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
};
inline TempDirs& temp_dirs() {
  static TempDirs t;
  return t;
}

// A fresh folder under the system's temporary directory, one per process (ctest runs test cases
// in parallel processes, and other checkouts may run these tests at the same time).
inline std::string temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("syncsim-chakra-" + std::to_string(::getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  temp_dirs().dirs.push_back(dir);
  return dir.string();
}

// The same nodes for every rank: DIR/t.<r>.et for r < ranks; returns DIR/t.
inline std::string write_all(const std::string& dir, uint32_t ranks,
                             const std::vector<pb::Node>& nodes) {
  for (uint32_t r = 0; r < ranks; ++r) write_et(dir + "/t." + std::to_string(r) + ".et", nodes);
  return dir + "/t";
}

}  // namespace syncsim::chakra_fixtures
