#pragma once
// NCCL's set-up of a simulated collective, in one place: the algorithm, the protocol and the
// scenario's `collective:` knobs (CollectiveConfig) become the plan to build (chunking, channels,
// connection depth) and the run options (wire factor, launch and per-step latencies) with which
// NCCL would run it. collective_cost.hpp holds NCCL's protocol tables and cost model; this file
// applies them. `syncsim collective`, the training step and the run estimate all go through here,
// so the three cannot drift apart.
#include <cstdint>
#include <optional>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "models/gpu.hpp"
#include "models/nccl_channels.hpp"
#include "models/step_sim.hpp"
#include "sim/core/units.hpp"

namespace syncsim::models {

// One collective as `syncsim collective` runs it.
struct NcclCollective {
  CollectiveOp op = CollectiveOp::AllReduce;
  CollectiveAlgo algo = CollectiveAlgo::Ring;
  NcclProtocol protocol = NcclProtocol::Simple;
  uint32_t ranks = 2;
  int64_t bytes = 0;  // nccl-tests' S (PlanOptions::bytes)
  uint32_t channels = 1;
  std::optional<int64_t> chunk_bytes;  // replaces NCCL's chunk (0: no pipelining)
  uint32_t root = 0;                   // broadcast/reduce root, send_recv sender (receiver: next)
  uint32_t gpus_per_host = 1;          // ranks fill hosts in order
  uint32_t nics_per_host = 0;          // 0: one per GPU
  // NVLS only (NcclChannels::nvls_heads / nvls_link_efficiency): the heads and the share of the
  // NVLink rate multimem operations move.
  uint32_t nvls_heads = 0;
  double nvls_link_efficiency = 1.0;
  // CollNet only: each NIC rail's SHARP aggregation tree (PlanOptions::collnet_trees) and the
  // reductions a tree keeps in flight (SharpParams::outstanding_operations; 0: no limit beyond
  // the protocol's pipeline depth).
  std::vector<net::AggregationTree> collnet_trees;
  uint32_t collnet_outstanding = 0;
};

struct NcclSetup {
  ProtocolTiming timing;
  PlanOptions plan;
  CollectiveRunOptions run;
};

// `base` with the protocol's wire factor and launch latency, and its per-step NVLink / NET
// latencies unless base.step_latency is non-zero (a fixed per-step latency the caller asked for
// wins, and then applies inside and across hosts alike). Reduction bandwidth, priority and PXN stay
// as in `base`.
CollectiveRunOptions apply_protocol_timing(CollectiveRunOptions base, const ProtocolTiming& timing);

// The plan and run options of `c` under `config`. The chunk is NCCL's for the protocol and size
// (nccl_chunk_bytes: tree LL128 halves it for deep trees) unless c.chunk_bytes replaces it; every
// connection keeps the protocol's pipeline depth of transfers in flight. Throws
// std::invalid_argument for bad `collective:` knobs (protocol_timing).
NcclSetup nccl_setup(const NcclCollective& c, const CollectiveConfig& config,
                     const CollectiveRunOptions& base = {});

// ALLREDUCE_CHUNKSTEPS / ALLREDUCE_SLICESTEPS (collectives.h; the same for all_gather and
// reduce_scatter): a ring Simple chunk is two slices, also when it is smaller than one slice
// (prims_simple.h: sliceSize = max(nelem / 2, stepSize x StepPerSlice / 32)).
inline constexpr uint32_t kNcclRingSlicesPerChunk = 2;

// A training step's collectives, on NCCL's channels. Each runs the protocol NCCL's cost model
// picks for its operation, algorithm and size, or the pinned config.protocol (step.protocols:
// StepProtocols). The step's own fields hold Simple's set-up: its base latency once per
// collective, its per-step NVLink / network latencies, its chunk (NCCL defaults: ring a 1 MiB
// slice, tree 512 KiB) where step.chunk_bytes is 0, ring Simple's slices per chunk and its slices
// in flight per connection. Sets step.collective, step.chunk_bytes, step.channels,
// step.connection_depth and step.protocols and returns Simple's timing.
ProtocolTiming apply_nccl_step_setup(StepConfig& step, const CollectiveConfig& config,
                                     const NcclChannels& channels);

// NCCL's cost-model inputs for `ranks` ranks filling hosts of `gpus_per_host` GPUs in order, from
// the ring graph NCCL's search found (nccl_channels): its channels and per-channel bandwidth, as
// tuning.cc reads graphs[algo]->nChannels and bwIntra / bwInter. With the channel count requested,
// the graph keeps its per-channel bandwidth and shrinks in proportion when fewer channels run.
NcclCostInputs nccl_cost_inputs(CollectiveOp op, uint32_t ranks, uint32_t gpus_per_host,
                                const NcclChannels& channels);

// The node shape NCCL's search sees for `ranks` ranks on hosts of `gpus_per_host` GPUs and
// `nics_per_host` NICs of `nic` line rate, with `nvlink` per GPU and direction (the fabric's
// NVLink port), and the GPU's generation (compute capability, PCIe generation).
NcclSystem nccl_system(uint32_t ranks, uint32_t gpus_per_host, uint32_t nics_per_host,
                       Bandwidth nic, Bandwidth nvlink, const GpuSpec& gpu);

// The protocol NCCL's cost model predicts fastest for `algo` (the Tree row for tree, the Ring row
// for every other algorithm); Simple when no row applies.
NcclProtocol nccl_best_protocol(CollectiveAlgo algo, const NcclCostInputs& cost, int64_t bytes);

}  // namespace syncsim::models
