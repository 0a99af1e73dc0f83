#include "run/estimate_fsdp.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include "models/fsdp.hpp"
#include "models/transformer.hpp"

namespace syncsim::app {

PlainFsdpCount count_plain_fsdp(const models::StepConfig& c, double n, bool reuse,
                                const ShapedPlan& shaped_plan, double idle_bytes_per_transfer) {
  // The idle-fabric timer times and keeps the plan of each distinct all-gather and reduce-scatter,
  // the block units' and the root's (embedding, head and final norm), over the shard group; an
  // all-gather and a reduce-scatter of one size are together an all-reduce plan's steps and
  // transfers.
  PlainFsdpCount f;
  f.shard = c.fsdp.shard_degree == 0 ? n : c.fsdp.shard_degree;
  const double lpu = std::max<uint32_t>(1, c.fsdp.layers_per_unit);
  const double param_bytes = static_cast<double>(c.fsdp.param_bytes);
  const double root = static_cast<double>(models::total_parameters(c.model)) -
                      static_cast<double>(models::layer_parameters(c.model)) * c.model.layers;
  for (const double params :
       std::set<double>{static_cast<double>(models::layer_parameters(c.model)) * lpu, root}) {
    const double bytes = params * param_bytes;
    // Each half cut as the timer cuts it: the chunk and slicing of the protocol NCCL picks for
    // that collective and size.
    models::PlanSizeEstimate plan;
    for (const models::CollectiveOp op :
         {models::CollectiveOp::AllGather, models::CollectiveOp::ReduceScatter}) {
      const models::PlanSizeEstimate half =
          shaped_plan(op, models::fsdp_gather_algorithm(c.algorithm), f.shard, bytes);
      plan.transfers += half.transfers / 2;
      plan.steps += half.steps / 2;
    }
    f.kept_plan_steps += plan.steps;
    f.timed_transfers += plan.transfers;
    f.largest_idle_bytes = std::max(f.largest_idle_bytes, plan.transfers * idle_bytes_per_transfer);
    // Its all-gather and its reduce-scatter are two simulations, each half the transfers.
    f.idle_runs.insert(f.idle_runs.end(), 2,
                       {plan.transfers / 2, plan.transfers / 2 * idle_bytes_per_transfer});
    f.bytes_moved_per_gpu += 2.0 * bytes;
  }
  if (reuse) return f;
  // Without reused timings the step runs every gather and scatter of every micro-batch live on
  // the run's network (models/fsdp.cpp's FsdpDriver), each over all its groups.
  const double replicas = std::max(1.0, std::floor(n / f.shard));
  const models::FsdpSchedule schedule =
      models::fsdp_schedule(c, static_cast<uint32_t>(std::min(f.shard, 4.0e9)),
                            static_cast<uint32_t>(std::min(replicas, 4.0e9)));
  for (const models::FsdpComm& comm : schedule.comms) {
    // An all-reduce here is HSDP's, of the gradient shard across the replicas.
    const bool across_replicas = comm.op == models::CollectiveOp::AllReduce;
    const double group = across_replicas ? replicas : f.shard;
    const models::CollectiveAlgo algo =
        across_replicas ? c.algorithm : models::fsdp_gather_algorithm(c.algorithm);
    const double half = across_replicas ? 1.0 : 0.5;  // of an all-reduce-shaped plan
    f.live_transfers +=
        shaped_plan(comm.op, algo, group, static_cast<double>(comm.bytes)).transfers * half *
        (n / group);
    f.bytes_moved_per_gpu += half * 2.0 * static_cast<double>(comm.bytes);
  }
  return f;
}

}  // namespace syncsim::app
