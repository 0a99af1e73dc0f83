#include "models/collective_plan.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>

#include "models/collective_plan_builder.hpp"

namespace syncsim::models {

std::string_view to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::AllReduce:
      return "all_reduce";
    case CollectiveOp::ReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::AllGather:
      return "all_gather";
    case CollectiveOp::Broadcast:
      return "broadcast";
    case CollectiveOp::Reduce:
      return "reduce";
    case CollectiveOp::AllToAll:
      return "all_to_all";
    case CollectiveOp::SendRecv:
      return "send_recv";
  }
  return "?";
}

std::string_view to_string(CollectiveAlgo algo) {
  switch (algo) {
    case CollectiveAlgo::Ring:
      return "ring";
    case CollectiveAlgo::Tree:
      return "tree";
    case CollectiveAlgo::HalvingDoubling:
      return "halving_doubling";
    case CollectiveAlgo::Hierarchical:
      return "hierarchical";
    case CollectiveAlgo::Pairwise:
      return "pairwise";
    case CollectiveAlgo::Nvls:
      return "nvls";
    case CollectiveAlgo::NvlsTree:
      return "nvls_tree";
    case CollectiveAlgo::Pat:
      return "pat";
    case CollectiveAlgo::CollnetDirect:
      return "collnet_direct";
    case CollectiveAlgo::CollnetChain:
      return "collnet_chain";
  }
  return "?";
}

CollectiveOp parse_collective_op(std::string_view text) {
  for (auto op : {CollectiveOp::AllReduce, CollectiveOp::ReduceScatter, CollectiveOp::AllGather,
                  CollectiveOp::Broadcast, CollectiveOp::Reduce, CollectiveOp::AllToAll,
                  CollectiveOp::SendRecv}) {
    if (to_string(op) == text) return op;
  }
  throw std::invalid_argument("unknown collective \"" + std::string(text) +
                              "\" (all_reduce, reduce_scatter, all_gather, broadcast, reduce, "
                              "all_to_all, send_recv)");
}

CollectiveAlgo parse_collective_algo(std::string_view text) {
  for (auto a : {CollectiveAlgo::Ring, CollectiveAlgo::Tree, CollectiveAlgo::HalvingDoubling,
                 CollectiveAlgo::Hierarchical, CollectiveAlgo::Pairwise, CollectiveAlgo::Nvls,
                 CollectiveAlgo::NvlsTree, CollectiveAlgo::Pat, CollectiveAlgo::CollnetDirect,
                 CollectiveAlgo::CollnetChain}) {
    if (to_string(a) == text) return a;
  }
  throw std::invalid_argument("unknown algorithm \"" + std::string(text) +
                              "\" (ring, tree, halving_doubling, hierarchical, pairwise, nvls, "
                              "nvls_tree, pat, collnet_direct, collnet_chain)");
}

uint32_t CollectivePlan::add_step(const PlanStep& step, std::span<const uint32_t> step_deps) {
  steps.push_back(step);
  dep_list.insert(dep_list.end(), step_deps.begin(), step_deps.end());
  dep_offsets.push_back(static_cast<uint32_t>(dep_list.size()));
  return static_cast<uint32_t>(steps.size() - 1);
}

std::size_t CollectivePlan::transfer_count() const {
  return static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [](const PlanStep& s) {
    return s.kind == PlanStep::Kind::Transfer;
  }));
}

CollectivePlan build_plan(const PlanOptions& o) {
  if (o.ranks < 2) throw std::invalid_argument("a collective needs at least 2 ranks");
  if (o.bytes < 0) throw std::invalid_argument("negative collective size");
  if (o.channels < 1 || o.channels > 60000) throw std::invalid_argument("1 to 60000 channels");
  if (o.root >= o.ranks || o.peer >= o.ranks) throw std::invalid_argument("root/peer out of range");
  CollectivePlan plan;
  plan.op = o.op;
  plan.algo = o.algo;
  plan.ranks = o.ranks;
  plan.root = o.root;
  plan.peer = o.peer;
  plan.bytes = o.bytes;
  plan.connection_depth = std::max(1u, o.connection_depth);
  const auto unsupported = [&] {
    return std::invalid_argument(std::string(to_string(o.algo)) + " does not implement " +
                                 std::string(to_string(o.op)));
  };
  switch (o.algo) {
    case CollectiveAlgo::Ring:
      if (o.op == CollectiveOp::AllToAll || o.op == CollectiveOp::SendRecv) throw unsupported();
      plan_detail::build_ring(plan, o);
      break;
    case CollectiveAlgo::Tree:
      if (o.op != CollectiveOp::AllReduce && o.op != CollectiveOp::Broadcast &&
          o.op != CollectiveOp::Reduce) {
        throw unsupported();
      }
      plan_detail::build_tree(plan, o);
      break;
    case CollectiveAlgo::HalvingDoubling:
      if (o.op != CollectiveOp::AllReduce && o.op != CollectiveOp::ReduceScatter &&
          o.op != CollectiveOp::AllGather) {
        throw unsupported();
      }
      plan_detail::build_halving_doubling(plan, o);
      break;
    case CollectiveAlgo::Hierarchical:
      if (o.op != CollectiveOp::AllReduce) throw unsupported();
      plan_detail::build_hierarchical(plan, o);
      break;
    case CollectiveAlgo::Pairwise:
      if (o.op != CollectiveOp::AllToAll && o.op != CollectiveOp::SendRecv) throw unsupported();
      if (o.op == CollectiveOp::SendRecv && o.root == o.peer) {
        throw std::invalid_argument("send_recv needs two different ranks");
      }
      plan_detail::build_pairwise(plan, o);
      break;
    case CollectiveAlgo::Nvls:
      if (o.op != CollectiveOp::AllReduce && o.op != CollectiveOp::ReduceScatter &&
          o.op != CollectiveOp::AllGather)
        throw unsupported();
      if (o.gpus_per_host != 0 && o.gpus_per_host < o.ranks) {
        // Across hosts NCCL runs NVLS only with SHARP between them (else NVLS-tree).
        if (o.gpus_per_host < 2 || o.ranks % o.gpus_per_host != 0 || o.collnet_trees.empty()) {
          throw std::invalid_argument(
              "nvls across NVLink domains (" + std::to_string(o.ranks) + " ranks on hosts of " +
              std::to_string(o.gpus_per_host) +
              " GPUs) runs over whole hosts with SHARP switches between them "
              "(fabric.infiniband.sharp.enabled), as NCCL does; without SHARP use nvls_tree "
              "(all_reduce) or ring / pat");
        }
        plan_detail::build_nvls_sharp(plan, o);
        break;
      }
      plan_detail::build_nvls(plan, o);
      break;
    case CollectiveAlgo::NvlsTree:
      if (o.op != CollectiveOp::AllReduce) throw unsupported();
      if (o.gpus_per_host < 2 || o.ranks % o.gpus_per_host != 0 || o.ranks / o.gpus_per_host < 2) {
        throw std::invalid_argument("nvls_tree needs two or more whole hosts of 2 or more GPUs: " +
                                    std::to_string(o.ranks) + " ranks on hosts of " +
                                    std::to_string(o.gpus_per_host) +
                                    " GPUs (one NVLink domain runs nvls)");
      }
      plan_detail::build_nvls_tree(plan, o);
      break;
    case CollectiveAlgo::Pat:
      if (o.op != CollectiveOp::AllGather && o.op != CollectiveOp::ReduceScatter)
        throw unsupported();
      plan_detail::build_pat(plan, o);
      break;
    case CollectiveAlgo::CollnetDirect:
      if (o.op != CollectiveOp::AllReduce && o.op != CollectiveOp::ReduceScatter &&
          o.op != CollectiveOp::AllGather)
        throw unsupported();
      plan_detail::build_collnet(plan, o);
      break;
    case CollectiveAlgo::CollnetChain:
      if (o.op != CollectiveOp::AllReduce) throw unsupported();
      plan_detail::build_collnet(plan, o);
      break;
  }
  return plan;
}

double bus_bandwidth_factor(CollectiveOp op, uint32_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (op) {
    case CollectiveOp::AllReduce:
      return 2.0 * (n - 1.0) / n;
    case CollectiveOp::ReduceScatter:
    case CollectiveOp::AllGather:
    case CollectiveOp::AllToAll:
      return (n - 1.0) / n;
    case CollectiveOp::Broadcast:
    case CollectiveOp::Reduce:
    case CollectiveOp::SendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace syncsim::models
