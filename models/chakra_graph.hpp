#pragma once
// A Chakra execution trace (ASTRA-sim's workload format, https://github.com/mlcommons/chakra) as
// plain structs: one graph of nodes per rank. chakra/ reads and writes the protobuf files;
// models/chakra_replay.hpp runs the graphs on a simulated fabric. Nothing here knows protobuf.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/collective_plan.hpp"
#include "sim/core/units.hpp"

namespace syncsim::models {

enum class ChakraNodeKind : uint8_t {
  Compute,     // COMP_NODE: takes its duration on the rank's GPU (or CPU when is_cpu_op)
  Collective,  // COMM_COLL_NODE: a collective of its process group
  Send,        // COMM_SEND_NODE: a point-to-point send to `peer`
  Recv,        // COMM_RECV_NODE: the matching receive from `peer`
  Metadata,    // METADATA_NODE: no work, only its dependencies (PyTorch's converter writes them)
};

struct ChakraNode {
  uint64_t id = 0;
  std::string name{};
  ChakraNodeKind kind = ChakraNodeKind::Compute;
  // ctrl_deps then data_deps: the node starts when every one of them has finished (ASTRA-sim's
  // feeder treats both kinds alike).
  std::vector<uint64_t> ctrl_deps{};
  std::vector<uint64_t> data_deps{};
  Time duration = Time::zero();  // Compute: duration_micros
  bool cpu = false;              // is_cpu_op: runs on the host, beside the GPU's kernels
  // Collective: the operation, nccl-tests' S (comm_size) and the process group (pg_name; empty:
  // every rank). barrier: a rendezvous of the group that moves no data.
  CollectiveOp op = CollectiveOp::AllReduce;
  bool barrier = false;
  int64_t bytes = 0;  // Collective, Send, Recv: comm_size
  std::string group{};
  // Send: comm_dst; Recv: comm_src. tag: comm_tag (0 when absent).
  uint32_t peer = 0;
  int64_t tag = 0;
  // Inputs of the compute model (workload.chakra.retime): num_ops (FLOPs) and tensor_size (bytes
  // moved), when the trace has them.
  std::optional<double> num_ops{};
  std::optional<double> tensor_bytes{};
};

struct ChakraRankTrace {
  std::string file{};  // where it was read from (error messages), or will be written
  std::vector<ChakraNode> nodes{};
};

struct ChakraTrace {
  std::vector<ChakraRankTrace> ranks{};
};

}  // namespace syncsim::models
