#pragma once
// Chakra execution-trace files in and out: one `PREFIX.<rank>.et` file per rank, each a
// GlobalMetadata message then Node messages, every message preceded by its length as a varint32
// (Chakra's src/third_party/utils/protolib.py encodeMessage; ASTRA-sim's --workload-configuration
// names the prefix the same way). Reading checks every node against what syncsim can replay
// (chakra_attributes.hpp) and throws ChakraError naming the file and node.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/chakra_graph.hpp"

namespace syncsim::chakra {

class ChakraError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The file of `rank` for a PREFIX (PREFIX.<rank>.et) or a folder holding one such set (the prefix
// is then the one name before `.<rank>.et` its files share; several prefixes are an error).
std::string rank_file(const std::string& path_or_prefix, uint32_t rank);

// Reads ranks 0..ranks-1. Throws ChakraError for a missing file (naming the rank), a file that is
// not a Chakra trace, or a node syncsim does not support.
models::ChakraTrace read_trace(const std::string& path_or_prefix, uint32_t ranks);

// One rank's file alone.
models::ChakraRankTrace read_rank_file(const std::string& file, uint32_t rank, uint32_t ranks);

// Writes `trace` as `dir/prefix.<rank>.et` (creating dir); returns the files written.
std::vector<std::string> write_trace(const models::ChakraTrace& trace, const std::string& dir,
                                     const std::string& prefix = "syncsim");

}  // namespace syncsim::chakra
