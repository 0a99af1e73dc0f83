#pragma once
// One Chakra Node message <-> one models::ChakraNode: the node types and attributes syncsim
// replays, those it ignores and those it rejects (docs/chakra.md lists them).
#include <cstdint>
#include <string>

#include "et_def.pb.h"
#include "models/chakra_graph.hpp"

namespace syncsim::chakra {

// Converts a node read from `file` (rank `rank` of `ranks`); throws ChakraError
// "FILE: node ID (NAME): ..." for an unsupported type, comm_type or attribute, or a missing one.
models::ChakraNode from_proto(const ChakraProtoMsg::Node& node, const std::string& file,
                              uint32_t rank, uint32_t ranks);

ChakraProtoMsg::Node to_proto(const models::ChakraNode& node);

}  // namespace syncsim::chakra
