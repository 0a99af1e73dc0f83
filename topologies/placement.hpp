#pragma once
// Rank-to-GPU placement: which GPU of the fabric each rank of a job runs on. A placement is a plain
// permutation (rank r -> GPU rank_to_gpu[r], distinct GPUs) computed from the NetworkSpec, which
// the step model and collectives take as their rank_to_gpu.
//   packed          ranks in GPU order: hosts are numbered leaf by leaf, so consecutive ranks share
//                   hosts and leaves and the job spans as few leaves as possible (the old default).
//   random          a seeded uniformly random choice and order of GPUs.
//   spread          consecutive ranks on different leaves, leaves interleaved across pods
//   (fat-tree)
//                   or groups (rail-optimized): the job touches as many leaves and pods as it can.
//   topology_aware  packed order of hosts (pod by pod, leaf by leaf) with the GPUs of every other
//                   host in reverse order, so a ring's hop from one host to the next leaves GPU g
//                   of one host for GPU g of the next: on a rail-optimized fabric both sit on rail
//                   leaf g (the same leaf pair), and on spine-leaf/fat-tree both hosts share a leaf
//                   except where the job crosses to the next leaf of the same pod.
#include <cstdint>
#include <string_view>
#include <vector>

#include "sim/net/network_spec.hpp"

namespace syncsim::topo {

enum class Placement : uint8_t { Packed, Random, Spread, TopologyAware };

std::string_view to_string(Placement p);
// "packed", "random", "spread", "topology_aware"; throws std::invalid_argument otherwise.
Placement parse_placement(std::string_view text);

// rank_to_gpu for `ranks` ranks (1 <= ranks <= GPUs); throws std::invalid_argument otherwise.
std::vector<uint32_t> place_ranks(const net::NetworkSpec& spec, uint32_t ranks, Placement policy,
                                  uint64_t seed);

// The ranks of a training job: model_parallel = tensor x context x pipeline ranks per data-parallel
// replica, data_parallel replicas (0: as many as fit on the fabric's GPUs). Pure data parallelism
// (model_parallel 1) is placed by `policy`. With model parallelism the ranks take the first GPUs in
// order (Megatron order, models/parallelism.hpp), since the TP/CP/PP groups are laid out on
// consecutive GPUs; `policy` is then ignored (policy_ignored says so when it was not Packed).
// Throws std::invalid_argument as place_ranks does (more ranks than GPUs).
struct JobPlacement {
  std::vector<uint32_t> rank_to_gpu;
  bool policy_ignored = false;
};
JobPlacement place_job(const net::NetworkSpec& spec, uint32_t model_parallel,
                       uint32_t data_parallel, Placement policy, uint64_t seed);

// The leaf switch GPU g's NIC attaches to, per GPU (for placement and its tests).
std::vector<net::NodeId> gpu_leaves(const net::NetworkSpec& spec);

}  // namespace syncsim::topo
