#include "run/result_schema.hpp"

#include <algorithm>
#include <sstream>

#include "run/runner.hpp"

namespace syncsim::app {

namespace {

using json = nlohmann::json;
using P = ResultPresence;

// The step of a workload run; only read where the key's presence says there is one.
const models::StepResult& step(const RunResult& r) { return *r.step; }
const ReportedCollectives& report(const RunResult& r) { return *r.report; }

json flow_rate_window(const RunResult& r) {
  const FlowRateStats& fr = r.flow_rates;
  if (!fr.stated_window) return "each flow's own [start, finish]";
  return {{"start_s", fr.window_start_s}, {"end_s", fr.window_end_s}};
}

json flow_rate_flows(const RunResult& r) {
  json flows = json::array();
  for (const auto& f : r.flow_rates.flows) {
    flows.push_back({{"src", f.src}, {"dst", f.dst}, {"bps", f.bps}, {"start_s", f.start_s},
                     {"finish_s", f.finish_s}});
  }
  return flows;
}

json drops(const RunResult& r) {
  json d = json::object();
  d["buffer_full_packets"] = r.packets_dropped_buffer_full;
  for (const auto& [reason, packets] : r.drops) d[reason] = packets;
  return d;
}

json top_paused_ports(const RunResult& r) {
  json top = json::array();
  for (std::size_t i = 0; i < r.paused_ports.size() && i < 5; ++i) {
    top.push_back({{"port", r.paused_ports[i].first}, {"paused_time_s", r.paused_ports[i].second}});
  }
  return top;
}

json buckets(const RunResult& r) {
  json out = json::array();
  for (const auto& b : step(r).buckets) {
    out.push_back({{"bytes", b.bytes},
                   {"ready_s", b.ready.seconds()},
                   {"start_s", b.start.seconds()},
                   {"end_s", b.end.seconds()}});
  }
  return out;
}

json collectives(const RunResult& r) {
  json out = json::array();
  for (const auto& c : step(r).collectives) {
    out.push_back({{"kind", c.kind},
                   {"unit", c.unit},
                   {"bytes", c.bytes},
                   {"ready_s", c.ready.seconds()},
                   {"start_s", c.start.seconds()},
                   {"end_s", c.end.seconds()},
                   {"count", c.count}});
  }
  return out;
}

// The table. Paths and values are a contract (scripts read them); descriptions feed docs/cli.md.
const std::vector<ResultKey>& table() {
  static const std::vector<ResultKey> keys = {
      // The run.
      {"scenario", "scenario", "", "the scenario's name", P::Always,
       [](const RunResult& r) -> json { return r.scenario; }},
      {"seed", "seed", "count", "the seed the run used (the scenario's, or --seed)", P::Always,
       [](const RunResult& r) -> json { return r.seed; }},
      {"fidelity", "fidelity", "", "packet, flow or analytic", P::Always,
       [](const RunResult& r) -> json { return fidelity_name(r.fidelity); }},
      {"sim_time_s", "sim_time_s", "s", "simulated time of the last event (the last completion)",
       P::Always, [](const RunResult& r) -> json { return r.sim_time_s; }},
      {"wall_s", "wall_s", "s", "host wall-clock time of set-up and simulation", P::Always,
       [](const RunResult& r) -> json { return r.wall_s; }},
      {"events", "events", "count", "events the event queue ran", P::Always,
       [](const RunResult& r) -> json { return r.events; }},
      {"packet_hops", "packet_hops", "count", "packet transmissions over links (packet fidelity)",
       P::Always, [](const RunResult& r) -> json { return r.counters.packet_hops; }},
      {"bytes_injected", "bytes_injected", "B", "payload bytes handed to the network", P::Always,
       [](const RunResult& r) -> json { return r.counters.bytes_injected; }},
      {"bytes_delivered", "bytes_delivered", "B", "payload bytes delivered to their destination",
       P::Always, [](const RunResult& r) -> json { return r.counters.bytes_delivered; }},
      {"bytes_dropped", "bytes_dropped", "B", "payload bytes dropped in the fabric", P::Always,
       [](const RunResult& r) -> json { return r.counters.bytes_dropped; }},
      // Messages of `traffic:`.
      {"messages.count", "messages", "count", "messages of the scenario's traffic", P::Always,
       [](const RunResult& r) -> json { return r.messages; }},
      {"messages.completed", "messages_completed", "count", "messages that completed", P::Always,
       [](const RunResult& r) -> json { return r.messages_completed; }},
      {"messages.fct_s.min", "fct_min_s", "s", "shortest flow completion time", P::Always,
       [](const RunResult& r) -> json { return r.fct.min_s; }},
      {"messages.fct_s.mean", "fct_mean_s", "s", "mean flow completion time", P::Always,
       [](const RunResult& r) -> json { return r.fct.mean_s; }},
      {"messages.fct_s.p50", "fct_p50_s", "s", "median flow completion time (nearest rank)",
       P::Always, [](const RunResult& r) -> json { return r.fct.p50_s; }},
      {"messages.fct_s.p99", "fct_p99_s", "s", "99th-percentile flow completion time (nearest rank)",
       P::Always, [](const RunResult& r) -> json { return r.fct.p99_s; }},
      {"messages.fct_s.max", "fct_max_s", "s", "longest flow completion time", P::Always,
       [](const RunResult& r) -> json { return r.fct.max_s; }},
      {"max_queue_bytes", "max_queue_bytes", "B", "deepest egress queue, wire bytes", P::Always,
       [](const RunResult& r) -> json { return r.counters.max_queue_bytes; }},
      {"drops", "", "packets",
       "packets dropped, one key per reason (buffer_full, no_route, lossless_headroom_exceeded, "
       "link_loss, nic_rx_overflow, pfc_watchdog, ...); buffer_full_packets repeats buffer_full for "
       "older readers",
       P::Always, drops},
      // PFC.
      {"pfc.pause_frames", "pause_frames", "packets", "PFC PAUSE frames sent by switches",
       P::Always, [](const RunResult& r) -> json { return r.pause_frames; }},
      {"pfc.resume_frames", "resume_frames", "packets", "PFC RESUME frames sent", P::Always,
       [](const RunResult& r) -> json { return r.resume_frames; }},
      {"pfc.paused_time_s", "paused_time_s", "s",
       "time paused, summed over every egress port and priority", P::Always,
       [](const RunResult& r) -> json { return r.paused_time_s; }},
      {"pfc.top_paused_ports", "", "s",
       "the 5 longest-paused egress ports: [{port \"owner->peer\", paused_time_s}]", P::Always,
       top_paused_ports},
      {"pfc.nic_pause_frames", "nic_pause_frames", "packets",
       "receiver-side PFC PAUSE frames sent by NICs", P::Always,
       [](const RunResult& r) -> json { return r.nic_pause_frames; }},
      {"pfc.max_nic_rx_bytes", "max_nic_rx_bytes", "B", "fullest NIC receive buffer", P::Always,
       [](const RunResult& r) -> json { return r.max_nic_rx_bytes; }},
      // ECN and DCQCN.
      {"ecn_marks", "ecn_marks", "packets", "packets ECN-marked", P::Always,
       [](const RunResult& r) -> json { return r.ecn_marks; }},
      {"cnps", "cnps", "packets", "DCQCN CNPs sent by destination NICs", P::Always,
       [](const RunResult& r) -> json { return r.cnps; }},
      {"dcqcn_rate_cuts", "dcqcn_rate_cuts", "count", "DCQCN rate decreases at source NICs",
       P::Always, [](const RunResult& r) -> json { return r.rate_cuts; }},
      {"jain_index", "jain_index", "fraction",
       "Jain's fairness index of the completed messages' average rates (size / FCT); 0 when none "
       "completed",
       P::Always, [](const RunResult& r) -> json { return r.jain_index; }},
      // Transports.
      {"transport", "transport", "", "roce, roce_host_staged or tcp", P::Always,
       [](const RunResult& r) -> json { return r.transport; }},
      {"retransmitted_packets", "retransmitted_packets", "packets",
       "packets sent again (go-back-N, TCP)", P::Always,
       [](const RunResult& r) -> json { return r.retransmitted_packets; }},
      {"retransmitted_bytes", "retransmitted_bytes", "B", "payload bytes sent again", P::Always,
       [](const RunResult& r) -> json { return r.retransmitted_bytes; }},
      {"timeouts", "timeouts", "count", "retransmission timeouts", P::Always,
       [](const RunResult& r) -> json { return r.timeouts; }},
      {"fast_retransmits", "fast_retransmits", "count", "TCP fast retransmits", P::Always,
       [](const RunResult& r) -> json { return r.fast_retransmits; }},
      {"naks", "naks", "packets", "go-back-N NAKs sent", P::Always,
       [](const RunResult& r) -> json { return r.naks; }},
      {"acks", "acks", "packets", "ACKs sent", P::Always,
       [](const RunResult& r) -> json { return r.acks; }},
      {"bytes_discarded", "bytes_discarded", "B",
       "payload received out of order or twice and discarded", P::Always,
       [](const RunResult& r) -> json { return r.bytes_discarded; }},
      // Per-flow rates (packet fidelity).
      {"flow_rates.window", "", "s",
       "{start_s, end_s} of observe.rate_window, or \"each flow's own [start, finish]\"",
       P::Always, flow_rate_window},
      {"flow_rates.count", "flow_rates_count", "count", "flows measured", P::Always,
       [](const RunResult& r) -> json { return r.flow_rates.flows.size(); }},
      {"flow_rates.min_bps", "flow_rates_min_bps", "bit/s", "slowest flow's mean payload rate",
       P::Always, [](const RunResult& r) -> json { return r.flow_rates.min_bps; }},
      {"flow_rates.max_bps", "flow_rates_max_bps", "bit/s", "fastest flow's mean payload rate",
       P::Always, [](const RunResult& r) -> json { return r.flow_rates.max_bps; }},
      {"flow_rates.mean_bps", "flow_rates_mean_bps", "bit/s", "mean of the flows' payload rates",
       P::Always, [](const RunResult& r) -> json { return r.flow_rates.mean_bps; }},
      {"flow_rates.jain_index", "flow_rates_jain_index", "fraction",
       "Jain's fairness index over these flows", P::Always,
       [](const RunResult& r) -> json { return r.flow_rates.jain_index; }},
      {"flow_rates.flows", "", "mixed", "[{src, dst, bps, start_s, finish_s}]; finish_s -1: not completed",
       P::Always, flow_rate_flows},
      {"timeseries_files", "", "", "CSV files --timeseries wrote", P::Timeseries,
       [](const RunResult& r) -> json { return r.timeseries_files; }},
      // PFC deadlock.
      {"deadlock.detected", "deadlock_detected", "", "a PFC deadlock stopped the run", P::Always,
       [](const RunResult& r) -> json { return r.deadlock.detected; }},
      {"deadlock.at_s", "deadlock_at_s", "s", "when the cycle closed (its last queue was paused)",
       P::Deadlock, [](const RunResult& r) -> json { return r.deadlock.at_s; }},
      {"deadlock.detected_at_s", "deadlock_detected_at_s", "s",
       "when it was detected and the run stopped", P::Deadlock,
       [](const RunResult& r) -> json { return r.deadlock.detected_at_s; }},
      {"deadlock.priority", "deadlock_priority", "count", "the deadlocked priority", P::Deadlock,
       [](const RunResult& r) -> json { return r.deadlock.priority; }},
      {"deadlock.ports", "", "", "the cycle's ports \"owner->peer\", each waiting on the next",
       P::Deadlock, [](const RunResult& r) -> json { return r.deadlock.ports; }},
      {"warnings", "", "", "configuration checks (also printed by the text output)", P::Always,
       [](const RunResult& r) -> json { return r.warnings; }},
      // `report:` all_reduces on the idle fabric.
      {"report_ranks", "report_ranks", "count", "ranks of the report: all_reduces", P::Report,
       [](const RunResult& r) -> json { return report(r).ranks; }},
      {"allreduce_small_bytes", "allreduce_small_bytes", "B",
       "report.allreduce_small, as nccl-tests rounds it", P::Report,
       [](const RunResult& r) -> json { return report(r).small_bytes; }},
      {"allreduce_small_latency_s", "allreduce_small_latency_s", "s",
       "time of the small all_reduce", P::Report,
       [](const RunResult& r) -> json { return report(r).small_latency_s; }},
      {"allreduce_large_bytes", "allreduce_large_bytes", "B",
       "report.allreduce_large, as nccl-tests rounds it", P::Report,
       [](const RunResult& r) -> json { return report(r).large_bytes; }},
      {"allreduce_large_time_s", "allreduce_large_time_s", "s", "time of the large all_reduce",
       P::Report, [](const RunResult& r) -> json { return report(r).large_time_s; }},
      {"allreduce_large_busbw_GBps", "allreduce_large_busbw_GBps", "GB/s",
       "nccl-tests' bus bandwidth of the large all_reduce", P::Report,
       [](const RunResult& r) -> json { return report(r).large_busbw_GBps; }},
      // The training step.
      {"step_time_s", "step_time_s", "s", "one training step", P::Workload,
       [](const RunResult& r) -> json { return step(r).step.seconds(); }},
      {"bucket_timing.extrapolated_bucket_bytes", "", "B",
       "bucket sizes whose idle-fabric time was extrapolated", P::ExtrapolatedBuckets,
       [](const RunResult& r) -> json { return step(r).extrapolated_bucket_sizes; }},
      {"bucket_timing.method", "", "", "how they were extrapolated", P::ExtrapolatedBuckets,
       [](const RunResult&) -> json {
         return "linear in pipeline chunks from idle runs of k1 = 4 ceil(log2 ranks) and 2 k1 chunks";
       }},
      {"forward_s", "forward_s", "s",
       "all micro-batches' forward and all but the last backward (rank 0)", P::Workload,
       [](const RunResult& r) -> json { return step(r).forward.seconds(); }},
      {"backward_s", "backward_s", "s", "the last micro-batch's backward, slowest rank",
       P::Workload, [](const RunResult& r) -> json { return step(r).backward.seconds(); }},
      {"optimizer_s", "optimizer_s", "s", "the optimizer step", P::Workload,
       [](const RunResult& r) -> json { return step(r).optimizer.seconds(); }},
      {"sync_s", "sync_s", "s", "gradient synchronisation busy time (sum of its collectives)",
       P::Workload, [](const RunResult& r) -> json { return step(r).sync.seconds(); }},
      {"exposed_comm_s", "exposed_comm_s", "s", "communication not hidden behind compute",
       P::Workload, [](const RunResult& r) -> json { return step(r).exposed_comm.seconds(); }},
      {"tail_s", "tail_s", "s", "communication after the slowest backward ends", P::Workload,
       [](const RunResult& r) -> json { return step(r).tail.seconds(); }},
      {"mfu", "mfu", "fraction", "model FLOPs utilisation", P::Workload,
       [](const RunResult& r) -> json { return step(r).mfu; }},
      {"hfu", "hfu", "fraction", "hardware FLOPs utilisation (with recomputation)", P::Workload,
       [](const RunResult& r) -> json { return step(r).hfu; }},
      {"tokens_per_s", "tokens_per_s", "tokens/s", "training throughput", P::Workload,
       [](const RunResult& r) -> json { return step(r).tokens_per_s; }},
      {"closed_form_step_time_s", "closed_form_step_time_s", "s",
       "the step model's closed form T_fwd + max(T_bwd, T_sync) + T_tail", P::Workload,
       [](const RunResult& r) -> json { return step(r).closed_form_step.seconds(); }},
      {"bytes_per_gpu", "bytes_per_gpu", "B", "bytes each GPU sends per step", P::Workload,
       [](const RunResult& r) -> json { return step(r).bytes_per_gpu; }},
      {"memory_per_gpu_bytes", "memory_per_gpu_bytes", "B", "memory each GPU holds", P::Workload,
       [](const RunResult& r) -> json { return step(r).memory_per_gpu_bytes; }},
      {"bucket_allreduce_model", "bucket_allreduce_model", "",
       "simulated, or the calibration profile line that timed the bucket all-reduces",
       P::Workload, [](const RunResult& r) -> json { return r.bucket_allreduce_model; }},
      {"buckets", "", "s", "DDP buckets [{bytes, ready_s, start_s, end_s}]; empty for FSDP",
       P::Workload, buckets},
      {"engine", "engine", "",
       "event_driven, or closed_form for model parallelism (not simulated event by event)",
       P::Workload, [](const RunResult& r) -> json { return step(r).engine; }},
      {"parallelism", "parallelism", "", "ddp or fsdp", P::Workload,
       [](const RunResult& r) -> json { return std::string(models::to_string(step(r).parallelism)); }},
      {"layout.tensor_parallel", "tensor_parallel", "count", "tensor-parallel degree", P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.tensor; }},
      {"layout.context_parallel", "context_parallel", "count", "context-parallel degree",
       P::Workload, [](const RunResult& r) -> json { return step(r).layout.context; }},
      {"layout.pipeline_parallel", "pipeline_parallel", "count", "pipeline stages", P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.pipeline; }},
      {"layout.data_parallel", "data_parallel", "count", "data-parallel degree", P::Workload,
       [](const RunResult& r) -> json { return step(r).data_parallel; }},
      {"layout.sequence_parallel", "sequence_parallel", "", "sequence parallelism on", P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.sequence_parallel; }},
      {"collectives", "", "mixed",
       "[{kind, unit, bytes, ready_s, start_s, end_s, count}]: FSDP's all-gathers and "
       "reduce-scatters per unit; closed form: one row per kind",
       P::Workload, collectives},
      {"pipeline_bubble_s", "pipeline_bubble_s", "s", "pipeline bubble per step", P::ModelParallel,
       [](const RunResult& r) -> json { return step(r).pipeline_bubble.seconds(); }},
      {"bubble_fraction", "bubble_fraction", "fraction", "bubble over the ideal pipeline time",
       P::ModelParallel, [](const RunResult& r) -> json { return step(r).bubble_fraction; }},
      {"tp_comm_s", "tp_comm_s", "s", "exposed tensor-parallel collectives per step",
       P::ModelParallel,
       [](const RunResult& r) -> json { return step(r).tensor_parallel_comm.seconds(); }},
      {"cp_exposed_s", "cp_exposed_s", "s", "context-parallel K/V ring time not hidden",
       P::ModelParallel,
       [](const RunResult& r) -> json { return step(r).context_parallel_exposed.seconds(); }},
      {"pp_p2p_s", "pp_p2p_s", "s", "activation sends on a stage's critical path",
       P::ModelParallel, [](const RunResult& r) -> json { return step(r).pipeline_p2p.seconds(); }},
      // The fabric.
      {"fabric.gpus", "gpus", "count", "GPUs", P::Always,
       [](const RunResult& r) -> json { return r.gpus; }},
      {"fabric.hosts", "hosts", "count", "hosts", P::Always,
       [](const RunResult& r) -> json { return r.hosts; }},
      {"fabric.switches", "switches", "count", "switches", P::Always,
       [](const RunResult& r) -> json { return r.switches; }},
      {"fabric.links", "links", "count", "cables", P::Always,
       [](const RunResult& r) -> json { return r.links; }},
      // Attached by `syncsim run`.
      {"estimate", "", "mixed",
       "the pre-run estimate {memory_bytes, wall_s, transfers, packet_hops, extrapolated_buckets, "
       "sim_time_s, memory_parts}",
       P::Estimate, [](const RunResult& r) -> json { return to_json(*r.estimate); }},
      {"peak_rss_bytes", "peak_rss_bytes", "B", "the process's measured peak resident set size",
       P::PeakRss, [](const RunResult& r) -> json { return *r.peak_rss_bytes; }},
  };
  return keys;
}

}  // namespace

std::span<const ResultKey> result_keys() { return table(); }

bool result_key_present(const ResultKey& key, const RunResult& r) {
  switch (key.presence) {
    case P::Always: return true;
    case P::Workload: return r.step.has_value();
    case P::ModelParallel: return r.step && r.step->layout.model_parallel();
    case P::ExtrapolatedBuckets: return r.step && !r.step->extrapolated_bucket_sizes.empty();
    case P::Report: return r.report.has_value();
    case P::Deadlock: return r.deadlock.detected;
    case P::Timeseries: return !r.timeseries_files.empty();
    case P::Estimate: return r.estimate.has_value();
    case P::PeakRss: return r.peak_rss_bytes.has_value();
  }
  return false;
}

const ResultKey* find_result_key(std::string_view path) {
  for (const ResultKey& k : table()) {
    if (k.path == path) return &k;
  }
  return nullptr;
}

const ResultKey* find_result_column(std::string_view column) {
  if (column.empty()) return nullptr;
  for (const ResultKey& k : table()) {
    if (k.column == column) return &k;
  }
  return nullptr;
}

std::vector<std::string> result_column_names() {
  std::vector<std::string> names;
  for (const ResultKey& k : table()) {
    if (!k.column.empty()) names.emplace_back(k.column);
  }
  return names;
}

std::string result_keys_markdown() {
  std::ostringstream o;
  o << "| key | unit | description |\n|---|---|---|\n";
  for (const ResultKey& k : table()) {
    o << "| `" << k.path << "` | " << (k.unit.empty() ? std::string_view("-") : k.unit) << " | "
      << k.description;
    if (!k.column.empty() && k.column != k.path) o << " (sweep column `" << k.column << "`)";
    o << " |\n";
  }
  return o.str();
}

nlohmann::json to_json(const RunResult& r) {
  json j = json::object();
  for (const ResultKey& k : table()) {
    if (!result_key_present(k, r)) continue;
    json* at = &j;
    std::string_view rest = k.path;
    for (auto dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
      at = &(*at)[std::string(rest.substr(0, dot))];
      rest.remove_prefix(dot + 1);
    }
    (*at)[std::string(rest)] = k.read(r);
  }
  return j;
}

}  // namespace syncsim::app
