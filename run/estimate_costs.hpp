#pragma once
// What run/estimate.cpp charges per unit of work: memory per item and wall time per transfer or
// packet hop, each measured on the shipped scenarios (the commits and commands are named with
// them; docs/performance.md keeps the tables).
#include <algorithm>

namespace syncsim::app {

// Measured on the reference scenarios (Release, x86-64; see docs/scale.md).
// The process: binary, allocator, YAML. Peak RSS of the smallest shipped scenarios (incast-*,
// pfc-deadlock, headroom-too-small: 11-12 MiB, `ci` build at 9f44512).
inline constexpr double kProcessBase = 12e6;
inline constexpr double kBytesPerNode = 160;        // NodeSpec with its name, node_ports vector
inline constexpr double kBytesPerLink = 120;        // LinkSpec + two directed ports (PortInfo, ids)
inline constexpr double kBytesPerRoutingEntry = 1;  // uint8 hop distance
inline constexpr double kFlowBytesPerPort = 64;     // flows_on_ vector, capacity, scratch
inline constexpr double kPacketBytesPerPort =
    3000;  // egress queues per priority, MMU counters, link ring
inline constexpr double kAnalyticBytesPerPort = 16;
// massif on link-speed-400g-vs-800g.yaml's 1.05 GB ring bucket (1.56 M steps, 1.04 M transfers,
// `ci` build): a step 48 B (PlanStep 32 B and the builder's dependency lists), a transfer 88 B
// (its TransferRecord 48 B and the runner's per-transfer counters, indices and times).
inline constexpr double kBytesPerPlanStep = 48;
inline constexpr double kBytesPerTransfer = 88;
// Packet fidelity: what the network keeps of every flow to the end of its simulation: the flow
// record (192 B, sim/net/flow_table.hpp) in a vector that grows by doubling, go-back-N's sender
// and receiver state (~110 B) and the route and reverse route in the arena (~50 B).
inline constexpr double kPacketBytesPerFlow = 400;
inline constexpr double kBytesPerMessage = 40;  // MessageSpec in the injector
inline constexpr double kBytesPerRank = 80;     // per-rank step state (multipliers, times)
// Wall time per unit of work (one loaded core; an idle core is ~2x faster).
inline constexpr double kFlowSecondsPerTransferBase = 3.5e-6;
inline constexpr double kFlowRanksDoublingCost = 32768;
inline constexpr double kAnalyticSecondsPerTransfer = 2e-6;
// Per hop while the port state fits in cache: since the calendar queue 0.11 us (the 16-rank
// 256 MiB ring of load-balancing.yaml's report) to 0.16 us (ring-next-leaf-128) on an idle core.
inline constexpr double kPacketSecondsPerHop = 0.18e-6;
inline constexpr double kPacketCacheBytes =
    8.0 * (1 << 20);                                     // port state beyond which hops slow down
inline constexpr double kSecondsPerFabricEntity = 2e-6;  // building the fabric and routing tables
// Starting the process and reading the scenario: the whole run of the smallest shipped scenarios
// (gb200-nvl72, pfc-deadlock: 0.01 s, incast-*: 0.02-0.03 s, `ci` build at 095f8ab).
inline constexpr double kProcessSeconds = 0.015;
// The event-driven model-parallel step per transfer counted above (its records, runners and
// schedule; flow fidelity). Measured on the dgxc Llama 3 70B recipe (TP 4 x PP 4 x CP 2 x VP 5,
// 64 micro-batches, forced event_driven) at 64 and 256 GPUs and on llama-70b-3d.yaml: 0.68, 1.08
// and 0.71 us and 131, 104 and 120 bytes per counted transfer (docs/training-step.md). Counted
// with the rings unsliced (plan_size_estimate's default), as these constants were fitted.
inline constexpr double kEventDrivenFlowSecondsPerTransfer = 1.2e-6;
inline constexpr double kEventDrivenBytesPerTransfer = 120;

// Flow level, tree all-reduces: a transfer costs more when more flows share the fabric (each start
// and finish refills the rates of the flows it touches). Fitted on the DDP tree step of
// ddp-70b-16k.yaml (README "Scale", one loaded core): measured 5.1, 3.1, 3.7 and ~12 us per
// transfer at 1k, 4k, 16k and 64k ranks; this line gives 3.6, 3.9, 5.3 and 10.5 us.
// Rings and the other algorithms: about 0.7 us per transfer, a little more with the ranks that run
// at once (all groups of a kind share the fabric in the model-parallel closed form). Measured on
// shipped ring runs at flow fidelity (`ci` build at 9f44512, whole process / estimated transfers):
// fsdp-llama-70b 0.69 us, the built-in default (128 ranks) 0.51, ib-ndr-superpod (256) 0.78,
// torchtitan-70b-256 0.69; counting each pipeline stage's buckets and the distributed optimizer's
// halves (2026-12-05, whole process / transfers run): moe-deepseek-256 (256 ranks) 0.79 us, the
// 405B DGX Cloud layout at 2048 GPUs (test_estimate_scale.cpp) 0.96 us. This rule gives 0.72,
// 0.73 and 0.96 us at 128, 256 and 2048 ranks. (The 4.7 us once fitted at 2048 ranks divided the
// wall by a count that held one stage's buckets of eight.)
inline constexpr double kFlowSecondsPerRingTransfer = 0.7e-6;
inline constexpr double kFlowRingRanksDoublingCost = 5500;
// Plain FSDP's all-gathers and reduce-scatters at flow fidelity, per transfer of their timed plans
// (whole process / counted transfers): the built-in default at 32, 64, 128 and 256 GPUs measured
// 1.9, 2.6, 2.3 and 2.0 us (`ci` build at 314a28f); since the calendar queue the default 1.9 us,
// fsdp-llama-70b 1.0 us and ib-ndr-superpod 1.2 us (at f1b9b32): their geometric middle.
inline constexpr double kFlowSecondsPerFsdpTransfer = 1.4e-6;
inline double flow_seconds_per_transfer(double concurrent_ranks, bool tree) {
  return tree ? kFlowSecondsPerTransferBase * (1.0 + concurrent_ranks / kFlowRanksDoublingCost)
              : kFlowSecondsPerRingTransfer * (1.0 + concurrent_ranks / kFlowRingRanksDoublingCost);
}

}  // namespace syncsim::app
