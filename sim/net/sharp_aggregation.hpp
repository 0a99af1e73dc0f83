#pragma once
// SHARP (Scalable Hierarchical Aggregation and Reduction Protocol): InfiniBand switches that add
// up the data of a reduction as it passes through them (NVIDIA Quantum and later; NCCL runs it as
// its CollNet algorithms through the SHARP plugin). Each fabric switch of a SHARP fabric has an
// aggregation engine, an endpoint on the switch (NetworkSpec::sharp_engines) linked at the
// switch's ports together, so the engine never limits the ports (the ASIC reduces at line rate);
// at packet fidelity it writes into the switch's ports per destination (in_switch_engine.hpp).
//
// A reduction runs on an aggregation tree over switches, built per job by the aggregation manager
// (sharp_am): the hosts' NICs send to the switch they hang off, each switch of the tree reduces
// what its children send and passes the sum to its parent, and the root's result flows back down
// the same tree. A job on several rails uses one tree per rail ("a single job can also utilize
// multiple trees, in case the job is operating on multiple rails, while each rail can use a
// different tree": NVIDIA SHARP Rev 3.11 manual, "Operating NVIDIA SHARP in Dynamic Trees
// Allocation Mode").
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "sim/core/field_error.hpp"

namespace syncsim::net {

struct NetworkSpec;

struct SharpParams {
  bool enabled = false;
  // Streaming-aggregation trees a switch serves at once. NVIDIA SHARP Rev 3.13 release notes,
  // "Capabilities and Limitations": Quantum (HDR, QM8700) is "limited to one active tree per
  // switch"; on Quantum-2 (NDR, QM9700) "the limit is one active tree per port". 0: one per port
  // (the switch's radix), the Quantum-2 rule, which the `qm8700` switch preset sets to 1.
  uint32_t trees_per_switch = 0;
  // Reductions a tree keeps in flight per head (SHARP's outstanding operations, OSTs). sharp_am
  // sizes the OST quota per job from the switch's resources and publishes no per-switch figure;
  // the client side posts at most NCCL_STEPS = 8 slots of a CollNet connection at once
  // (src/include/device.h), so 8 is what NCCL can have outstanding.
  uint32_t outstanding_operations = 8;

  // Range rules: outstanding_operations in 1..1024.
  FieldErrors check() const;
};

// One aggregation tree, over the fabric's SHARP engines (indices into NetworkSpec::sharp_engines).
struct AggregationTree {
  // Per participant (in the order the NICs were given): the engine its NIC sends to, the engine
  // of the switch it hangs off.
  std::vector<uint32_t> participant_engine;
  // Per engine of the tree, child before parent: (engine, its parent); the root last, whose
  // parent is kNoEngine.
  struct Edge {
    uint32_t engine = 0;
    uint32_t parent = 0;
  };
  std::vector<Edge> edges;
  static constexpr uint32_t kNoEngine = UINT32_MAX;
  uint32_t root() const { return edges.back().engine; }
};

// The aggregation tree sharp_am would build over the switches joining `nics` (host NIC nodes, one
// per participant, at least one): each NIC's switch is a leaf of the tree; while the tree's
// current level has more than one switch, each of them joins an upper-tier neighbour (leaf to
// spine, spine to core) that reaches as many of the level's switches as possible, ties broken by
// `tree_index` so that the trees of several rails spread their roots over the spines. Throws
// std::invalid_argument when the fabric has no SHARP engines or the switches do not meet under one
// root.
AggregationTree aggregation_tree(const NetworkSpec& spec, std::span<const uint32_t> nics,
                                 uint32_t tree_index);

// One tree per NIC rail for a collective over whole hosts: `gpus` are its ranks' GPUs in rank
// order, `gpus_per_host` to a host; rail i joins the NIC of each host's first GPU on NIC i (GPU l
// uses NIC floor(l x nics / gpus_per_host)), tree_index i. nics_per_host 0: one per GPU; at most
// the GPUs.
std::vector<AggregationTree> rail_aggregation_trees(const NetworkSpec& spec,
                                                    std::span<const uint32_t> gpus,
                                                    uint32_t gpus_per_host, uint32_t nics_per_host);

// rail_aggregation_trees where SHARP can run them: `trees` empty and `unavailable` saying why when
// the fabric has no SHARP engines, the hosts' switches meet under no common switch, or some switch
// would serve more trees than SharpParams::trees_per_switch allows (NCCL then falls back to
// another algorithm, as when sharp_am has no resources).
struct RailTrees {
  std::vector<AggregationTree> trees;
  std::string unavailable;
};
RailTrees usable_rail_trees(const NetworkSpec& spec, std::span<const uint32_t> gpus,
                            uint32_t gpus_per_host, uint32_t nics_per_host);

// How many of `trees` pass through each SHARP engine at most (a switch serves a tree once, however
// many of its children send to it), and the first engine past `limit`: the check of
// SharpParams::trees_per_switch. `limit` 0: the switch's ports.
struct TreeLoad {
  uint32_t most_trees = 0;
  uint32_t over_engine = AggregationTree::kNoEngine;  // kNoEngine: every switch within its limit
  uint32_t over_limit = 0;
};
TreeLoad aggregation_tree_load(const NetworkSpec& spec, std::span<const AggregationTree> trees);

}  // namespace syncsim::net
