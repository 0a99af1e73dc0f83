#include "chakra/chakra_attributes.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <string_view>
#include <utility>

#include "chakra/chakra_files.hpp"

namespace syncsim::chakra {

namespace {

using ChakraProtoMsg::AttributeProto;
namespace pb = ChakraProtoMsg;

// Attributes that change what syncsim replays (docs/chakra.md says how each is read).
constexpr std::array<std::string_view, 9> kUsed = {"comm_type", "comm_size", "pg_name",
                                                   "is_cpu_op", "comm_src",  "comm_dst",
                                                   "comm_tag",  "num_ops",   "tensor_size"};
// Attributes that describe a node without changing its timing here: PyTorch's record ids and op
// schema (Chakra's src/converter/pytorch_converter.py writes them on every node), its CUDA stream,
// and ASTRA-sim's comm_priority and involved_dim (its logical-topology dimensions, which have no
// meaning on syncsim's fabrics).
constexpr std::array<std::string_view, 10> kIgnored = {
    "rf_id",  "fw_parent", "seq_id", "scope",         "tid",
    "fw_tid", "op_schema", "stream", "comm_priority", "involved_dim"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

template <std::size_t N>
std::string joined(const std::array<std::string_view, N>& names) {
  std::string s;
  for (std::string_view n : names) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

std::string where(const pb::Node& node, const std::string& file) {
  return file + ": node " + std::to_string(node.id()) +
         (node.name().empty() ? std::string() : " (" + node.name() + ")") + ": ";
}

// An integer attribute in any of the integer encodings Chakra's tools use (the generator writes
// comm_type as int64_val, the PyTorch converter comm_size as int64_val, others uint64_val).
std::optional<int64_t> integer(const AttributeProto& a) {
  switch (a.value_case()) {
    case AttributeProto::kInt32Val:
      return a.int32_val();
    case AttributeProto::kInt64Val:
      return a.int64_val();
    case AttributeProto::kUint32Val:
      return a.uint32_val();
    case AttributeProto::kUint64Val:
      if (a.uint64_val() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(a.uint64_val());
    case AttributeProto::kSint32Val:
      return a.sint32_val();
    case AttributeProto::kSint64Val:
      return a.sint64_val();
    case AttributeProto::kFixed32Val:
      return a.fixed32_val();
    case AttributeProto::kFixed64Val:
      if (a.fixed64_val() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(a.fixed64_val());
    case AttributeProto::kSfixed32Val:
      return a.sfixed32_val();
    case AttributeProto::kSfixed64Val:
      return a.sfixed64_val();
    default:
      return std::nullopt;
  }
}

std::optional<double> number(const AttributeProto& a) {
  if (a.value_case() == AttributeProto::kDoubleVal) return a.double_val();
  if (a.value_case() == AttributeProto::kFloatVal) return a.float_val();
  if (const auto i = integer(a)) return static_cast<double>(*i);
  return std::nullopt;
}

[[noreturn]] void fail(const pb::Node& node, const std::string& file, const std::string& what) {
  throw ChakraError(where(node, file) + what);
}

int64_t need_integer(const AttributeProto& a, const pb::Node& node, const std::string& file,
                     int64_t min) {
  const auto v = integer(a);
  if (!v || *v < min) {
    fail(node, file,
         "attribute " + a.name() + ": expected an integer >= " + std::to_string(min) + " value");
  }
  return *v;
}

// comm_type -> syncsim's collective; nullopt for BARRIER (a rendezvous), throws for the rest.
std::optional<models::CollectiveOp> collective_of(int64_t type, const pb::Node& node,
                                                  const std::string& file, bool& barrier) {
  using models::CollectiveOp;
  barrier = false;
  switch (type) {
    case pb::ALL_REDUCE:
      return CollectiveOp::AllReduce;
    case pb::REDUCE:
      return CollectiveOp::Reduce;
    case pb::ALL_GATHER:
      return CollectiveOp::AllGather;
    case pb::BROADCAST:
      return CollectiveOp::Broadcast;
    case pb::ALL_TO_ALL:
      return CollectiveOp::AllToAll;
    case pb::REDUCE_SCATTER:
      return CollectiveOp::ReduceScatter;
    case pb::BARRIER:
      barrier = true;
      return std::nullopt;
    default:
      break;
  }
  const std::string name =
      pb::CollectiveCommType_IsValid(static_cast<int>(type))
          ? pb::CollectiveCommType_Name(static_cast<pb::CollectiveCommType>(type))
          : "unknown value " + std::to_string(type);
  fail(node, file,
       "comm_type " + name +
           " is not supported (supported: ALL_REDUCE, REDUCE, ALL_GATHER, BROADCAST, ALL_TO_ALL, "
           "REDUCE_SCATTER, BARRIER)");
}

AttributeProto attr_int(const std::string& name, int64_t value) {
  AttributeProto a;
  a.set_name(name);
  a.set_int64_val(value);
  return a;
}

}  // namespace

models::ChakraNode from_proto(const pb::Node& node, const std::string& file, uint32_t rank,
                              uint32_t ranks) {
  models::ChakraNode n;
  n.id = node.id();
  n.name = node.name();
  switch (node.type()) {
    case pb::COMP_NODE:
      n.kind = models::ChakraNodeKind::Compute;
      break;
    case pb::COMM_COLL_NODE:
      n.kind = models::ChakraNodeKind::Collective;
      break;
    case pb::COMM_SEND_NODE:
      n.kind = models::ChakraNodeKind::Send;
      break;
    case pb::COMM_RECV_NODE:
      n.kind = models::ChakraNodeKind::Recv;
      break;
    case pb::METADATA_NODE:
      n.kind = models::ChakraNodeKind::Metadata;
      break;
    default: {
      const auto t = static_cast<int>(node.type());
      fail(node, file,
           "node type " +
               (pb::NodeType_IsValid(t) ? pb::NodeType_Name(node.type())
                                        : "unknown value " + std::to_string(t)) +
               " is not supported (supported: COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE, "
               "COMM_RECV_NODE, METADATA_NODE)");
    }
  }
  n.ctrl_deps.assign(node.ctrl_deps().begin(), node.ctrl_deps().end());
  n.data_deps.assign(node.data_deps().begin(), node.data_deps().end());
  if (node.duration_micros() > static_cast<uint64_t>(INT64_MAX / 1'000'000)) {
    fail(node, file, "duration_micros " + std::to_string(node.duration_micros()) + " is too long");
  }
  n.duration = Time::us(static_cast<int64_t>(node.duration_micros()));

  bool has_type = false;
  bool has_size = false;
  bool has_src = false;
  bool has_dst = false;
  int64_t comm_type = 0;
  int64_t src = 0;
  int64_t dst = 0;
  for (const AttributeProto& a : node.attr()) {
    const std::string& key = a.name();
    if (listed(kIgnored, key)) continue;
    if (!listed(kUsed, key)) {
      fail(node, file,
           "attribute " + key + " is not supported (read: " + joined(kUsed) +
               "; ignored: " + joined(kIgnored) + ")");
    }
    if (key == "comm_type") {
      comm_type = need_integer(a, node, file, 0);
      has_type = true;
    } else if (key == "comm_size") {
      n.bytes = need_integer(a, node, file, 0);
      has_size = true;
    } else if (key == "pg_name") {
      if (a.value_case() != AttributeProto::kStringVal) {
        fail(node, file, "attribute pg_name: expected a string_val");
      }
      n.group = a.string_val();
    } else if (key == "is_cpu_op") {
      if (a.value_case() != AttributeProto::kBoolVal) {
        fail(node, file, "attribute is_cpu_op: expected a bool_val");
      }
      n.cpu = a.bool_val();
    } else if (key == "comm_src") {
      src = need_integer(a, node, file, 0);
      has_src = true;
    } else if (key == "comm_dst") {
      dst = need_integer(a, node, file, 0);
      has_dst = true;
    } else if (key == "comm_tag") {
      n.tag = need_integer(a, node, file, INT64_MIN);
    } else {
      const auto v = number(a);
      if (!v || !std::isfinite(*v) || *v < 0) {
        fail(node, file, "attribute " + key + ": expected a number >= 0");
      }
      (key == "num_ops" ? n.num_ops : n.tensor_bytes) = *v;
    }
  }
  auto rank_in_range = [&](int64_t r, const char* attr) {
    if (r >= static_cast<int64_t>(ranks)) {
      fail(node, file,
           std::string(attr) + " " + std::to_string(r) + " is not a rank of the trace set's " +
               std::to_string(ranks));
    }
    return static_cast<uint32_t>(r);
  };
  switch (n.kind) {
    case models::ChakraNodeKind::Collective: {
      if (!has_type) fail(node, file, "a COMM_COLL_NODE needs a comm_type attribute");
      const auto op = collective_of(comm_type, node, file, n.barrier);
      if (op) n.op = *op;
      if (!has_size && !n.barrier) fail(node, file, "a COMM_COLL_NODE needs a comm_size attribute");
      break;
    }
    case models::ChakraNodeKind::Send:
    case models::ChakraNodeKind::Recv: {
      const bool send = n.kind == models::ChakraNodeKind::Send;
      if (!has_size) fail(node, file, "a send or receive node needs a comm_size attribute");
      if (send ? !has_dst : !has_src) {
        fail(node, file,
             std::string(send ? "a COMM_SEND_NODE needs comm_dst"
                              : "a COMM_RECV_NODE needs comm_src") +
                 " (the peer rank)");
      }
      if (send && has_src && src != rank) {
        fail(
            node, file,
            "comm_src " + std::to_string(src) + " is not this file's rank " + std::to_string(rank));
      }
      if (!send && has_dst && dst != rank) {
        fail(
            node, file,
            "comm_dst " + std::to_string(dst) + " is not this file's rank " + std::to_string(rank));
      }
      n.peer = rank_in_range(send ? dst : src, send ? "comm_dst" : "comm_src");
      if (n.peer == rank) fail(node, file, "a rank cannot send to or receive from itself");
      break;
    }
    default:
      break;
  }
  return n;
}

pb::Node to_proto(const models::ChakraNode& n) {
  pb::Node node;
  node.set_id(n.id);
  node.set_name(n.name);
  for (uint64_t d : n.ctrl_deps) node.add_ctrl_deps(d);
  for (uint64_t d : n.data_deps) node.add_data_deps(d);
  AttributeProto cpu;
  cpu.set_name("is_cpu_op");
  cpu.set_bool_val(n.cpu);
  *node.add_attr() = cpu;
  switch (n.kind) {
    case models::ChakraNodeKind::Compute:
      node.set_type(pb::COMP_NODE);
      // Chakra stores whole microseconds; the caller rounds (chakra_export.cpp says how).
      node.set_duration_micros(
          static_cast<uint64_t>(std::max<int64_t>(0, n.duration.picoseconds() / 1'000'000)));
      if (n.num_ops) *node.add_attr() = attr_int("num_ops", std::llround(*n.num_ops));
      if (n.tensor_bytes) *node.add_attr() = attr_int("tensor_size", std::llround(*n.tensor_bytes));
      break;
    case models::ChakraNodeKind::Metadata:
      node.set_type(pb::METADATA_NODE);
      break;
    case models::ChakraNodeKind::Collective: {
      node.set_type(pb::COMM_COLL_NODE);
      pb::CollectiveCommType t = pb::BARRIER;
      if (!n.barrier) {
        switch (n.op) {
          case models::CollectiveOp::AllReduce:
            t = pb::ALL_REDUCE;
            break;
          case models::CollectiveOp::ReduceScatter:
            t = pb::REDUCE_SCATTER;
            break;
          case models::CollectiveOp::AllGather:
            t = pb::ALL_GATHER;
            break;
          case models::CollectiveOp::Broadcast:
            t = pb::BROADCAST;
            break;
          case models::CollectiveOp::Reduce:
            t = pb::REDUCE;
            break;
          case models::CollectiveOp::AllToAll:
            t = pb::ALL_TO_ALL;
            break;
          case models::CollectiveOp::SendRecv:
            throw ChakraError("a send/recv is written as a COMM_SEND_NODE and a COMM_RECV_NODE");
        }
      }
      *node.add_attr() = attr_int("comm_type", t);
      *node.add_attr() = attr_int("comm_size", n.bytes);
      if (!n.group.empty()) {
        AttributeProto pg;
        pg.set_name("pg_name");
        pg.set_string_val(n.group);
        *node.add_attr() = pg;
      }
      break;
    }
    case models::ChakraNodeKind::Send:
    case models::ChakraNodeKind::Recv: {
      const bool send = n.kind == models::ChakraNodeKind::Send;
      node.set_type(send ? pb::COMM_SEND_NODE : pb::COMM_RECV_NODE);
      *node.add_attr() = attr_int(send ? "comm_dst" : "comm_src", n.peer);
      *node.add_attr() = attr_int("comm_size", n.bytes);
      *node.add_attr() = attr_int("comm_tag", n.tag);
      break;
    }
  }
  return node;
}

}  // namespace syncsim::chakra
