// The text summary of a run. Every value it prints comes from the result schema
// (run/result_schema.hpp) through a `{path}` placeholder and is formatted by the key's unit, so
// the text cannot show a number the JSON does not have.
#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

#include "models/step_bound.hpp"
#include "run/result_schema.hpp"
#include "run/result_text.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

namespace {

std::string fmt_time(double s) {
  std::ostringstream o;
  o.precision(4);
  if (s < 1e-6) {
    o << s * 1e9 << " ns";
  } else if (s < 1e-3) {
    o << s * 1e6 << " us";
  } else if (s < 1.0) {
    o << s * 1e3 << " ms";
  } else {
    o << s << " s";
  }
  return o.str();
}

std::string fmt_bytes(int64_t b) {
  std::ostringstream o;
  o.precision(4);
  const auto d = static_cast<double>(b);
  if (b >= (int64_t{1} << 30)) {
    o << d / static_cast<double>(int64_t{1} << 30) << " GiB";
  } else if (b >= (int64_t{1} << 20)) {
    o << d / static_cast<double>(int64_t{1} << 20) << " MiB";
  } else if (b >= 1024) {
    o << d / 1024.0 << " KiB";
  } else {
    o << b << " B";
  }
  return o.str();
}

// One value by its unit; `style` "pct" prints a fraction as a percentage (3 digits), "int" a number
// without decimals, "len" an array's length.
std::string format_value(const ResultKey& key, const nlohmann::json& v, std::string_view style) {
  if (style == "len") return std::to_string(v.size());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (!v.is_number()) return v.dump();
  const double d = v.get<double>();
  std::ostringstream o;
  if (style == "pct") {
    o.precision(3);
    o << d * 100;
  } else if (style == "int") {
    o << static_cast<int64_t>(d);
  } else if (key.unit == "s") {
    return fmt_time(d);
  } else if (key.unit == "B") {
    return fmt_bytes(v.is_number_integer() ? v.get<int64_t>() : static_cast<int64_t>(d));
  } else if (v.is_number_integer()) {
    return v.dump();
  } else {
    if (key.unit == "GB/s") o.precision(4);
    o << d;
  }
  return o.str();
}

}  // namespace

std::string fill_result_template(const RunResult& r, std::string_view text) {
  std::string out;
  while (!text.empty()) {
    const auto open = text.find('{');
    if (open == std::string_view::npos) {
      out += text;
      break;
    }
    const auto close = text.find('}', open);
    if (close == std::string_view::npos) throw std::logic_error("unclosed { in a result template");
    out += text.substr(0, open);
    std::string_view name = text.substr(open + 1, close - open - 1);
    std::string_view style;
    if (const auto colon = name.find(':'); colon != std::string_view::npos) {
      style = name.substr(colon + 1);
      name = name.substr(0, colon);
    }
    const ResultKey* key = find_result_key(name);
    if (key == nullptr)
      throw std::logic_error("result template names no schema key: " + std::string(name));
    if (!result_key_present(*key, r)) {
      throw std::logic_error("result template reads an absent key: " + std::string(name));
    }
    out += format_value(*key, key->read(r), style);
    text.remove_prefix(close + 1);
  }
  return out;
}

std::string to_text(const RunResult& r) {
  std::ostringstream o;
  auto line = [&](std::string_view label, std::string_view text) {
    o << label;
    for (std::size_t i = label.size(); i < 11; ++i) o << ' ';
    o << fill_result_template(r, text) << "\n";
  };
  line("scenario", "{scenario}  (seed {seed}, fidelity {fidelity})");
  // A training step leads: it is what a workload scenario is run for.
  if (r.chakra) {
    line("step",
         "{step_time_s} (the last rank's finish), exposed communication {exposed_comm_s} "
         "on that rank, engine {engine}");
    line("chakra",
         "{chakra.ranks} ranks of {chakra.path}: {chakra.compute_nodes} compute nodes "
         "({chakra.retimed_nodes} re-timed), {chakra.collectives} collectives (busy {sync_s}), "
         "{chakra.point_to_point} send/receive pairs, {bytes_per_gpu} sent per GPU");
  } else if (!r.jobs.empty()) {
    // One line per job: its answer first, then how the shared fabric treated it.
    for (const JobRun& j : r.jobs) {
      std::ostringstream t;
      t << std::fixed << std::setprecision(1) << j.step_times_s.size() << " step"
        << (j.step_times_s.size() == 1 ? "" : "s") << " of " << fmt_time(j.step_time_s)
        << " (mean), MFU " << 100.0 * j.mfu << "%, exposed communication "
        << fmt_time(j.exposed_comm_s) << "; " << j.ranks << " GPUs on " << j.hosts.size()
        << " hosts, " << j.engine;
      if (j.slowdown_vs_alone) {
        t << std::setprecision(3) << "; alone " << fmt_time(*j.alone_step_time_s) << ", slowdown "
          << *j.slowdown_vs_alone << "x";
      }
      o << "job " << j.name << ": " << t.str() << "\n";
    }
  } else if (r.step) {
    const models::StepResult& st = *r.step;
    // The answer first: the step, its MFU, what is left exposed and what bounds it.
    const models::StepShares shares = models::step_shares(st);
    const std::string_view bound = models::bound_by(shares);
    std::ostringstream answer;
    answer << "{step_time_s}, MFU {mfu:pct}%, exposed communication {exposed_comm_s} ("
           << std::fixed << std::setprecision(1) << 100.0 * shares.exposed_communication
           << "% of the step): "
           << (bound == "pipeline_bubble" ? std::string("bound by the pipeline bubble")
                                          : std::string(bound) + "-bound");
    if (st.engine == "closed_form") {
      line("step", answer.str() +
                       "  (closed form only: model parallelism is not simulated event by event)");
    } else {
      line("step", answer.str() + "  (closed form {closed_form_step_time_s})");
    }
    if (!models::fits_gpu_memory(st)) {
      line("memory", "{memory_per_gpu_bytes} per GPU does not fit the GPU's {gpu_memory_bytes}");
    }
    line("layout",
         std::string(
             "{parallelism}, TP {layout.tensor_parallel} x CP {layout.context_parallel} x PP "
             "{layout.pipeline_parallel} x DP {layout.data_parallel}") +
             (st.layout.expert > 1 ? " (EP {layout.expert_parallel} within DP x CP)" : "") +
             (st.layout.virtual_pipeline > 1 ? " (VP {layout.virtual_pipeline}, interleaved 1F1B)"
                                             : "") +
             (st.layout.sequence_parallel ? " (sequence parallel)" : "") +
             (st.layout.tp_comm_overlap ? " (TP comm overlap)" : "") +
             (st.layout.distributed_optimizer ? " (distributed optimizer)" : "") +
             // HSDP splits the DP x CP ranks that FSDP shards over.
             (st.fsdp_shard_degree > 0 &&
                      st.fsdp_shard_degree < st.data_parallel * std::max(1u, st.layout.context)
                  ? " (HSDP: shard {layout.fsdp_shard_degree} x replicate " +
                        std::to_string(st.data_parallel * std::max(1u, st.layout.context) /
                                       st.fsdp_shard_degree) +
                        ")"
                  : "") +
             ", engine {engine}");
    if (st.layout.model_parallel()) {
      const uint64_t tc = uint64_t{st.layout.tensor} * st.layout.context;
      line("ranks", "{layout.rank_order} (Megatron order, TP innermost): TP groups of " +
                        std::to_string(st.layout.tensor) + " consecutive ranks, DP peers " +
                        std::to_string(tc) + " apart, pipeline stages " +
                        std::to_string(tc * st.data_parallel) +
                        " apart; rank r on the fabric's r-th GPU");
      if (st.layout.expert > 1) {
        const uint64_t ep = st.layout.expert;
        const uint64_t tp = std::max<uint64_t>(1, st.layout.tensor);
        // DP x CP ranks are TP apart (models/expert_parallel.hpp): EP groups join ranks of the
        // same TP rank.
        const std::string members =
            tp == 1 ? " consecutive ranks" : " ranks " + std::to_string(tp) + " apart";
        line("", "EP groups of " + std::to_string(ep) + members +
                     " (carved out of DP x CP), expert-data-parallel peers " +
                     std::to_string(ep * tp) + " apart");
      }
      line("parallel",
           "TP collectives {tp_comm_s}, CP exposed {cp_exposed_s}, PP sends {pp_p2p_s}, "
           "pipeline bubble {pipeline_bubble_s} ({bubble_fraction:pct}% of ideal)");
      if (st.layout.expert > 1) {
        std::ostringstream share;
        share.precision(1);
        share << std::fixed << 100.0 * st.expert_all_to_all.seconds() / st.step.seconds();
        line("", "EP all-to-all {ep_all_to_all_s} exposed (" + share.str() +
                     "% of the step; dispatch + combine, not overlapped)");
      }
    }
    line("breakdown",
         "forward {forward_s}, backward {backward_s}, exposed communication {exposed_comm_s} "
         "(tail {tail_s}), optimizer {optimizer_s}");
    if (st.parallelism == models::DataParallelism::Fsdp && st.engine == "closed_form") {
      line("sync",
           "FSDP unit all-gathers and reduce-scatters busy {sync_s}, {bytes_per_gpu} sent per GPU, "
           "{memory_per_gpu_bytes} memory per GPU");
    } else if (st.parallelism == models::DataParallelism::Fsdp) {
      line("sync", std::string("{collectives:len} all-gathers and reduce-scatters") +
                       (st.fsdp_shard_degree < st.data_parallel ? " (and HSDP all-reduces)" : "") +
                       ", busy {sync_s}, {bytes_per_gpu} sent per GPU, {memory_per_gpu_bytes} "
                       "memory per GPU");
    } else {
      line("sync", "{buckets:len} buckets, all-reduce busy {sync_s}, {bytes_per_gpu} sent per GPU");
      if (r.bucket_allreduce_model != "simulated")
        line("", "bucket all-reduces {bucket_allreduce_model}");
    }
    line("mfu", "{mfu:pct}%  (hfu {hfu:pct}%), {tokens_per_s:int} tokens/s");
    line("batch",
         "{global_batch} sequences ({tokens_per_step:int} tokens) per step, "
         "grad_accumulation {layout.grad_accumulation}");
  }
  line("fabric",
       "{fabric.gpus} GPUs on {fabric.hosts} hosts, {fabric.switches} switches, {fabric.links} "
       "links");
  line("simulated", "{sim_time_s} in {wall_s} wall, {events} events, {packet_hops} packet hops");
  if (r.partitions > 1) line("", "fabric run as {partitions} partitions in {windows} windows");
  if (!r.thread_scaling.empty()) {
    // Values, not keys: the list has no template field of its own.
    std::ostringstream bounds;
    bounds << std::setprecision(3);
    for (std::size_t i = 0; i < r.thread_scaling.size(); ++i) {
      bounds << (i == 0 ? "" : ", ") << r.thread_scaling[i].threads << ": "
             << r.thread_scaling[i].speedup_bound << "x";
    }
    o << std::string(11, ' ') << "threads would speed it up at most (its windows' load) "
      << bounds.str() << "\n";
  }
  // Message lines describe `traffic:`; a workload-only run has none to report.
  const bool has_messages = r.messages > 0;
  if (has_messages) {
    line("messages", "{messages.completed} of {messages.count} completed");
    line("fct",
         "min {messages.fct_s.min}  mean {messages.fct_s.mean}  p50 {messages.fct_s.p50}  p99 "
         "{messages.fct_s.p99}  max {messages.fct_s.max}");
  }
  if (has_messages || r.counters.bytes_injected > 0)
    line("bytes",
         "injected {bytes_injected}, delivered {bytes_delivered}, dropped {bytes_dropped}");
  if (has_messages) line("queues", "deepest egress queue {max_queue_bytes}");
  uint64_t dropped = 0;
  for (const auto& d : r.drops) dropped += d.second;
  if (dropped > 0) {
    o << "drops     ";
    for (const auto& [reason, packets] : r.drops) {
      if (packets > 0) o << " " << reason << " " << packets;
    }
    o << " (packets)\n";
  }
  if (r.pause_frames > 0 || r.ecn_marks > 0) {
    line("pfc",
         "{pfc.pause_frames} pause frames, {pfc.resume_frames} resumes, paused {pfc.paused_time_s} "
         "in "
         "total over ports");
    for (std::size_t i = 0; i < r.paused_ports.size() && i < 5; ++i) {
      o << "           " << r.paused_ports[i].first << " paused "
        << fmt_time(r.paused_ports[i].second) << "\n";
    }
    line("ecn", "{ecn_marks} packets marked");
  }
  if (r.cnps > 0)
    line("dcqcn",
         "{cnps} CNPs, {dcqcn_rate_cuts} rate cuts; Jain index of message rates {jain_index}");
  if (r.report) {
    line("all_reduce",
         "{allreduce_small_bytes} over {report_ranks} ranks {allreduce_small_latency_s}; "
         "{allreduce_large_bytes} {allreduce_large_time_s}, busbw {allreduce_large_busbw_GBps} "
         "GB/s  (report:, idle fabric)");
  }
  if (r.retransmitted_packets > 0 || r.timeouts > 0 || r.transport != "roce") {
    line("transport",
         "{transport}: {retransmitted_packets} packets ({retransmitted_bytes}) retransmitted, "
         "{timeouts} timeouts, {fast_retransmits} fast retransmits, {naks} NAKs, {acks} ACKs");
  }
  for (const FaultOutcome& f : r.faults) {
    o << "fault      " << f.kind << " " << f.target << " at " << fmt_time(f.at_s);
    if (f.until_s >= 0) o << " until " << fmt_time(f.until_s);
    if (f.kind == "link_degraded") o << " (" << f.fraction * 100 << " %)";
    if (f.kind == "straggler") o << " (x" << f.slowdown << ")";
    o << ": " << f.bytes_lost << " B lost, " << f.flows_rerouted << " flows rerouted, "
      << f.retransmitted_bytes << " B resent";
    if (f.buckets_during > 0) {
      o << "; buckets " << f.bucket_slowdown_during << "x idle-fabric time";
      if (f.bucket_slowdown_before > 0) o << " (before: " << f.bucket_slowdown_before << "x)";
    }
    for (const FaultOutcome::JobCost& c : f.jobs) {
      if (c.steps_during == 0) continue;
      o << "; job " << c.job << " step " << fmt_time(c.step_during_s);
      if (c.step_before_s > 0) o << " (before: " << fmt_time(c.step_before_s) << ")";
    }
    o << "\n";
  }
  for (const std::string& w : r.warnings) o << "warning    " << w << "\n";
  if (r.messages_completed < r.messages) {
    o << "warning    " << (r.messages - r.messages_completed)
      << " messages never completed (packets were dropped on a class that does not retransmit:"
         " lossless RoCE, or fabric.transport.gbn.enabled false)\n";
  }
  return o.str();
}

}  // namespace syncsim::app
