#include "chakra/chakra_files.hpp"

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "chakra/chakra_attributes.hpp"
#include "et_def.pb.h"

namespace syncsim::chakra {

namespace fs = std::filesystem;

namespace {

// The prefix of the one trace set in `dir`: the names of its `NAME.<digits>.et` files before
// `.<digits>.et`.
// The prefix of `name` when it reads PREFIX.<digits>.et with a non-empty PREFIX, else empty.
std::string rank_file_prefix(const std::string& name) {
  constexpr std::string_view kSuffix = ".et";
  if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) return {};
  const std::string stem = name.substr(0, name.size() - kSuffix.size());
  const std::size_t dot = stem.rfind('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == stem.size()) return {};
  for (std::size_t i = dot + 1; i < stem.size(); ++i) {
    if (stem[i] < '0' || stem[i] > '9') return {};
  }
  return stem.substr(0, dot);
}

std::string prefix_in_folder(const std::string& dir) {
  std::set<std::string> prefixes;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    if (std::string p = rank_file_prefix(e.path().filename().string()); !p.empty()) {
      prefixes.insert(std::move(p));
    }
  }
  if (prefixes.empty()) {
    throw ChakraError(dir + ": no Chakra trace files (PREFIX.<rank>.et) in this folder");
  }
  if (prefixes.size() > 1) {
    std::string names;
    for (const std::string& p : prefixes) names += (names.empty() ? "" : ", ") + p;
    throw ChakraError(dir + ": several trace sets in this folder (" + names +
                      "): give the path as FOLDER/PREFIX");
  }
  return (fs::path(dir) / *prefixes.begin()).string();
}

}  // namespace

std::string rank_file(const std::string& path_or_prefix, uint32_t rank) {
  std::error_code ec;
  const std::string prefix =
      fs::is_directory(path_or_prefix, ec) ? prefix_in_folder(path_or_prefix) : path_or_prefix;
  return prefix + "." + std::to_string(rank) + ".et";
}

models::ChakraRankTrace read_rank_file(const std::string& file, uint32_t rank, uint32_t ranks) {
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    throw ChakraError("rank " + std::to_string(rank) + "'s trace " + file +
                      " does not exist or cannot be read");
  }
  google::protobuf::io::IstreamInputStream stream(&in);
  models::ChakraRankTrace trace;
  trace.file = file;
  ChakraProtoMsg::GlobalMetadata metadata;
  bool eof = false;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&metadata, &stream, &eof)) {
    throw ChakraError(file + ": " +
                      (eof ? std::string("empty file")
                           : "not a Chakra trace (expected a length-prefixed GlobalMetadata "
                             "message first; gzip-compressed traces must be unpacked)"));
  }
  std::unordered_set<uint64_t> ids;
  for (;;) {
    ChakraProtoMsg::Node node;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&node, &stream, &eof)) {
      if (eof) break;
      throw ChakraError(
          file + ": a damaged Node message after node " +
          (trace.nodes.empty() ? std::string("(none)") : std::to_string(trace.nodes.back().id)));
    }
    if (!ids.insert(node.id()).second) {
      throw ChakraError(file + ": node " + std::to_string(node.id()) + " appears twice");
    }
    trace.nodes.push_back(from_proto(node, file, rank, ranks));
  }
  for (const models::ChakraNode& n : trace.nodes) {
    for (const auto* deps : {&n.ctrl_deps, &n.data_deps}) {
      for (uint64_t d : *deps) {
        if (ids.count(d) == 0) {
          throw ChakraError(file + ": node " + std::to_string(n.id) + " depends on node " +
                            std::to_string(d) + ", which is not in the file");
        }
      }
    }
  }
  return trace;
}

models::ChakraTrace read_trace(const std::string& path_or_prefix, uint32_t ranks) {
  models::ChakraTrace trace;
  for (uint32_t r = 0; r < ranks; ++r) {
    trace.ranks.push_back(read_rank_file(rank_file(path_or_prefix, r), r, ranks));
  }
  return trace;
}

std::vector<std::string> write_trace(const models::ChakraTrace& trace, const std::string& dir,
                                     const std::string& prefix) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw ChakraError(dir + ": cannot create the folder: " + ec.message());
  std::vector<std::string> files;
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const std::string file = (fs::path(dir) / (prefix + "." + std::to_string(r) + ".et")).string();
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    ChakraProtoMsg::GlobalMetadata metadata;
    // The schema version Chakra's own generator writes (src/generator/generator.py).
    metadata.set_version("0.0.4");
    bool ok = out && google::protobuf::util::SerializeDelimitedToOstream(metadata, &out);
    for (const models::ChakraNode& n : trace.ranks[r].nodes) {
      ok = ok && google::protobuf::util::SerializeDelimitedToOstream(to_proto(n), &out);
    }
    out.close();
    if (!ok || !out) throw ChakraError(file + ": cannot write the trace");
    files.push_back(file);
  }
  return files;
}

}  // namespace syncsim::chakra
