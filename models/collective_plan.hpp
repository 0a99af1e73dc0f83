#pragma once
// Collectives as plain data. A plan is a list of steps (transfers between ranks and local
// reductions) with dependencies on earlier steps; one runner (collective_runner.hpp) executes any
// plan on any TransferBackend, and a symbolic verifier (verify_plan) checks the data flow without a
// network.
//
// Data model: the collective's buffer is cut into `chunks` (logical pieces with a byte size). Every
// transfer carries a contiguous range of chunks [chunk_first, chunk_first + chunk_count). A
// transfer either copies (the receiver's copy of those chunks is replaced) or is followed by a
// Reduce step on the receiver that adds the received data into its own copy; the Reduce step names
// the transfer it consumes (`source_step`). Symbolically each (rank, chunk) holds a vector of
// contribution counts per source rank, so double counting is caught as well as missing
// contributions.
//
// Ranks are 0..ranks-1; the runner maps rank r to GPU rank_to_gpu[r]. NVLS plans add `engines`
// switch ranks ranks..ranks+engines-1: NVSwitch reduction engines that hold no data of their own,
// reduce what they receive at no GPU cost and are not checked for a result (see CollectivePlan).
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/net/sharp_aggregation.hpp"

namespace syncsim::models {

enum class CollectiveOp : uint8_t {
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  Reduce,
  AllToAll,
  SendRecv
};
enum class CollectiveAlgo : uint8_t {
  Ring,
  Tree,
  HalvingDoubling,
  Hierarchical,
  Pairwise,
  Nvls,
  NvlsTree,
  Pat,
  CollnetDirect,
  CollnetChain
};
// NVLS or NVLS-tree: NVLink SHARP in the NVSwitch (Simple protocol only, all_reduce only).
inline bool is_nvls(CollectiveAlgo a) {
  return a == CollectiveAlgo::Nvls || a == CollectiveAlgo::NvlsTree;
}
// CollNet Direct or Chain: SHARP in the fabric's switches (Simple protocol only; all_reduce, and
// reduce_scatter / all_gather on Direct; collective_plan_collnet.cpp).
inline bool is_collnet(CollectiveAlgo a) {
  return a == CollectiveAlgo::CollnetDirect || a == CollectiveAlgo::CollnetChain;
}

std::string_view to_string(CollectiveOp op);
std::string_view to_string(CollectiveAlgo algo);
// Parse "all_reduce", "reduce_scatter", ..., "send_recv" / "ring", "tree", "halving_doubling",
// "hierarchical", "pairwise", "nvls", "nvls_tree", "pat", "collnet_direct", "collnet_chain".
// Throw std::invalid_argument on anything else.
CollectiveOp parse_collective_op(std::string_view text);
CollectiveAlgo parse_collective_algo(std::string_view text);

// One step, 32 bytes: 1024-rank rings hold millions of them. Its dependencies live in the plan's
// CSR arrays (CollectivePlan::deps), not in the step.
struct PlanStep {
  enum class Kind : uint8_t { Transfer, Reduce };
  Kind kind = Kind::Transfer;
  bool reduce = false;       // Transfer: the receiver reduces it (a Reduce step follows)
  uint16_t channel = 0;      // Transfer: the channel (an independent connection set)
  uint32_t src = 0;          // Transfer: sending rank. Reduce: the rank that reduces.
  uint32_t dst = 0;          // Transfer: receiving rank. Reduce: same as src.
  uint32_t chunk_first = 0;  // chunk range carried / reduced
  uint32_t chunk_count = 1;
  // Reduce: the transfer whose data is added. Transfer: its connection's dense index
  // (0..CollectivePlan::connections-1; a connection is (channel, src, dst)).
  uint32_t source_step = 0;
  int64_t bytes = 0;  // bytes moved (Transfer) or reduced (Reduce)
};
static_assert(sizeof(PlanStep) == 32);

struct CollectivePlan {
  CollectiveOp op = CollectiveOp::AllReduce;
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  uint32_t ranks = 0;
  // In-switch reduction engines, ranks ranks..ranks+engines-1: first the hosts' NVLS engines (h
  // of them: engine e serves the GPU ranks [e * ranks / h, (e + 1) * ranks / h), one NVLink domain
  // each), then the fabric's SHARP engines (the last fabric_engines.size()). 0: none.
  uint32_t engines = 0;
  // CollNet and NVLS across hosts: engine ranks + h + i is the fabric's SHARP engine
  // fabric_engines[i] (NetworkSpec::sharp_engines); empty for plans without SHARP.
  std::vector<uint32_t> fabric_engines;
  uint32_t root = 0;                 // Broadcast/Reduce root; SendRecv sender
  uint32_t peer = 0;                 // SendRecv receiver
  int64_t bytes = 0;                 // the nccl-tests size S (see PlanOptions::bytes)
  uint32_t connection_depth = 1;     // PlanOptions::connection_depth the plan was built with
  uint32_t connections = 0;          // distinct (channel, src, dst) of its transfers
  std::vector<int64_t> chunk_bytes;  // size of every chunk
  // Which rank owns chunk c: ReduceScatter/AllGather shard owner; AllToAll: chunk c is block
  // (src = c / ranks, dst = c % ranks) and owner is unused. Empty for the other ops.
  std::vector<uint32_t> chunk_owner;
  // Steps in issue order and their dependencies (indices of earlier steps that must finish first)
  // in compressed-sparse-row form: step i depends on dep_list[dep_offsets[i] .. dep_offsets[i+1]).
  // Append steps with add_step so the two stay consistent (dep_offsets.size() == steps.size() + 1).
  std::vector<PlanStep> steps;
  std::vector<uint32_t> dep_offsets{0};
  std::vector<uint32_t> dep_list;

  std::span<const uint32_t> deps(std::size_t step) const {
    return {dep_list.data() + dep_offsets[step], dep_list.data() + dep_offsets[step + 1]};
  }
  // Appends a step with its dependencies; returns its index.
  uint32_t add_step(const PlanStep& step, std::span<const uint32_t> step_deps);
  std::size_t transfer_count() const;
  uint32_t total_ranks() const { return ranks + engines; }  // GPU ranks and switch engines
};

struct PlanOptions {
  CollectiveOp op = CollectiveOp::AllReduce;
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  uint32_t ranks = 2;
  // nccl-tests' S: the buffer for AllReduce/Broadcast/Reduce/SendRecv, the whole gathered array
  // (recvcount * n) for ReduceScatter/AllGather, and sendcount * n (one rank's send buffer) for
  // AllToAll. Split into parts of whole bytes; remainders go to the first parts.
  int64_t bytes = 0;
  uint32_t channels = 1;    // Ring, Tree, Hierarchical (inter-node rings): NCCL's channels
  int64_t chunk_bytes = 0;  // pipelining granularity (Ring, Tree, SendRecv); 0 = no pipelining
  // Ring: a segment of at most one piece is still cut in `min_pieces` (NCCL's slices per chunk:
  // prims_simple.h sliceSize = max(nelem / SlicePerChunk, stepSize x StepPerSlice / 32)) when
  // each part keeps at least `min_piece_bytes`. 1: no such cut.
  uint32_t min_pieces = 1;
  int64_t min_piece_bytes = 0;
  uint32_t root = 0;  // Broadcast/Reduce root, SendRecv sender
  uint32_t peer = 1;  // SendRecv receiver
  // Ranks r..r+g-1 with r % g == 0 share a host (0: unknown). Hierarchical needs it; Ring uses it
  // to keep every channel's inter-host hops on one rail (see nics_per_host).
  uint32_t gpus_per_host = 0;
  // NICs per host (0: one per GPU). Ring channel c enters and leaves every host through rail
  // c mod min(nics, gpus_per_host), GPU l having NIC floor(l * nics / gpus_per_host) as the fabric
  // builder wires them.
  uint32_t nics_per_host = 0;
  // Nvls, NvlsTree: the GPUs per host that pull reductions from the switch (NCCL's NVLS heads: its
  // NVLS graph's channels, min(NCCL_MAX_NVLS_ARITY = 32, GPUs)); 0: that rule. Across hosts head h
  // of every host joins head h of the others in the tree, through its own NIC.
  uint32_t nvls_heads = 0;
  // Transfers of one connection (channel, sender, receiver) in flight at once: a transfer waits for
  // the one `connection_depth` earlier on its connection. NCCL: NCCL_STEPS / slots per transfer
  // (ProtocolTiming::pipeline_depth: ring Simple 4, LL/LL128 8). 1: strictly one after another.
  uint32_t connection_depth = 1;
  // CollnetDirect, CollnetChain: the SHARP aggregation tree of each NIC rail (index: the NIC's
  // index in its host), its participants the hosts in rank order (net::aggregation_tree over NIC
  // i of every host). Direct: head h (the first GPU of NIC h; min(NICs, GPUs) heads) reduces
  // slice h of every round inside its host and sends it up tree h; Chain: channel c's chain ends
  // at the first GPU of NIC c mod NICs, which uses that NIC's tree.
  std::vector<net::AggregationTree> collnet_trees;
};

// Builds the plan, or throws std::invalid_argument for an unsupported (op, algo) pair or bad
// parameters. Supported: Ring: AllReduce, ReduceScatter, AllGather, Broadcast, Reduce (chains from
// the root); Tree: AllReduce (NCCL's: per channel, node chains and a node tree, the two trees of
// a double binary tree on the two halves of the channels), Broadcast, Reduce (a rank-level double
// binary tree); HalvingDoubling: AllReduce, ReduceScatter, AllGather; Hierarchical: AllReduce;
// Pairwise: AllToAll, SendRecv; Nvls: AllReduce, ReduceScatter, AllGather inside one NVLink
// domain (all ranks on one host; NVLink SHARP, collective_plan_nvls.cpp);
// NvlsTree: AllReduce over whole hosts, two or more (NVLS in each host, a tree between hosts);
// Pat: AllGather, ReduceScatter (NCCL's PAT, log2(n) aggregated steps; collective_plan_pat.cpp);
// CollnetDirect: AllReduce, ReduceScatter, AllGather (these two with a NIC per GPU), CollnetChain:
// AllReduce, over whole hosts (SHARP, collective_plan_collnet.cpp).
CollectivePlan build_plan(const PlanOptions& options);

// Size of the all-reduce plan build_plan makes for (algo, ranks, bytes, chunk_bytes, channels,
// gpus_per_host), from the parameters alone: nothing is built, so runs too large to plan first can
// be sized (run/estimate.cpp). In doubles, as estimates reach 10^12 steps. For bytes > 0 and
// whole chunk_bytes > 0 it is exact for tree, halving-doubling (power of two or not), hierarchical
// and single-channel rings. A ring over several channels is counted with channel 0's pieces on
// every channel; channels that got a byte less (the remainder goes to the first) can have one
// piece fewer, so the estimate may exceed the plan by up to 2 (n-1) n transfers per channel
// (tests/models/test_plan_size.cpp checks both against built plans).
struct PlanSizeEstimate {
  double transfers = 0;
  double steps = 0;  // transfers plus the reductions after the reducing half of them
};
// A ring's cut of a one-piece segment into NCCL's slices (PlanOptions::min_pieces and
// min_piece_bytes); the default cuts nothing.
struct RingSlicing {
  uint32_t min_pieces = 1;
  int64_t min_piece_bytes = 0;
};
PlanSizeEstimate plan_size_estimate(CollectiveAlgo algo, double ranks, double bytes,
                                    double chunk_bytes, double channels, double gpus_per_host,
                                    RingSlicing slicing = {});

// Result of the symbolic check; `error` is empty when the plan is correct.
struct PlanCheck {
  bool ok = false;
  std::string error;
};
// Replays the plan symbolically (steps in index order) and checks: dependencies point backwards;
// every transfer reads data whose last writer is among its (transitive) dependencies, and every
// write is ordered after the previous write of the same (rank, chunk) (no read-after-write or
// write-after-write races under any execution order the dependencies allow); and the final state
// is what the operation promises (all_reduce: every rank holds every contribution exactly once for
// every chunk; reduce_scatter: each rank its fully reduced shard; all_gather: every shard
// everywhere; broadcast/reduce from/to the root; all_to_all: every (src, dst) block at dst).
PlanCheck verify_plan(const CollectivePlan& plan);

// nccl-tests' bus bandwidth factor for the op (references §2): busbw = algbw * factor.
double bus_bandwidth_factor(CollectiveOp op, uint32_t ranks);

}  // namespace syncsim::models
