#pragma once
// What run/estimate.cpp charges per unit of work: memory per item and wall time per transfer or
// packet hop, each measured on the shipped scenarios (the commits and commands are named with
// them; docs/performance.md keeps the tables).
#include <algorithm>
#include <cmath>

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
// Analytic fidelity: straggler.yaml's DDP step ran 1.5x its estimate at 2 us a transfer after the
// tree plans' reservation and the private runs' dropped records (6.1 -> 3.0 s of CPU, 2026-12-05,
// docs/performance.md "Flow-level transfers"). Whole process over counted transfers (`ci` build,
// 2026-12-07, tools/estimate-survey.py): straggler 0.81-0.90 us, llama3-405b-16k 0.59 us (7.7 s
// for 1.3e7); 0.75 us sits within 1.3x of both (1.2 us had the latter at 2.06x).
inline constexpr double kAnalyticSecondsPerTransfer = 0.75e-6;
// Per packet hop, by the fabric's port state (queues, MMU counters, link rings: kPacketBytesPerPort
// a port). Measured as user time over the hops the run made (a temporary counter in Link::transmit;
// `ci` build at 9a9f5fc, 2026-12-05, the 2-core VM otherwise idle): 0.09-0.13 us on the 16-host
// fabrics (0.14-0.19 MB: load-balancing, roce-vs-ib, interconnect-matrix, ring-shift-8gpu 0.11 at
// 2.0 MB), 0.17-0.18 us at 128 hosts (ring-next-leaf-128, 1.5 MB, 8 partitions), 0.27 us at 1024
// (12 MB, 32 partitions), 0.63 us at 8,192 (permutation-8k, 147 MB, 64 partitions: 15.9 s for
// about 25 M hops at 48039d7). A gentle rise while the state fits in cache, a steeper one beyond:
// 0.11, 0.18, 0.29 and 0.80 us at those sizes. Not below 0.8x the reference (0.144 us): the short
// congested runs on small fabrics cost more a hop than the long ones above (whole process less
// its start over the run's hops, `ci` build, 2026-12-07: incast-pfc, incast-tcp and
// headroom-too-small 0.20-0.22 us at 0.18 MB, ecn-tuning 0.26 us with DCQCN).
inline constexpr double kPacketSecondsPerHop = 0.18e-6;  // at the reference state
inline constexpr double kPacketReferenceStateBytes = 1.5e6;
inline constexpr double kPacketCacheBytes =
    8.0 * (1 << 20);  // port state beyond which hops slow down
// Normal or exponential link jitter: two uniforms and a logarithm per hop, and the link's FIFO.
// jitter-efficiency.yaml (normal, 5 % of the delay) runs its 2.34 M hops in 0.55 s of user time,
// 0.31 s without impairments: 0.10 us per hop.
inline constexpr double kPacketSecondsPerJitteredHop = 0.10e-6;
// DCQCN: the reaction point's timers and rate updates, the notification point's CNPs. Whole process
// less its start over the run's hops (`ci` build, 2026-12-07, tools/estimate-survey.py):
// ring-next-leaf-128-dcqcn 0.285 us against ring-next-leaf-128's 0.211 (1.35x), incast-dcqcn 0.29
// against incast-pfc's 0.20 (1.45x).
inline constexpr double kPacketDcqcnHopCostFactor = 1.4;
inline constexpr double kPacketSmallStateFloor = 0.8;
inline double packet_seconds_per_hop(double port_state_bytes, bool jitter) {
  const double in_cache = std::max(
      kPacketSmallStateFloor,
      std::pow(std::min(port_state_bytes, kPacketCacheBytes) / kPacketReferenceStateBytes, 0.2));
  const double beyond = std::pow(std::max(1.0, port_state_bytes / kPacketCacheBytes), 0.4);
  return kPacketSecondsPerHop * in_cache * beyond + (jitter ? kPacketSecondsPerJitteredHop : 0.0);
}
inline constexpr double kSecondsPerFabricEntity = 2e-6;  // building the fabric and routing tables
// Starting the process and reading the scenario: the whole run of the smallest shipped scenarios
// (median of 7, timed from the fork to the exit, `ci` build, 2026-12-07: gb200-nvl72 0.007 s,
// pfc-deadlock 0.010 s; incast-* 0.028 s).
inline constexpr double kProcessSeconds = 0.008;
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
// wall by a count that held one stage's buckets of eight.) Since the flow backend keeps each queue
// pair's route and the private runs drop finished records (2026-12-05) these runs take about 0.8x
// (torchtitan-70b-256 1.03 s whole process against 2.11 s estimated, the DGX Cloud 70B validation
// case 114 -> 92 s): 0.55 us.
inline constexpr double kFlowSecondsPerRingTransfer = 0.55e-6;
inline constexpr double kFlowRingRanksDoublingCost = 5500;
// Plain FSDP's all-gathers and reduce-scatters at flow fidelity, per transfer of their timed plans
// (whole process / counted transfers): the built-in default at 32, 64, 128 and 256 GPUs measured
// 1.9, 2.6, 2.3 and 2.0 us (`ci` build at 314a28f); since the calendar queue the default 1.9 us,
// fsdp-llama-70b 1.0 us and ib-ndr-superpod 1.2 us (at f1b9b32): their geometric middle; 0.8x
// that since the flow backend keeps each queue pair's route (the default 2.07 -> 1.66 s of CPU,
// 2026-12-05).
inline constexpr double kFlowSecondsPerFsdpTransfer = 1.15e-6;
// DDP buckets run live on the run's network (beside traffic, or `reuse_bucket_timings: false`),
// which keeps their records and counts their bytes: placement-study's 814,400 transfers ran at 0.76
// us of user time each, and 0.76 us again with its traffic removed (`ci` build, 2026-12-07), where
// the ring rate above (fitted on idle-fabric runs) charged 0.55.
inline constexpr double kFlowSecondsPerLiveBucketTransfer = 0.76e-6;
// The model-parallel closed form's groups inside one host (TP, TP x CP): their flows share only
// their own NVLink ports, so each start or finish refills a few rates. torchtitan-70b-256 (1.8 M
// of its 2.85 M transfers in TP groups of 8) and llama-70b-3d ran at 0.31-0.33 us a transfer over
// all (whole process, `ci` build, 2026-12-07), 1.7-1.8x their estimates at 0.58 us.
inline constexpr double kFlowSecondsPerIntraHostTransfer = 0.3e-6;
// Plain FSDP with `reuse_bucket_timings: false`: every gather and scatter runs live on the run's
// network, which keeps their records. Whole process over the live transfers counted (`ci` build,
// 2026-12-07, `--set workload.reuse_bucket_timings=false`): the built-in default on 32, 64 and
// 128 GPUs 0.79, 1.07 and 1.15 us and 74, 74 and 73 B (2.86 s / 0.25 GiB, 14.1 s / 0.97 GiB,
// 61 s / 3.79 GiB), fsdp-llama-70b 0.98 us and 59 B (31.6 s / 1.87 GiB), the default as HSDP
// (`--set workload.fsdp.shard_degree=8`) 1.10 us and 106 B (8.87 s / 0.84 GiB): 85 B puts all
// three within 1.4x.
inline constexpr double kFlowSecondsPerLiveFsdpTransfer = 1.15e-6;
inline constexpr double kBytesPerLiveFsdpTransfer = 85;
inline double flow_seconds_per_transfer(double concurrent_ranks, bool tree) {
  return tree ? kFlowSecondsPerTransferBase * (1.0 + concurrent_ranks / kFlowRanksDoublingCost)
              : kFlowSecondsPerRingTransfer * (1.0 + concurrent_ranks / kFlowRingRanksDoublingCost);
}

}  // namespace syncsim::app
