#include "run/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>
#include <optional>
#include <span>
#include <sstream>

#include "models/fsdp.hpp"
#include "models/model_parallel_step.hpp"
#include "models/nccl_setup.hpp"
#include "models/parallelism.hpp"
#include "models/step_reaction.hpp"
#include "models/traffic.hpp"
#include "models/traffic_injector.hpp"
#include "run/calibrated_collective.hpp"
#include "run/chakra_run.hpp"
#include "run/link_tiers.hpp"
#include "run/packet_metrics.hpp"
#include "run/progress.hpp"
#include "scenario/configuration_warnings.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/backends/analytic_backend.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/backends/packet_backend.hpp"
#include "sim/net/dcqcn_pacing.hpp"
#include "sim/net/egress_port.hpp"
#include "sim/net/fabric_partition.hpp"
#include "sim/net/network.hpp"
#include "sim/net/observer.hpp"
#include "sim/net/port_names.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/placement.hpp"

namespace syncsim::app {

namespace {

// A step run live at packet level runs as partitions only on a fabric of this many at least (a
// rule of the fabric's, so the results stay the same for any thread count). A step's windows are
// short (its step latency or a cable) and its completions pass through the simulation's thread
// between them; measured on the 2-vCPU VM (docs/performance.md, "Live steps as partitions"):
// 2 partitions (roce-vs-ib) ran 25 % slower on one thread and no faster on two, 8 (128 hosts)
// 11 % slower and 1.07x on two, 64 (1,024 hosts) 9 % slower and 1.12x on two; since a window's
// end visits only the outboxes posted to, the 1,024-host step runs faster than one queue on one
// thread and 1.7x on two, while a replay of 8 ranks on 16 leaves still runs 1.3x slower. The same
// rule holds for jobs sharing the fabric and for Chakra replays.
constexpr uint32_t kLiveStepMinPartitions = 16;

const char* pattern_name(models::TrafficPattern p) {
  switch (p) {
    case models::TrafficPattern::Explicit:
      return "messages";
    case models::TrafficPattern::RingShift:
      return "ring_shift";
    case models::TrafficPattern::Permutation:
      return "permutation";
    case models::TrafficPattern::Incast:
      return "incast";
    case models::TrafficPattern::AllToAll:
      return "all_to_all";
  }
  return "?";
}

// Jain's index (sum x)^2 / (n sum x^2) of the completed messages' rates x = size / FCT within each
// traffic entry: a victim flow and an incast written as two entries are two groups.
std::vector<TrafficFairness> fairness_by_entry(
    const std::vector<models::TrafficSpec>& traffic,
    const std::vector<models::TrafficInjector::Outcome>& outcomes) {
  std::vector<TrafficFairness> groups(traffic.size());
  std::vector<double> sum(traffic.size(), 0.0), sq(traffic.size(), 0.0);
  std::vector<uint64_t> rated(traffic.size(), 0);
  for (std::size_t e = 0; e < traffic.size(); ++e) {
    groups[e].entry = static_cast<uint32_t>(e);
    groups[e].pattern = pattern_name(traffic[e].pattern);
  }
  for (const auto& o : outcomes) {
    TrafficFairness& g = groups[o.traffic_entry];
    ++g.messages;
    if (!o.done) continue;
    ++g.completed;
    if (o.fct_s > 0) {
      const double x = static_cast<double>(o.size_bytes) / o.fct_s;
      sum[o.traffic_entry] += x;
      sq[o.traffic_entry] += x * x;
      ++rated[o.traffic_entry];
    }
  }
  for (std::size_t e = 0; e < groups.size(); ++e) {
    if (sq[e] > 0) groups[e].jain_index = sum[e] * sum[e] / (static_cast<double>(rated[e]) * sq[e]);
  }
  return groups;
}

// Runs the queue to completion, stopping at each sample time (and at the rate window's ends) to
// read the network's state: no event is added, so the run is the same as an unobserved one (a
// partitioned fabric runs more, shorter windows, which changes no result).
void run_observed(Simulation& sim, const net::Network& network, const net::NetworkSpec& spec,
                  const ObserveSpec& obs, const std::string& source, RunResult& r) {
  const bool series = !obs.csv_dir.empty();
  net::ObserverConfig cfg;
  cfg.flows = obs.flows;
  if (series) {
    if (obs.ports.empty()) {
      for (net::PortId p = 0; p < network.port_count(); ++p) {
        const net::NodeSpec& owner = spec.nodes[network.routing().ports()[p].owner];
        if (owner.kind == net::NodeKind::Switch && owner.role != net::SwitchRole::NvSwitch) {
          cfg.ports.push_back(p);
        }
      }
    } else {
      for (const std::string& name : obs.ports) {
        net::PortId found = UINT32_MAX;
        for (net::PortId p = 0; p < network.port_count() && found == UINT32_MAX; ++p) {
          if (port_name(spec, network, p) == name) found = p;
        }
        if (found == UINT32_MAX) {
          // Loading checks the names on every fabric it builds; this is for the larger ones.
          throw ScenarioError(source, 0, 0, "observe.ports",
                              "expected an egress port \"owner->peer\" of this fabric, got \"" +
                                  name + "\"; did you mean \"" +
                                  net::closest_egress_port(spec, name) + "\"?");
        }
        cfg.ports.push_back(found);
      }
    }
  }
  if (series) {
    for (net::NodeId n = 0; n < spec.nodes.size(); ++n) {
      if (spec.nodes[n].kind == net::NodeKind::Switch &&
          spec.nodes[n].role != net::SwitchRole::NvSwitch)
        cfg.switches.push_back(n);
    }
  }
  net::NetworkObserver observer(network, cfg);
  std::vector<int64_t> at_start, at_end;
  const auto snapshot = [&](std::vector<int64_t>& out) {
    out.clear();
    for (net::FlowId f = 0; f < network.flow_count(); ++f)
      out.push_back(network.flow(f).delivered_bytes);
  };
  const int64_t step = obs.interval.picoseconds();
  int64_t next_sample = series ? 0 : INT64_MAX;
  bool start_done = !obs.rate_window, end_done = !obs.rate_window;
  // The run ends with its last live event: cancelled timers still queued (a superseded pacing
  // wake-up at a DCQCN minimum rate can lie tens of ms ahead) are not part of it.
  while (sim.queue().has_live_events() && !(network.deadlock() && network.deadlock()->detected)) {
    int64_t next = next_sample;
    if (!start_done) next = std::min(next, obs.window_start.picoseconds());
    if (!end_done) next = std::min(next, obs.window_end.picoseconds());
    if (next == INT64_MAX) {
      network.pause_windows_after(Time::max());
      sim.queue().run();
      break;
    }
    // A partitioned fabric's windows stop there too (partition_windows.hpp).
    network.pause_windows_after(Time::ps(next));
    sim.queue().run(Time::ps(next));
    if (!start_done && next == obs.window_start.picoseconds()) {
      snapshot(at_start);
      start_done = true;
    }
    if (!end_done && next == obs.window_end.picoseconds()) {
      snapshot(at_end);
      end_done = true;
    }
    // No sample after the run's end: the last live event ran before `next` and none is left.
    if (next > sim.now().picoseconds() && !sim.queue().has_live_events()) break;
    if (next == next_sample) {
      observer.sample(Time::ps(next));
      next_sample += step;
    }
  }
  if (!start_done) snapshot(at_start);  // the run ended before the window: nothing in it
  if (!end_done) snapshot(at_end);
  if (obs.rate_window) {
    FlowRateStats& fr = r.flow_rates;
    fr.stated_window = true;
    fr.window_start_s = obs.window_start.seconds();
    fr.window_end_s = obs.window_end.seconds();
    const double len = (obs.window_end - obs.window_start).seconds();
    for (net::FlowId f = 0; f < network.flow_count(); ++f) {
      const net::FlowRecord& rec = network.flow(f);
      // Active in the window: started before its end and not finished before its start.
      if (rec.start >= obs.window_end || (rec.done && rec.finish <= obs.window_start)) continue;
      const int64_t before = f < at_start.size() ? at_start[f] : 0;
      const int64_t after = f < at_end.size() ? at_end[f] : rec.delivered_bytes;
      fr.flows.push_back({spec.nodes[rec.src].name, spec.nodes[rec.dst].name,
                          static_cast<double>(after - before) * 8.0 / len, rec.start.seconds(),
                          rec.done ? rec.finish.seconds() : -1.0, rec.done});
      add_flow_details(spec, network, f, fr.flows.back());
    }
  }
  if (!series) return;
  std::filesystem::create_directories(obs.csv_dir);
  const std::string qpath = (std::filesystem::path(obs.csv_dir) / "queues.csv").string();
  std::ofstream q(qpath);
  if (!q) throw std::runtime_error("cannot write " + qpath);
  q << "time_s,port,queue_bytes,paused_priorities_mask\n";
  for (std::size_t s = 0; s < observer.samples(); ++s) {
    for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
      q << observer.time(s).seconds() << "," << port_name(spec, network, cfg.ports[i]) << ","
        << observer.queue_bytes(s, i) << "," << static_cast<unsigned>(observer.paused_mask(s, i))
        << "\n";
    }
  }
  r.timeseries_files.push_back(qpath);
  const std::string bpath = (std::filesystem::path(obs.csv_dir) / "buffers.csv").string();
  std::ofstream b(bpath);
  if (!b) throw std::runtime_error("cannot write " + bpath);
  b << "time_s,switch,buffer_used_bytes,shared_used_bytes\n";
  for (std::size_t s = 0; s < observer.samples(); ++s) {
    for (std::size_t i = 0; i < cfg.switches.size(); ++i) {
      b << observer.time(s).seconds() << "," << spec.nodes[cfg.switches[i]].name << ","
        << observer.buffer_used(s, i) << "," << observer.shared_used(s, i) << "\n";
    }
  }
  r.timeseries_files.push_back(bpath);
  if (!cfg.flows) return;
  const std::string fpath = (std::filesystem::path(obs.csv_dir) / "flows.csv").string();
  std::ofstream fl(fpath);
  if (!fl) throw std::runtime_error("cannot write " + fpath);
  fl << "time_s,flow,src,dst,rate_bps,delivered_bytes\n";
  for (std::size_t s = 0; s < observer.samples(); ++s) {
    for (net::FlowId f = 0; f < observer.flow_count(s); ++f) {
      const net::FlowRecord& rec = network.flow(f);
      fl << observer.time(s).seconds() << "," << f << "," << spec.nodes[rec.src].name << ","
         << spec.nodes[rec.dst].name << "," << observer.flow_rate_bps(s, f) << ","
         << observer.flow_delivered(s, f) << "\n";
    }
  }
  r.timeseries_files.push_back(fpath);
}

}  // namespace

double percentile_sorted(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const auto idx = static_cast<std::size_t>(std::max(1.0, rank)) - 1;
  return sorted[std::min(idx, sorted.size() - 1)];
}

models::NcclChannels scenario_nccl_channels(const Scenario& scenario, uint32_t ranks,
                                            std::optional<uint32_t> requested) {
  const topo::FabricParams& f = scenario.fabric;
  models::NcclSystem system =
      models::nccl_system(ranks, f.host.gpus, f.host.nics, f.links.host.bandwidth,
                          f.links.nvlink.bandwidth, scenario.host_gpu);
  system.sharp = f.sharp.enabled;
  return models::nccl_channels(system, requested ? requested : scenario.collective.channels);
}

void set_collnet_trees(models::StepConfig& step, const Scenario& scenario,
                       const net::NetworkSpec& spec) {
  if (!models::is_collnet(step.algorithm)) return;
  net::RailTrees trees = net::usable_rail_trees(spec, step.rank_to_gpu, scenario.fabric.host.gpus,
                                                scenario.fabric.host.nics);
  if (!trees.unavailable.empty()) {
    throw ScenarioError(scenario.source, 0, 0, "workload.algorithm",
                        "expected an algorithm this fabric runs: CollNet " + trees.unavailable +
                            ", so NCCL would fall back to another");
  }
  step.collnet_trees = std::move(trees.trees);
  step.collnet_outstanding = spec.sharp.outstanding_operations;
}

RunResult run_scenario(const Scenario& scenario, const RunOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  ProgressLine progress(options.progress, options.estimated_wall_s, stderr, options.expected_sim_s);
  net::NetworkSpec spec = scenario_network(scenario);
  spec.port_counters = options.port_counters && scenario.fidelity == Fidelity::Packet;
  std::vector<std::string> fault_warnings;
  FaultRun faults(scenario, spec, fault_warnings);  // may change `spec` (analytic fidelity)
  std::vector<uint32_t> host_of_rank;
  for (const net::GpuAttachment& g : spec.gpus) host_of_rank.push_back(g.host);
  auto messages = models::expand_traffic(scenario.traffic, host_of_rank, scenario.seed);

  // A `workload:` step, set up before the fabric is built: at packet level its collectives bound
  // how far a partitioned fabric may run ahead (models/step_reaction.hpp). What setting it up warns
  // of is told after the run's own warnings, as before.
  RunResult r;
  std::vector<std::string> step_warnings;
  std::optional<models::StepConfig> step_config;
  if (scenario.workload && !scenario.chakra && scenario.jobs.empty()) {
    models::StepConfig& step = step_config.emplace(scenario.workload->step);
    // With model parallelism the ranks are TP x CP x PP x DP on the first GPUs, in Megatron order
    // (models/parallelism.hpp); data_parallel then counts replicas.
    const uint32_t model_parallel = step.layout.tensor * step.layout.context * step.layout.pipeline;
    topo::JobPlacement placed =
        topo::place_job(spec, model_parallel, scenario.workload->data_parallel,
                        scenario.workload->placement, scenario.seed);
    step.rank_to_gpu = std::move(placed.rank_to_gpu);
    const auto ranks = static_cast<uint32_t>(step.rank_to_gpu.size());
    if (placed.policy_ignored) {
      step_warnings.push_back(
          "workload.placement applies to pure data parallelism; model-parallel ranks "
          "use Megatron order on the first GPUs (placement ignored)");
    }
    step.gpus_per_host = scenario.fabric.host.gpus;
    step.seed = scenario.seed;
    step.threads = options.threads;
    step.on_progress = step_progress_hook(progress, options.on_step_progress);
    // NCCL's channels over the job's ranks, and per collective the protocol NCCL picks (or the
    // pinned collective.protocol) with its latencies and chunk (scenario `collective:` knobs).
    r.step_channels = scenario_nccl_channels(scenario, ranks);
    step.nics_per_host = scenario.fabric.host.nics;
    set_collnet_trees(step, scenario, spec);
    models::apply_nccl_step_setup(step, scenario.collective, r.step_channels);
    // Idle-fabric bucket timings are exact only when nothing else shares the fabric.
    step.reuse_bucket_timings = scenario.workload->reuse_bucket_timings.value_or(messages.empty());
    if (step.model_parallel_idle_fabric_timing && messages.size() > 0) {
      step_warnings.push_back(
          "workload.collective_timing: idle_fabric: the step's collectives take idle-fabric "
          "durations and neither load the fabric nor see its background traffic");
    }
    faults.apply_to_step(step, step_warnings);
    // Model-parallel layouts run event by event when their collectives run live (the fabric is
    // shared), as a closed form on the idle fabric otherwise, unless the scenario says.
    step.model_parallel_event_driven =
        scenario.workload->event_driven_layouts.value_or(!step.reuse_bucket_timings);
    if (scenario.collective_calibration && !scenario.collective_calibration->physical.empty()) {
      // The loader applied the profile's parameters: every collective is simulated with them.
      r.bucket_allreduce_model =
          "simulated with the physical parameters of " + scenario.collective_calibration->file;
    } else if (scenario.collective_calibration) {
      if (step.parallelism == models::DataParallelism::Ddp && !step.layout.model_parallel() &&
          !step.layout.distributed_optimizer && !models::is_moe(step.model)) {
        r.bucket_allreduce_model = calibrate_bucket_allreduce(*scenario.collective_calibration,
                                                              ranks, step, step_warnings);
      } else {
        step_warnings.push_back(
            "collective.calibration drives DDP bucket all-reduces only; this step's "
            "FSDP/model-parallel collectives are simulated without the profile");
      }
    }
  }

  // Traffic alone is known in advance (no completion starts a transfer): at packet level the fabric
  // runs as partitions in windows, on --threads threads (sim/net/partition_windows.hpp). Time
  // series stop the windows at their samples (run_observed); faults and their measurements run
  // between windows, on the whole fabric at once. A step run live does too where its transfers
  // can be set up ahead (PacketBackend::starts_ahead) and the fabric splits into enough partitions
  // to pay for its windows: its windows then last no longer than the soonest its collectives start
  // a transfer after what it waited for (models::step_reaction), and its traffic is handed over a
  // window ahead (TrafficInjector).
  const bool traffic_only = !scenario.chakra && scenario.jobs.empty() && !scenario.workload;
  // Why a packet-level step, or the jobs sharing the fabric, keep it on one queue (empty: they do
  // not). Jobs are steps on one fabric: their windows keep the least of their reactions.
  // A Chakra replay's collectives are steps' collectives too.
  const bool packet_jobs =
      !scenario.chakra && !scenario.jobs.empty() && scenario.fidelity == Fidelity::Packet;
  const bool packet_replay = scenario.chakra && scenario.fidelity == Fidelity::Packet;
  const bool packet_step =
      (step_config || packet_jobs || packet_replay) && scenario.fidelity == Fidelity::Packet;
  std::string step_one_queue;
  if (packet_step) {
    const uint32_t partitions = net::partition_fabric(spec).count;
    if (!packet_starts_ahead_possible(spec)) {
      step_one_queue = "its transfers start at once (TCP, or several planes)";
    } else if (partitions < kLiveStepMinPartitions) {
      step_one_queue = "its fabric splits into " + std::to_string(partitions) +
                       " partition(s), and a live step runs on partitions from " +
                       std::to_string(kLiveStepMinPartitions);
    }
  }
  const bool live_step = packet_step && step_one_queue.empty();
  if (scenario.fidelity == Fidelity::Packet && (traffic_only || live_step)) {
    spec.execution.partitioned = true;
    spec.execution.threads = options.threads;
    spec.execution.min_window_events_per_thread = options.min_window_events_per_thread;
    if (live_step) {
      spec.execution.reaction = step_config   ? models::step_reaction(*step_config, spec)
                                : packet_jobs ? jobs_reaction(scenario, spec, &faults)
                                              : chakra_reaction(scenario, spec);
    }
  }
  Simulation sim(scenario.seed);
  std::unique_ptr<TransferBackend> backend = make_backend(scenario.fidelity, sim, spec);
  backend->count_port_bytes(true);  // link_tiers: bytes per egress port, hence per tier
  faults.start(*backend);
  r.warnings = scenario.load_warnings;
  r.warnings.insert(r.warnings.end(), fault_warnings.begin(), fault_warnings.end());
  r.messages = messages.size();
  const BackendExecution execution = backend->execution();
  if (options.threads > 1 && spec.execution.partitioned && execution.partitions < 2) {
    r.warnings.push_back(
        "threads: " + std::to_string(options.threads) +
        " were asked for, but this packet-level run has one partition: " + execution.refusal);
  } else if (options.threads > 1 && traffic_only && !spec.execution.partitioned) {
    r.warnings.push_back(
        "threads: " + std::to_string(options.threads) +
        " were asked for, but traffic runs on threads only at packet fidelity; this run uses "
        "one");
  } else if (options.threads > 1 && (packet_jobs || packet_replay) && !step_one_queue.empty()) {
    r.warnings.push_back("threads: " + std::to_string(options.threads) + " were asked for, but " +
                         (packet_jobs ? "the fabric these packet-level jobs share"
                                      : "this packet-level Chakra replay's fabric") +
                         " runs as one queue: " + step_one_queue);
  } else if (options.threads > 1 && !step_one_queue.empty() &&
             (!step_config->reuse_bucket_timings || r.messages > 0)) {
    r.warnings.push_back(
        "threads: " + std::to_string(options.threads) +
        " were asked for, but this packet-level step's fabric runs as one queue: " +
        step_one_queue + "; the threads run its private idle-fabric simulations only");
  } else if (options.threads > 1 && (scenario.chakra || !scenario.jobs.empty()) &&
             scenario.fidelity != Fidelity::Packet) {
    r.warnings.push_back(
        "threads: " + std::to_string(options.threads) +
        " were asked for, but only a `workload:` step's private idle-fabric simulations and "
        "packet-level traffic, steps, jobs and Chakra replays run on threads; this run (" +
        std::string(scenario.chakra ? "a Chakra replay" : "jobs") +
        " at flow or analytic fidelity) uses one");
  }
  models::TrafficInjector injector(*backend, std::move(messages));
  if (scenario.chakra) {
    run_chakra_workload(scenario, *backend, r);
  } else if (!scenario.jobs.empty()) {
    r.jobs = run_jobs(scenario, spec, *backend, r.warnings, &faults);
  } else if (scenario.workload) {
    models::StepConfig& step = *step_config;
    for (auto& w : step_warnings) r.warnings.push_back(std::move(w));
    // Model parallelism, the distributed optimizer and mixture-of-experts models run on the
    // event-driven model-parallel engine (models/model_parallel_step.hpp) unless the scenario
    // asks for the closed form or the layout is one it does not run (FSDP composed with model
    // parallelism).
    const bool layout_engine = step.layout.model_parallel() || step.layout.distributed_optimizer ||
                               models::is_moe(step.model);
    if (layout_engine && step.model_parallel_event_driven &&
        !models::model_parallel_step_refusal(step)) {
      r.step = models::simulate_model_parallel_step(*backend, spec, scenario.fidelity, step);
    } else if (layout_engine) {
      r.step = models::simulate_parallel_step(spec, scenario.fidelity, step);
      if (r.messages > 0) {
        r.step->warnings.push_back(
            "the model-parallel step is a closed form on an idle fabric: the "
            "background traffic runs but does not slow it");
      }
      sim.queue().run();
    } else if (step.parallelism == models::DataParallelism::Fsdp) {
      r.step = models::simulate_fsdp_step(*backend, spec, scenario.fidelity, step);
    } else {
      r.step = models::simulate_ddp_step(*backend, spec, scenario.fidelity, step);
    }
    r.step->gpu_memory_bytes = step.gpu.memory_bytes;
    // The per-layer breakdown by op class: one dense block on one GPU of the layout.
    r.step->layer_compute =
        models::layer_compute(step.model, step.gpu, step.compute,
                              models::ComputeSplit{std::max<uint32_t>(1, step.layout.tensor),
                                                   std::max<uint32_t>(1, step.layout.context),
                                                   step.layout.sequence_parallel});
    r.step->layer_count = step.model.layers;
    for (const auto& w : r.step->warnings) r.warnings.push_back(w);
  } else if (scenario.observe) {
    // Time series need the packet network; other fidelities just run.
    struct ObservedRun final : BackendObserver {
      Simulation& sim;
      const net::NetworkSpec& spec;
      const ObserveSpec& observe;
      const std::string& source;
      RunResult& r;
      bool ran = false;
      ObservedRun(Simulation& s, const net::NetworkSpec& n, const ObserveSpec& o,
                  const std::string& src, RunResult& res)
          : sim(s), spec(n), observe(o), source(src), r(res) {}
      void on_packet_network(const net::Network& network) override {
        run_observed(sim, network, spec, observe, source, r);
        ran = true;
      }
    } observed(sim, spec, *scenario.observe, scenario.source, r);
    backend->observe(observed);
    if (!observed.ran) sim.queue().run();
  } else {
    sim.queue().run();
  }
  progress.stop();

  r.scenario = scenario.name;
  r.transport = net::transport_name(spec.transport.kind);
  r.seed = scenario.seed;
  r.fidelity = scenario.fidelity;
  r.sim_time_s = sim.now().seconds();
  const BackendExecution ran = backend->execution();
  r.events = sim.queue().executed() + ran.partition_events;
  r.partitions = ran.partitions;
  r.windows = ran.windows;
  const uint64_t outside_partitions = sim.queue().executed();
  for (const net::ThreadLoad& load : ran.thread_loads) {
    r.thread_scaling.push_back(
        {load.threads, load.busiest_thread_events,
         static_cast<double>(r.events) / static_cast<double>(std::max<uint64_t>(
                                             1, load.busiest_thread_events + outside_partitions))});
  }
  if (ran.threads > 1 && ran.windows > 0 && ran.threaded_windows == 0) {
    // The threads were there, but no window held enough events to hand out (window_load.hpp).
    r.warnings.push_back(
        "threads: " + std::to_string(options.threads) +
        " were asked for, but this run's windows held too few events to hand to more than one (" +
        std::to_string(ran.partition_events / ran.windows) +
        " on average; a window goes to as "
        "many threads as give each " +
        std::to_string(spec.execution.min_window_events_per_thread) +
        "): it ran on one; thread_scaling bounds what more threads would give");
  }
  r.counters = backend->counters();
  r.gpus = static_cast<uint32_t>(spec.gpus.size());
  r.hosts = spec.hosts;
  r.links = spec.links.size();
  r.link_tiers = link_tier_use(spec, backend->port_bytes(), r.sim_time_s);
  r.switches = static_cast<std::size_t>(
      std::count_if(spec.nodes.begin(), spec.nodes.end(),
                    [](const net::NodeSpec& n) { return n.kind == net::NodeKind::Switch; }));
  for (std::size_t i = 0; i < static_cast<std::size_t>(net::DropReason::Count); ++i) {
    r.drops.emplace_back(net::drop_reason_name(static_cast<net::DropReason>(i)), 0);
  }
  const net::NetworkCounters& c = r.counters;
  r.packets_dropped_buffer_full = c.dropped(net::DropReason::BufferFull);
  for (std::size_t i = 0; i < r.drops.size(); ++i) r.drops[i].second = c.packets_dropped[i];
  r.pause_frames = c.pause_frames;
  r.resume_frames = c.resume_frames;
  r.nic_pause_frames = c.nic_pause_frames;
  r.max_nic_rx_bytes = c.max_nic_rx_bytes;
  r.ecn_marks = c.ecn_marks;
  r.ecn_hop_marks = c.ecn_hop_marks;
  r.cnps = c.cnps;
  r.rate_cuts = c.rate_cuts;
  r.retransmitted_packets = c.retransmitted_packets;
  r.retransmitted_bytes = c.retransmitted_bytes;
  r.out_of_order_packets = c.out_of_order_packets;
  r.timeouts = c.timeouts;
  r.fast_retransmits = c.fast_retransmits;
  r.naks = c.naks;
  r.acks = c.acks;
  r.bytes_discarded = c.bytes_discarded;
  r.rc_recoveries = c.rc_recoveries;
  r.rc_retry_exceeded = c.rc_retry_exceeded;
  r.rc_recovery_time_s = Time::ps(c.rc_recovery_time_ps).seconds();
  r.rc_recovery_time_max_s = Time::ps(c.rc_recovery_max_ps).seconds();
  // Packet fidelity: deadlock, configuration findings, pause times and per-flow rates.
  struct PacketMetrics final : BackendObserver {
    const net::NetworkSpec& spec;
    const Simulation& sim;
    RunResult& r;
    PacketMetrics(const net::NetworkSpec& n, const Simulation& s, RunResult& res)
        : spec(n), sim(s), r(res) {}
    void on_packet_network(const net::Network& network) override {
      collect_packet_metrics(spec, sim, network, r);
    }
  } metrics(spec, sim, r);
  backend->observe(metrics);

  // The traffic's messages, not the transfers a step's collectives put on the same backend.
  std::vector<double> fct;
  fct.reserve(injector.outcomes().size());
  double rate_sum = 0;
  double rate_sq = 0;
  std::size_t rated = 0;
  for (const models::TrafficInjector::Outcome& o : injector.outcomes()) {
    r.fct_by_message_s.push_back(o.done ? o.fct_s : -1.0);
    if (o.done) {
      fct.push_back(o.fct_s);
      if (fct.back() > 0) {
        const double x = static_cast<double>(o.size_bytes) / fct.back();
        rate_sum += x;
        rate_sq += x * x;
        ++rated;
      }
    }
  }
  if (rate_sq > 0) r.jain_index = rate_sum * rate_sum / (static_cast<double>(rated) * rate_sq);
  r.jain_by_traffic = fairness_by_entry(scenario.traffic, injector.outcomes());
  r.messages_completed = fct.size();
  for (const TransferRecord& t : backend->transfers()) r.transfers_completed += t.done ? 1 : 0;
  std::sort(fct.begin(), fct.end());
  if (!fct.empty()) {
    r.fct.min_s = fct.front();
    r.fct.max_s = fct.back();
    r.fct.mean_s = std::accumulate(fct.begin(), fct.end(), 0.0) / static_cast<double>(fct.size());
    r.fct.p50_s = percentile_sorted(fct, 50);
    r.fct.p99_s = percentile_sorted(fct, 99);
  }
  r.faults = faults.finish(*backend, r.step, r.warnings);
  add_job_fault_costs(r.faults, r.jobs);
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  if (scenario.report) {
    r.report = run_report_collectives(scenario);
    for (const std::string& w : r.report->warnings) r.warnings.push_back(w);
  }
  return r;
}

}  // namespace syncsim::app
