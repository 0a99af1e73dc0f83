#include "run/estimate_jobs.hpp"

#include <algorithm>
#include <cmath>

#include "models/chakra_graph.hpp"
#include "models/collective_plan.hpp"
#include "models/nccl_setup.hpp"
#include "models/step_protocols.hpp"
#include "run/runner.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app {

double chakra_transfers(const Scenario& scenario) {
  if (!scenario.chakra || scenario.chakra->trace.ranks.empty()) return 0;
  const ChakraWorkloadSpec& chakra = *scenario.chakra;
  models::StepConfig c;
  c.gpus_per_host = scenario.fabric.host.gpus;
  c.nics_per_host = scenario.fabric.host.nics;
  c.algorithm = scenario.collective.algorithm.value_or(models::CollectiveAlgo::Ring);
  models::apply_nccl_step_setup(c, scenario.collective,
                                scenario_nccl_channels(scenario, chakra.ranks));
  double transfers = 0;
  for (const models::ChakraNode& node : chakra.trace.ranks.front().nodes) {
    if (node.kind == models::ChakraNodeKind::Send) transfers += 1;
    if (node.kind != models::ChakraNodeKind::Collective || node.barrier || node.bytes <= 0) {
      continue;
    }
    const bool pairwise =
        node.op == models::CollectiveOp::SendRecv || node.op == models::CollectiveOp::AllToAll;
    models::PlanOptions o;
    o.op = node.op;
    o.algo = pairwise ? models::CollectiveAlgo::Pairwise : c.algorithm;
    o.ranks = chakra.ranks;
    o.bytes = node.bytes;
    o.channels = c.channels;
    models::shape_step_collective(c, models::step_protocol(c, node.op, o.algo, o.ranks, node.bytes),
                                  o);
    const models::PlanSizeEstimate plan = models::plan_size_estimate(
        o.algo, chakra.ranks, static_cast<double>(node.bytes), static_cast<double>(o.chunk_bytes),
        std::max<uint32_t>(1, c.channels), scenario.fabric.host.gpus,
        {o.min_pieces, o.min_piece_bytes});
    // An all-gather or reduce-scatter is one half of the all-reduce plan counted.
    const bool half = node.op == models::CollectiveOp::AllGather ||
                      node.op == models::CollectiveOp::ReduceScatter;
    transfers += half ? plan.transfers / 2 : plan.transfers;
  }
  return transfers;
}

double chakra_bytes_moved(const Scenario& scenario) {
  if (!scenario.chakra) return 0;
  const ChakraWorkloadSpec& chakra = *scenario.chakra;
  const double n = chakra.ranks;
  double bytes = 0;
  for (const models::ChakraRankTrace& rank : chakra.trace.ranks) {
    for (const models::ChakraNode& node : rank.nodes) {
      if (node.bytes <= 0) continue;
      const auto size = static_cast<double>(node.bytes);
      if (node.kind == models::ChakraNodeKind::Send) {
        bytes += size;  // each send once, at its sender
        continue;
      }
      if (node.kind != models::ChakraNodeKind::Collective || node.barrier) continue;
      // What this rank puts on the wire for its share of the collective (nccl-tests' bus bytes:
      // 2 (n - 1) / n S for an all-reduce, (n - 1) / n S for the others), counted at every rank.
      const double share = n > 1 ? (n - 1) / n : 0.0;
      bytes += (node.op == models::CollectiveOp::AllReduce ? 2.0 : 1.0) * share * size;
    }
  }
  return bytes;
}

// `jobs:` (run/multi_job.hpp): each job's transfers are counted as a scenario of its own on the
// same fabric would count them (its ranks: its hosts' GPUs, its data_parallel x model parallelism,
// or the GPUs left to it; its buckets live, as reuse_bucket_timings defaults to false for a job),
// times its steps (twice with compare_alone, which reruns each job alone). All jobs run in one
// simulation that keeps every transfer's record to the end. Measured on scenarios/multi-job.yaml
// (`ci` build at 7ba10ee): without compare_alone 4.8 s and 256 MiB peak for 3.0 M counted
// transfers, 1.6 us and 85 B each. With it 51 s there: the records were reallocated once per
// collective (fixed at 095f8ab); since then 6.8-10.4 s and 314-321 MiB for 6.0 M, 1.1-1.7 us;
// 5.97-8.07 s, 1.0-1.3 us, in four surveys on 2026-12-07 (tools/estimate-survey.py), where 1.6 us
// made the estimate 1.21-1.63x the wall.
constexpr double kJobSecondsPerTransfer = 1.3e-6;
// Per counted transfer, the whole process less its base (fitted, as the time: 60 B gives 360 MiB
// against 315 MiB of peak RSS on multi-job.yaml, `ci` build, 2026-12-05).
constexpr double kJobBytesPerTransfer = 60;
void add_jobs(const Scenario& scenario, bool port_counters, Estimate& e) {
  const topo::FabricSize size = topo::fabric_size(scenario.fabric);
  double free_gpus = static_cast<double>(size.gpus);
  const double gpus_per_host = std::max<uint32_t>(1, scenario.fabric.host.gpus);
  double transfers = 0;
  double hops = 0;
  for (const JobSpec& job : scenario.jobs) {
    Scenario alone = scenario;
    alone.jobs.clear();
    alone.traffic.clear();
    alone.workload = job.workload;
    const models::ParallelLayout& l = job.workload.step.layout;
    const double mp = static_cast<double>(l.tensor) * l.context * l.pipeline;
    double ranks = job.workload.data_parallel * mp;
    if (ranks == 0) {
      ranks = job.hosts.empty() ? free_gpus : static_cast<double>(job.hosts.size()) * gpus_per_host;
    }
    ranks = std::max(1.0, std::min(ranks, free_gpus));
    free_gpus -= ranks;
    alone.workload->data_parallel = static_cast<uint32_t>(std::max(1.0, std::floor(ranks / mp)));
    if (!alone.workload->reuse_bucket_timings) alone.workload->reuse_bucket_timings = false;
    const Estimate j = estimate_run(alone, port_counters);
    const double runs = (scenario.compare_alone ? 2.0 : 1.0) * std::max<uint32_t>(1, job.steps);
    transfers += runs * j.transfers;
    hops += runs * j.packet_hops;
  }
  e.transfers += transfers;
  // At packet level the jobs' packet hops are timed with the scenario's own (estimate_run).
  if (scenario.fidelity == Fidelity::Packet) {
    e.packet_hops += hops;
  } else {
    e.wall_s += transfers * kJobSecondsPerTransfer;
  }
  e.memory_parts.emplace_back("transfers", transfers * kJobBytesPerTransfer);
  e.memory_bytes += transfers * kJobBytesPerTransfer;
}

}  // namespace syncsim::app
