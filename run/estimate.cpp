#include "run/estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "models/collective_cost.hpp"
#include "models/expert_parallel.hpp"
#include "models/fsdp.hpp"
#include "models/nccl_setup.hpp"
#include "models/parallelism.hpp"
#include "models/step_model.hpp"
#include "models/step_protocols.hpp"
#include "models/step_sim.hpp"
#include "run/estimate_buckets.hpp"
#include "run/estimate_costs.hpp"
#include "run/estimate_fsdp.hpp"
#include "run/estimate_jobs.hpp"
#include "run/estimate_step_time.hpp"
#include "run/estimate_traffic.hpp"
#include "run/runner.hpp"
#include "sim/backends/transfer_backend.hpp"
#include "sim/net/port_counters.hpp"
#include "topologies/fabric_builder.hpp"

namespace syncsim::app {

namespace {

// A fat tree's pod count (k pods when given as k-ary).
uint32_t fat_tree_pods(const topo::FabricParams& fabric) {
  return fabric.fat_tree.k ? *fabric.fat_tree.k : fabric.fat_tree.pods;
}

// Independent simulations on `threads` threads as models/step_sim.cpp schedules them: longest
// first, each to the thread free first (wall in transfers, proportional to their time at one
// fidelity), and the largest ones' memory together (the worst case of those running at once).
struct ParallelRuns {
  double saved_transfers = 0;  // the runs' sum less the longest thread's
  double live_bytes = 0;
};
ParallelRuns parallel_runs(std::vector<std::pair<double, double>> runs, uint32_t threads) {
  std::sort(runs.begin(), runs.end(), std::greater<>());
  std::vector<double> load(std::min<std::size_t>(threads, runs.size()), 0.0);
  double sum = 0;
  for (const auto& [transfers, bytes] : runs) {
    *std::min_element(load.begin(), load.end()) += transfers;
    sum += transfers;
  }
  std::vector<double> live;
  for (const auto& run : runs) live.push_back(run.second);
  std::sort(live.begin(), live.end(), std::greater<>());
  ParallelRuns r;
  r.saved_transfers = sum - *std::max_element(load.begin(), load.end());
  for (std::size_t i = 0; i < load.size(); ++i) r.live_bytes += live[i];
  return r;
}

}  // namespace

Estimate estimate_run(const Scenario& scenario, const EstimateOptions& options) {
  const bool port_counters = options.port_counters;
  const uint32_t threads = options.threads;
  const topo::FabricSize size = topo::fabric_size(scenario.fabric);
  Estimate e;
  const auto nodes = static_cast<double>(size.nodes);
  const auto links = static_cast<double>(size.links);
  const double ports = 2.0 * links;
  const auto gpus = static_cast<double>(size.gpus);
  // A transfer's record, and at packet fidelity its flow in the network.
  const double bytes_per_transfer =
      kBytesPerTransfer + (scenario.fidelity == Fidelity::Packet ? kPacketBytesPerFlow : 0.0);
  // The step model's private idle-fabric simulations drop each transfer's record once it is done
  // (TransferBackend::keep_finished_records): the run's own network keeps them.
  const double idle_bytes_per_transfer =
      bytes_per_transfer - static_cast<double>(sizeof(TransferRecord));
  e.memory_parts.emplace_back("process", kProcessBase);
  e.memory_parts.emplace_back("fabric", nodes * kBytesPerNode + links * kBytesPerLink);
  e.memory_parts.emplace_back("routing",
                              static_cast<double>(size.routing_entries) * kBytesPerRoutingEntry);
  const double per_port = scenario.fidelity == Fidelity::Packet ? kPacketBytesPerPort
                          : scenario.fidelity == Fidelity::Flow ? kFlowBytesPerPort
                                                                : kAnalyticBytesPerPort;
  e.memory_parts.emplace_back("backend", ports * per_port);
  if (port_counters && scenario.fidelity == Fidelity::Packet) {
    // One PriorityCounters (pause and depth histograms) per egress port and priority.
    e.memory_parts.emplace_back("port counters",
                                ports * scenario.fabric.switch_params.priorities *
                                    static_cast<double>(sizeof(net::PriorityCounters)));
  }

  // Background traffic, and at packet fidelity how often a lossless class that drops resends it.
  const LosslessResends resends = lossless_drop_resends(scenario, gpus, e);
  double messages = 0;
  double message_bytes = 0;
  double message_bytes_sent = 0;  // with the resends
  for (const auto& t : scenario.traffic) {
    messages += traffic_messages(t, gpus);
    const double bytes = traffic_bytes(t, gpus);
    message_bytes += bytes;
    if (t.pattern != models::TrafficPattern::Explicit) {
      message_bytes_sent += bytes * resends.of(t.priority);
      continue;
    }
    for (const models::MessageSpec& m : t.messages) {
      message_bytes_sent += static_cast<double>(m.size.count()) * resends.of(m.priority);
    }
  }
  // Packet fidelity: the links each message's packets cross, from its endpoints where expanding
  // the traffic is cheap (nullopt: count by the fabric's depth).
  const std::optional<double> message_link_bytes =
      scenario.fidelity == Fidelity::Packet && messages <= kMessagesExpandedAtMost
          ? traffic_link_bytes(scenario, static_cast<uint32_t>(size.gpus), resends)
          : std::nullopt;
  e.transfers += messages;
  e.memory_parts.emplace_back("messages", messages * (kBytesPerMessage + bytes_per_transfer));

  // Transfers of the run's own network (the flows its result lists): the messages and the live
  // buckets, not the private idle-fabric simulations.
  double live_network_transfers = 0;

  // The training step, as models/step_sim.cpp runs it. Every distinct bucket size either has its
  // whole plan built and simulated (kept to the end of the run where the buckets run live, dropped
  // after its idle run where their times are reused), or, where the step model's
  // bucket_extrapolation rule says so, is timed from sample plans (k1 and 2 k1 pipeline units, and
  // 4 k1 for LL / LL128, which may double further; simulated once per protocol chunk and dropped).
  // Peak: the kept plans plus the largest live simulation (its plan if dropped afterwards, and its
  // transfer records).
  double step_bytes_moved = 0;
  double largest_rank_count = 0;
  double event_driven_transfers = 0;  // of e.transfers: the event-driven model-parallel step's
  double fsdp_transfers = 0;          // of e.transfers: plain FSDP's timed gathers and scatters
  // Of e.transfers: what the DDP step's idle-fabric simulations save on `threads` threads (their
  // sum less the longest thread's share).
  double parallel_saved_transfers = 0;
  double fsdp_saved_transfers = 0;  // the same of fsdp_transfers
  double fsdp_live_transfers = 0;   // of e.transfers: plain FSDP's live gathers and scatters
  // Of e.transfers: the model-parallel closed form's groups inside one host (TP, TP x CP), whose
  // flows share no fabric link.
  double intra_host_transfers = 0;
  double live_bucket_transfers = 0;  // of e.transfers: DDP buckets run live on the run's network
  const bool tree_collectives =
      scenario.workload && scenario.workload->step.algorithm == models::CollectiveAlgo::Tree;
  if (scenario.workload) {
    models::StepConfig c = scenario.workload->step;
    c.gpus_per_host = scenario.fabric.host.gpus;
    double n = scenario.workload->data_parallel == 0 ? gpus : scenario.workload->data_parallel;
    largest_rank_count = n;
    // The step's collectives as run/runner.cpp sets them up.
    const models::ProtocolTiming timing = models::apply_nccl_step_setup(
        c, scenario.collective,
        scenario_nccl_channels(scenario, static_cast<uint32_t>(std::min(n, 4.0e9))));
    const auto chunk = static_cast<double>(c.chunk_bytes);
    const auto ranks = static_cast<uint32_t>(std::min(n, 4.0e9));
    std::map<int64_t, int> sizes;
    const auto buckets = models::ddp_buckets(c.model, c.ddp);
    for (const auto& b : buckets) ++sizes[b.size.count()];
    // Network faults (every kind but a straggler) run the step's collectives live on the faulty
    // fabric, whatever the workload says (run/fault_run.cpp, apply_to_step).
    const bool network_faults =
        std::any_of(scenario.faults.begin(), scenario.faults.end(),
                    [](const FaultSpec& f) { return f.kind != FaultKind::Straggler; });
    if (network_faults) c.model_parallel_idle_fabric_timing = false;
    const bool reuse =
        !network_faults && scenario.workload->reuse_bucket_timings.value_or(messages == 0);
    // simulate_ddp_step extrapolates only on the reused (idle-fabric) path, not with a calibration.
    const bool may_extrapolate = reuse && !(scenario.collective_calibration &&
                                            scenario.collective_calibration->lines_are_the_model());
    const double channels = std::max<uint32_t>(1, c.channels);
    // A bucket's plan runs with the chunk (and ring slicing) of the protocol NCCL picks for its
    // size (StepProtocols).
    // How `op` of `bytes` over `group` ranks runs with `algo`: the chunk (and ring slicing) of the
    // protocol NCCL picks for it (StepProtocols).
    auto shape = [&](models::CollectiveOp op, models::CollectiveAlgo algo, double group,
                     double bytes) {
      models::PlanOptions o;
      o.op = op;
      o.algo = algo;
      o.ranks = static_cast<uint32_t>(std::min(group, 4.0e9));
      o.bytes = static_cast<int64_t>(bytes);
      o.channels = c.channels;
      o.gpus_per_host = c.gpus_per_host;
      models::shape_step_collective(c, models::step_protocol(c, op, algo, o.ranks, o.bytes), o);
      return o;
    };
    // A bucket's all-reduce.
    auto bucket_shape = [&](int64_t bytes) {
      return shape(models::CollectiveOp::AllReduce, c.algorithm, ranks, static_cast<double>(bytes));
    };
    // The all-reduce-shaped plan of `bytes` over `group` ranks with the chunk and slicing that
    // `op` runs with at that size.
    auto shaped_plan = [&](models::CollectiveOp op, models::CollectiveAlgo algo, double group,
                           double bytes) {
      const models::PlanOptions o = shape(op, algo, group, bytes);
      return models::plan_size_estimate(algo, group, bytes, static_cast<double>(o.chunk_bytes),
                                        channels, scenario.fabric.host.gpus,
                                        {o.min_pieces, o.min_piece_bytes});
    };
    auto bucket_chunk = [&](int64_t bytes) {
      return static_cast<double>(bucket_shape(bytes).chunk_bytes);
    };
    // The plan of `bytes` cut as the bucket of `bucket_bytes` is (a sample runs its bucket's
    // chunk and slicing).
    auto plan_size_of = [&](double bytes, int64_t bucket_bytes) {
      const models::PlanOptions o = bucket_shape(bucket_bytes);
      return models::plan_size_estimate(c.algorithm, n, bytes, static_cast<double>(o.chunk_bytes),
                                        channels, scenario.fabric.host.gpus,
                                        {o.min_pieces, o.min_piece_bytes});
    };
    double kept_plan_steps = 0;
    double kept_records = 0;  // bytes of the live buckets' transfer records
    double largest_live = 0;  // bytes of the largest live simulation (records, dropped plan)
    std::set<double> sampled_chunks;  // the samples serve every size of the same chunk
    // The idle-fabric plans run, (chunk, bytes): a whole bucket that is another's sample runs once.
    std::set<std::pair<double, double>> idle_plans;
    // The idle-fabric simulations, (transfers, live bytes) each, of the DDP step's reused path or
    // of the closed form: with --threads they run at once (models/step_sim.cpp,
    // prefetch_idle_runs; IdleCollectiveTimer::run_recorded).
    std::vector<std::pair<double, double>> idle_runs;
    if (c.layout.model_parallel() || models::is_moe(c.model)) {
      // The closed form (models/parallelism.cpp) times each kind of collective once, all groups of
      // a kind at once on an idle copy of the fabric, and keeps each plan (one per op, group size
      // and bytes); an all-reduce's plan stands for the all-gathers and reduce-scatters too (it is
      // their two halves). The DP buckets are those of the pipeline ranks' layers over TP.
      const models::ParallelLayout& l = c.layout;
      const double model_parallel = static_cast<double>(l.tensor) * l.context * l.pipeline;
      const double dp = std::max(1.0, std::floor((scenario.workload->data_parallel == 0
                                                      ? gpus / model_parallel
                                                      : scenario.workload->data_parallel)));
      const double tokens = static_cast<double>(c.compute.micro_batch) * c.model.sequence /
                            std::max<uint32_t>(1, l.context);
      const double activation = tokens * c.model.hidden * 2.0;
      largest_rank_count = 0;
      // At analytic fidelity the closed form's timer simulates one group per symmetry class
      // (models/idle_collective_timer.hpp): groups inside a host are all one host's, so a kind
      // whose groups fit in one host (TP, and TP x CP, groups of consecutive ranks) takes one
      // group's time. Its memory is still counted for every group: the peak RSS of such runs
      // (0.58 GB for the 405B recipe on 16k GPUs) holds more than the simulated groups' records.
      const auto per_host = static_cast<double>(std::max<uint32_t>(1, scenario.fabric.host.gpus));
      const bool symmetric = scenario.fidelity == Fidelity::Analytic &&
                             c.time_symmetric_groups_once &&
                             scenario.network.transport.kind == net::TransportKind::Roce;
      // One entry per simulation (transfers, live bytes): the closed form runs them on --threads.
      std::vector<std::pair<double, double>> closed_form_runs;
      // `op`: an all-reduce, or one of its halves (a reduce-scatter or an all-gather: half its
      // transfers, on the chunk and slicing of that op's own protocol).
      // `plan_kept`: false where an earlier call timed the same plan on other groups (the timer
      // keeps one plan per op, group size and bytes).
      auto kind = [&](double groups, double group_ranks, double bytes, double copies,
                      double span = 0, models::CollectiveOp op = models::CollectiveOp::AllReduce,
                      bool plan_kept = true) {
        if (group_ranks <= 1 || bytes <= 0) return;
        const double simulated = symmetric && span > 0 && span <= per_host ? 1.0 : groups;
        const double share = op == models::CollectiveOp::AllReduce ? 1.0 : 0.5;
        // The distributed optimizer's halves run as rings whatever the step's all-reduce
        // algorithm (models/closed_form_data_parallel.cpp).
        const models::CollectiveAlgo algo =
            op == models::CollectiveOp::AllReduce ? c.algorithm : models::CollectiveAlgo::Ring;
        models::PlanSizeEstimate plan = shaped_plan(op, algo, group_ranks, bytes);
        plan.transfers *= share;
        plan.steps *= share;
        if (plan_kept) kept_plan_steps += plan.steps * copies;
        e.transfers += plan.transfers * simulated * copies;
        if (span > 0 && span <= per_host)
          intra_host_transfers += plan.transfers * simulated * copies;
        largest_live = std::max(largest_live, plan.transfers * groups * idle_bytes_per_transfer);
        for (double k = 0; k < copies; ++k) {
          closed_form_runs.emplace_back(plan.transfers * simulated,
                                        plan.transfers * groups * idle_bytes_per_transfer);
        }
        step_bytes_moved += 2.0 * share * bytes * groups * group_ranks * copies;
        largest_rank_count = std::max(largest_rank_count, groups * group_ranks);
      };
      kind(dp * l.pipeline * l.context, l.tensor, activation, l.sequence_parallel ? 2 : 1,
           l.tensor);
      kind(dp * l.pipeline * l.tensor, l.context, activation / l.tensor, 2,
           static_cast<double>(l.tensor) * l.context);
      kind(dp * l.context * l.tensor, l.pipeline > 1 ? 2 : 1, activation, 1);
      // Expert parallelism: the dispatch all-to-all (T k h 2 bytes) over every EP group.
      kind(dp * l.context * l.tensor * l.pipeline / l.expert, l.expert,
           activation * c.model.experts_per_token, 1);
      const StageBuckets stage = stage_buckets(c, dp, symmetric);
      const bool fsdp_closed = c.parallelism == models::DataParallelism::Fsdp;
      if (fsdp_closed) {
        // FSDP times no buckets: each distinct unit and root size's all-gather and reduce-scatter
        // (together an all-reduce's transfers) over the shard groups, and with HSDP the shards'
        // all-reduce over the replicate groups; a pipeline rank's calls repeat the first's.
        const double group = dp * l.context;
        const double shard = c.fsdp.shard_degree == 0 ? group : c.fsdp.shard_degree;
        const double replicas = std::max(1.0, group / shard);
        const double lpu = std::max<uint32_t>(1, c.fsdp.layers_per_unit);
        std::set<double> unit_sizes{static_cast<double>(models::layer_parameters(c.model)) /
                                    l.tensor * lpu};
        const double embedding =
            static_cast<double>(models::embedding_parameters(c.model)) / l.tensor;
        unit_sizes.insert(l.pipeline > 1 ? embedding / 2 : embedding);
        for (const double params : unit_sizes) {
          const double bytes = params * static_cast<double>(c.fsdp.param_bytes);
          kind(l.tensor * replicas, shard, bytes, 1);
          if (replicas > 1) kind(l.tensor * shard, replicas, bytes / shard, 1);
        }
      } else if (l.distributed_optimizer && dp * l.context > 1) {
        // The distributed optimizer reduce-scatters each bucket and all-gathers the updated
        // parameters (models/closed_form_data_parallel.cpp), each on its own op's protocol.
        for (const TimedBucket& b : stage.timed) {
          for (const auto op :
               {models::CollectiveOp::ReduceScatter, models::CollectiveOp::AllGather}) {
            kind(b.groups, b.group_ranks, static_cast<double>(b.bytes), 1, 0, op, b.first);
          }
        }
      } else {
        for (const TimedBucket& b : stage.timed) {
          kind(b.groups, b.group_ranks, static_cast<double>(b.bytes), 1, 0,
               models::CollectiveOp::AllReduce, b.first);
        }
      }
      // The event-driven model-parallel step (run/runner.cpp's choice) runs every pipeline send
      // (one transfer per GPU pair), every bucket of every stage (all groups; the distributed
      // optimizer's gathers too) and every expert all-to-all live in one simulation, whose
      // transfer records it keeps.
      const bool fsdp = c.parallelism == models::DataParallelism::Fsdp;
      const bool event_driven = scenario.workload->event_driven_layouts.value_or(!reuse);
      if (!event_driven) idle_runs = std::move(closed_form_runs);
      // With idle-fabric timing it times each distinct collective once on an idle fabric, as the
      // closed form counted above does, and runs no transfer of its own.
      if (event_driven && !c.model_parallel_idle_fabric_timing) {
        const double m = std::max<uint32_t>(1, c.grad_accumulation);
        const double stages =
            static_cast<double>(l.pipeline) * std::max<uint32_t>(1, l.virtual_pipeline);
        double live = 2.0 * m * (stages - 1) * dp * l.context * l.tensor;
        if (fsdp) {
          // Per micro-batch every unit is gathered twice and reduce-scattered once (each half an
          // all-reduce's transfers), over the DP x CP group of each TP rank.
          const double lpu = std::max<uint32_t>(1, c.fsdp.layers_per_unit);
          const double unit_bytes = static_cast<double>(models::layer_parameters(c.model)) /
                                    l.tensor * lpu * static_cast<double>(c.fsdp.param_bytes);
          const models::PlanSizeEstimate plan =
              models::plan_size_estimate(models::CollectiveAlgo::Ring, dp * l.context, unit_bytes,
                                         chunk, channels, scenario.fabric.host.gpus);
          live += 1.5 * plan.transfers * l.tensor * m * std::ceil(c.model.layers / lpu);
        } else {
          for (const auto& [bytes, count] : stage.count_by_size) {
            const models::PlanSizeEstimate plan =
                models::plan_size_estimate(c.algorithm, dp * l.context, static_cast<double>(bytes),
                                           chunk, channels, scenario.fabric.host.gpus);
            live += plan.transfers * l.tensor * count;  // RS + AG: an all-reduce's two halves
          }
        }
        if (l.expert > 1) {
          const models::PlanSizeEstimate a2a = models::plan_size_estimate(
              models::CollectiveAlgo::Pairwise, l.expert, activation * c.model.experts_per_token,
              chunk, channels, scenario.fabric.host.gpus);
          live += a2a.transfers * 4.0 * m * c.model.layers * dp * l.context * l.tensor / l.expert;
        }
        e.transfers += live;
        event_driven_transfers = live;
        e.cheaper.emplace_back(
            "`workload.collective_timing: idle_fabric` times each collective of the event-driven "
            "model-parallel step once on an idle fabric instead of running every transfer live "
            "(docs/training-step.md gives the rule's error)");
        largest_live = std::max(largest_live, live * kEventDrivenBytesPerTransfer);
        largest_rank_count = std::max(largest_rank_count, dp * model_parallel);
      }
      sizes.clear();
      n = dp * model_parallel;
    }
    if (c.parallelism == models::DataParallelism::Fsdp && !c.layout.model_parallel() &&
        !models::is_moe(c.model)) {
      // Plain FSDP times no DDP bucket: its timer's gathers and scatters, and without reused
      // timings every one of the step live, whose records the network keeps to the run's end.
      sizes.clear();
      const PlainFsdpCount f = count_plain_fsdp(c, n, reuse, shaped_plan, idle_bytes_per_transfer);
      kept_plan_steps += f.kept_plan_steps;
      e.transfers += f.timed_transfers + f.live_transfers;
      fsdp_transfers = f.timed_transfers;
      fsdp_live_transfers = f.live_transfers;
      largest_live = std::max(largest_live, f.largest_idle_bytes);
      idle_runs.insert(idle_runs.end(), f.idle_runs.begin(), f.idle_runs.end());
      step_bytes_moved += f.bytes_moved_per_gpu;
      largest_rank_count = f.shard;
      if (f.live_transfers > 0) {
        live_network_transfers += f.live_transfers;
        kept_records +=
            f.live_transfers * (bytes_per_transfer - kBytesPerTransfer + kBytesPerLiveFsdpTransfer);
        e.cheaper.emplace_back(
            "`workload.reuse_bucket_timings: true` times each distinct all-gather and "
            "reduce-scatter once on an idle fabric instead of running every one live");
      }
    }
    for (const auto& [bytes, count] : sizes) {
      const std::optional<models::BucketSamples> samples =
          may_extrapolate ? models::bucket_extrapolation(c, ranks, bytes) : std::nullopt;
      if (samples) {
        e.extrapolated_buckets += 1;
        if (!sampled_chunks.insert(bucket_chunk(bytes)).second) continue;
        std::vector<double> sample_bytes{static_cast<double>(samples->small_bytes),
                                         static_cast<double>(samples->large_bytes)};
        if (samples->verified) sample_bytes.push_back(2.0 * sample_bytes.back());
        for (const double b : sample_bytes) {
          if (!idle_plans.emplace(bucket_chunk(bytes), b).second) continue;
          const double t = plan_size_of(b, bytes).transfers;
          e.transfers += t;
          step_bytes_moved += 2.0 * b;
          idle_runs.emplace_back(t, t * (1.5 * kBytesPerPlanStep + idle_bytes_per_transfer));
          largest_live = std::max(largest_live, idle_runs.back().second);
        }
        continue;
      }
      const models::PlanSizeEstimate plan = plan_size_of(static_cast<double>(bytes), bytes);
      const double t = plan.transfers;
      // Each distinct plan is timed once on an idle fabric: the reused timing, or beside live
      // buckets, at packet level, the closed form's (below).
      const bool idle_counted = reuse || scenario.fidelity == Fidelity::Packet;
      const bool new_idle_plan =
          idle_counted &&
          idle_plans.emplace(bucket_chunk(bytes), static_cast<double>(bytes)).second;
      if (reuse && !new_idle_plan) continue;
      if (reuse) {
        idle_runs.emplace_back(t, plan.steps * kBytesPerPlanStep + t * idle_bytes_per_transfer);
        largest_live = std::max(largest_live, idle_runs.back().second);
      } else {
        kept_plan_steps += plan.steps;
        largest_live = std::max(largest_live, t * bytes_per_transfer);
        // The live buckets' transfer records stay with the run's backend to its end.
        kept_records += t * count * bytes_per_transfer;
        live_network_transfers += t * count;
        live_bucket_transfers += t * count;
      }
      e.transfers += reuse ? t : t * count;
      step_bytes_moved += 2.0 * static_cast<double>(bytes) * (reuse ? 1 : count);
      // Beside live buckets the step times each distinct size once more on an idle copy of the
      // fabric, for its closed form (models/step_sim.cpp, idle_run). Counted at packet level, where
      // those runs are whole packet simulations; the flow level's per-transfer costs were fitted
      // on runs that had them.
      if (!reuse && new_idle_plan) {
        e.transfers += t;
        step_bytes_moved += 2.0 * static_cast<double>(bytes);
      }
    }
    if (threads > 1 && idle_runs.size() > 1) {
      const ParallelRuns at_once = parallel_runs(idle_runs, threads);
      // Plain FSDP's are its timed gathers and scatters, on their own per-transfer cost.
      (fsdp_transfers > 0 ? fsdp_saved_transfers : parallel_saved_transfers) =
          at_once.saved_transfers;
      largest_live = std::max(largest_live, at_once.live_bytes);
    }
    if (!c.layout.model_parallel()) step_bytes_moved *= n;
    if (c.parallelism == models::DataParallelism::Ddp && !c.layout.model_parallel()) {
      e.sim_time_s = expected_ddp_step_s(c, n, scenario.fabric, buckets, timing.launch_us * 1e-6);
    }
    e.memory_parts.emplace_back("plans", kept_plan_steps * kBytesPerPlanStep);
    e.memory_parts.emplace_back("transfers", largest_live);
    if (kept_records > 0) e.memory_parts.emplace_back("records", kept_records);
    e.memory_parts.emplace_back("ranks",
                                n * kBytesPerRank + static_cast<double>(buckets.size()) * 64);
  }

  // `workload.chakra`: every runner and its records stay to the end of the replay.
  if (scenario.chakra) {
    const double transfers = chakra_transfers(scenario);
    e.transfers += transfers;
    e.memory_parts.emplace_back("chakra",
                                transfers * (1.5 * kBytesPerPlanStep + bytes_per_transfer));
  }

  // The `report:` collectives (run_report_collectives, run/collective_cmd.cpp): an all_reduce of
  // each size over the job's ranks on an idle copy of the fabric after the run, planned as a ring
  // here whatever NCCL picks (both move about 2 S per GPU).
  double report_bytes_moved = 0;
  double report_ranks = 0;
  if (scenario.report) {
    const double n = scenario.workload && scenario.workload->data_parallel > 0
                         ? scenario.workload->data_parallel
                         : gpus;
    const auto ranks = static_cast<uint32_t>(std::min(n, 4.0e9));
    models::StepConfig c;
    c.gpus_per_host = scenario.fabric.host.gpus;
    models::apply_nccl_step_setup(c, scenario.collective, scenario_nccl_channels(scenario, ranks));
    for (const int64_t bytes :
         {scenario.report->allreduce_small_bytes, scenario.report->allreduce_large_bytes}) {
      const models::PlanSizeEstimate plan = models::plan_size_estimate(
          models::CollectiveAlgo::Ring, n, static_cast<double>(bytes),
          static_cast<double>(c.chunk_bytes), std::max<uint32_t>(1, c.channels),
          scenario.fabric.host.gpus, {c.ring_min_pieces, c.ring_min_piece_bytes});
      e.transfers += plan.transfers;
      report_bytes_moved += 2.0 * static_cast<double>(bytes) * n;
    }
    report_ranks = n;
  }

  add_packet_memory(scenario, size, message_bytes + step_bytes_moved + report_bytes_moved,
                    messages + live_network_transfers, options.json_output, e);
  for (const auto& [name, bytes] : e.memory_parts) e.memory_bytes += bytes;

  // Time: building the fabric, then the work of the fidelity.
  e.wall_s = kProcessSeconds + (nodes + links + static_cast<double>(size.routing_entries) / 64) *
                                   kSecondsPerFabricEntity;
  switch (scenario.fidelity) {
    case Fidelity::Packet: {
      // A payload MTU crosses two links per switch tier it climbs, up and down: 4 in a two-tier
      // fabric (NIC, leaf, spine, leaf), 6 across a fat tree's pods; RoCE's coalesced ACKs come
      // back the same way.
      const double mtu = static_cast<double>(scenario.fabric.links.host.mtu.count());
      const bool three_tier =
          scenario.fabric.kind == topo::TopologyKind::FatTree && fat_tree_pods(scenario.fabric) > 1;
      const double hops_per_packet = three_tier ? 6.0 : 4.0;
      // TCP acknowledges every data packet (sim/net/tcp.hpp).
      const double ack_share = scenario.network.transport.kind == net::TransportKind::Roce
                                   ? 1.0 / std::max(1u, scenario.network.transport.gbn.ack_every)
                               : scenario.network.transport.kind == net::TransportKind::Tcp ? 1.0
                                                                                            : 0.0;
      // Rings (a ring step's buckets, the report's all_reduces) hop between consecutive ranks,
      // mostly inside a host or under one leaf.
      const bool ring_step = scenario.workload &&
                             scenario.workload->step.algorithm == models::CollectiveAlgo::Ring &&
                             !scenario.workload->step.layout.model_parallel();
      const double step_links =
          ring_step ? ring_links(scenario.fabric, largest_rank_count) : hops_per_packet;
      // A Chakra replay's rings (its default) hop as a ring step's do.
      const double chakra_links =
          scenario.collective.algorithm.value_or(models::CollectiveAlgo::Ring) ==
                  models::CollectiveAlgo::Ring
              ? ring_links(scenario.fabric, scenario.chakra ? scenario.chakra->ranks : 0)
              : hops_per_packet;
      e.packet_hops = (message_link_bytes.value_or(message_bytes_sent * hops_per_packet) +
                       step_bytes_moved * step_links +
                       report_bytes_moved * ring_links(scenario.fabric, report_ranks) +
                       chakra_bytes_moved(scenario) * chakra_links) /
                      std::max(1.0, mtu) * (1.0 + ack_share);
      // Jobs (add_jobs, below): each job's hops as a scenario of its own counts them.
      if (!scenario.jobs.empty()) add_jobs(scenario, port_counters, e);
      // A hop costs more as the fabric's state grows, with link jitter drawn per hop, and with
      // DCQCN.
      bool dcqcn = scenario.network.nic.dcqcn.enabled;
      for (const NicOverrideSpec& o : scenario.network.nic_overrides) {
        dcqcn = dcqcn || o.nic.dcqcn.enabled;
      }
      e.wall_s += e.packet_hops *
                  packet_seconds_per_hop(ports * kPacketBytesPerPort,
                                         scenario.network.impairments.jitters()) *
                  (dcqcn ? kPacketDcqcnHopCostFactor : 1.0) /
                  packet_thread_speedup(scenario, size, threads);
      break;
    }
    case Fidelity::Flow:
      e.wall_s += (e.transfers - event_driven_transfers - fsdp_transfers - fsdp_live_transfers -
                   intra_host_transfers - live_bucket_transfers - parallel_saved_transfers) *
                      flow_seconds_per_transfer(largest_rank_count, tree_collectives) +
                  live_bucket_transfers * kFlowSecondsPerLiveBucketTransfer +
                  intra_host_transfers * kFlowSecondsPerIntraHostTransfer +
                  (fsdp_transfers - fsdp_saved_transfers) * kFlowSecondsPerFsdpTransfer +
                  fsdp_live_transfers * kFlowSecondsPerLiveFsdpTransfer +
                  event_driven_transfers * kEventDrivenFlowSecondsPerTransfer;
      break;
    case Fidelity::Analytic:
      e.wall_s += (e.transfers - parallel_saved_transfers - fsdp_saved_transfers) *
                  kAnalyticSecondsPerTransfer;
      break;
  }
  if (!scenario.jobs.empty() && scenario.fidelity != Fidelity::Packet) {
    add_jobs(scenario, port_counters, e);
  }
  scale_to_machine(e, options.machine_speed);
  return e;
}

void scale_to_machine(Estimate& e, double speed) {
  e.wall_s = e.wall_s * e.machine_speed / speed;
  e.machine_speed = speed;
}

}  // namespace syncsim::app
