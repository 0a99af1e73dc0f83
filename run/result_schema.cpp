#include "run/result_schema.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "models/step_bound.hpp"
#include "run/result_lists.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

namespace {

using json = nlohmann::json;
using P = ResultPresence;

// The step of a workload run; only read where the key's presence says there is one.
const models::StepResult& step(const RunResult& r) { return *r.step; }
const ReportedCollectives& report(const RunResult& r) { return *r.report; }

using result_lists::buckets;
using result_lists::collectives;
using result_lists::drops;
using result_lists::flow_rate_flows;
using result_lists::flow_rate_window;
using result_lists::jain_by_traffic;
using result_lists::link_tiers;
using result_lists::rank_timeline;
using result_lists::rc_recovered;
using result_lists::top_paused_ports;

// The table, in the order of docs/cli.md. Paths and values are a contract (scripts read them).
const std::vector<ResultKey>& table() {
  static const std::vector<ResultKey> keys = [] {
    std::vector<ResultKey> base = {
      {"scenario", "scenario", "-", "scenario name (`name:`)", P::Always,
       [](const RunResult& r) -> json { return r.scenario; }},
      {"seed", "seed", "-", "seed of the run (the scenario's, or `--seed`)", P::Always,
       [](const RunResult& r) -> json { return r.seed; }},
      {"fidelity", "fidelity", "-", "network backend: `packet`, `flow` or `analytic`", P::Always,
       [](const RunResult& r) -> json { return fidelity_name(r.fidelity); }},
      {"sim_time_s", "sim_time_s", "s", "simulated time when the run ended", P::Always,
       [](const RunResult& r) -> json { return r.sim_time_s; }},
      {"wall_s", "wall_s", "s", "wall time of the simulation (`report:` runs not counted)",
       P::Always, [](const RunResult& r) -> json { return r.wall_s; }},
      {"peak_rss_bytes", "peak_rss_bytes", "B", "measured peak resident memory of the process",
       P::PeakRss, [](const RunResult& r) -> json { return *r.peak_rss_bytes; }},
      {"events", "events", "count", "events executed (`report:` runs not counted)", P::Always,
       [](const RunResult& r) -> json { return r.events; }},
      {"packet_hops", "packet_hops", "count", "packet transmissions over links (packet fidelity)",
       P::Always, [](const RunResult& r) -> json { return r.counters.packet_hops; }},
      {"bytes_injected", "bytes_injected", "B",
       "payload bytes sent into the network, retransmissions included", P::Always,
       [](const RunResult& r) -> json { return r.counters.bytes_injected; }},
      {"bytes_delivered", "bytes_delivered", "B", "payload bytes delivered to their destinations",
       P::Always, [](const RunResult& r) -> json { return r.counters.bytes_delivered; }},
      {"bytes_dropped", "bytes_dropped", "B", "payload bytes dropped (any reason)", P::Always,
       [](const RunResult& r) -> json { return r.counters.bytes_dropped; }},
      {"bytes_discarded", "bytes_discarded", "B",
       "payload received out of order or twice and discarded (retransmitting transports)",
       P::Always, [](const RunResult& r) -> json { return r.bytes_discarded; }},
      {"messages.count", "messages", "count", "messages of the scenario's `traffic:`", P::Always,
       [](const RunResult& r) -> json { return r.messages; }},
      {"messages.completed", "messages_completed", "count", "messages that completed", P::Always,
       [](const RunResult& r) -> json { return r.messages_completed; }},
      {"messages.fct_s.min", "fct_min_s", "s", "shortest flow completion time", P::Always,
       [](const RunResult& r) -> json { return r.fct.min_s; }},
      {"messages.fct_s.mean", "fct_mean_s", "s", "mean flow completion time", P::Always,
       [](const RunResult& r) -> json { return r.fct.mean_s; }},
      {"messages.fct_s.p50", "fct_p50_s", "s", "median flow completion time", P::Always,
       [](const RunResult& r) -> json { return r.fct.p50_s; }},
      {"messages.fct_s.p99", "fct_p99_s", "s", "99th-percentile flow completion time", P::Always,
       [](const RunResult& r) -> json { return r.fct.p99_s; }},
      {"messages.fct_s.max", "fct_max_s", "s", "longest flow completion time", P::Always,
       [](const RunResult& r) -> json { return r.fct.max_s; }},
      {"max_queue_bytes", "max_queue_bytes", "B", "deepest egress queue seen, in wire bytes",
       P::Always, [](const RunResult& r) -> json { return r.counters.max_queue_bytes; }},
      {"drops", "", "count", "packets dropped, one key per reason (below)", P::Always, drops},
      {"drops.buffer_full", "", "count", "packets tail-dropped because the switch buffer was full",
       P::Always, nullptr},
      {"drops.buffer_full_packets", "", "count",
       "alias of `drops.buffer_full`, kept for old scripts", P::Always, nullptr},
      {"drops.no_route", "", "count", "packets without a route", P::Always, nullptr},
      {"drops.lossless_headroom_exceeded", "", "count",
       "packets of a lossless priority dropped because the PFC headroom overflowed", P::Always,
       nullptr},
      {"drops.link_loss", "", "count",
       "packets lost at random on a link (`fabric.impairments.loss`)", P::Always, nullptr},
      {"drops.pfc_watchdog", "", "count", "packets flushed by the PFC watchdog (`action: drop`)",
       P::Always, nullptr},
      {"drops.nic_rx_overflow", "", "count",
       "packets that did not fit a NIC's receive buffer (receiver-side PFC)", P::Always, nullptr},
      {"drops.link_down", "", "count",
       "packets lost on a link that went down, or routed onto one before routing converged "
       "(faults)",
       P::Always, nullptr},
      {"pfc.pause_frames", "pause_frames", "count", "PAUSE frames sent by switches", P::Always,
       [](const RunResult& r) -> json { return r.pause_frames; }},
      {"pfc.resume_frames", "resume_frames", "count", "RESUME frames sent by switches", P::Always,
       [](const RunResult& r) -> json { return r.resume_frames; }},
      {"pfc.paused_time_s", "paused_time_s", "s",
       "paused time summed over egress ports and priorities", P::Always,
       [](const RunResult& r) -> json { return r.paused_time_s; }},
      {"pfc.top_paused_ports", "", "-",
       "the 5 most paused egress ports, most paused first: a list of objects (below)", P::Always,
       top_paused_ports},
      {"pfc.top_paused_ports[].port", "", "-",
       "one of the 5 most paused egress ports, `owner->peer`", P::Always, nullptr},
      {"pfc.top_paused_ports[].paused_time_s", "", "s", "that port's paused time", P::Always,
       nullptr},
      {"pfc.nic_pause_frames", "nic_pause_frames", "count",
       "PAUSE frames sent by NICs (receiver-side PFC; not in `pfc.pause_frames`)", P::Always,
       [](const RunResult& r) -> json { return r.nic_pause_frames; }},
      {"pfc.max_nic_rx_bytes", "max_nic_rx_bytes", "B",
       "fullest NIC receive buffer (receiver-side PFC)", P::Always,
       [](const RunResult& r) -> json { return r.max_nic_rx_bytes; }},
      {"ecn_marks", "ecn_marks", "count",
       "data packets ECN-marked by switches, each counted once (where first marked)", P::Always,
       [](const RunResult& r) -> json { return r.ecn_marks; }},
      {"ecn_hop_marks", "ecn_hop_marks", "count",
       "RED marking decisions summed over hops: a packet marked at two switches counts twice",
       P::Always, [](const RunResult& r) -> json { return r.ecn_hop_marks; }},
      {"queue.port", "queue_port", "-",
       "the switch egress queue (port) with the highest time-averaged depth (with `--counters`; "
       "sweeps)",
       P::PortCounters, [](const RunResult& r) -> json { return r.busiest_queue_port; }},
      {"queue.priority", "queue_priority", "-", "its priority", P::PortCounters,
       [](const RunResult& r) -> json { return r.busiest_queue_priority; }},
      {"queue.mean_bytes", "queue_mean_bytes", "B",
       "its depth (wire bytes waiting), time average over the run", P::PortCounters,
       [](const RunResult& r) -> json { return r.queue_mean_bytes; }},
      {"queue.p99_bytes", "queue_p99_bytes", "B",
       "its time-weighted 99th-percentile depth (quarter-octave histogram, within ~19%)",
       P::PortCounters, [](const RunResult& r) -> json { return r.queue_p99_bytes; }},
      {"cnps", "cnps", "count", "DCQCN congestion notification packets sent", P::Always,
       [](const RunResult& r) -> json { return r.cnps; }},
      {"dcqcn_rate_cuts", "dcqcn_rate_cuts", "count", "DCQCN rate decreases at the senders",
       P::Always, [](const RunResult& r) -> json { return r.rate_cuts; }},
      {"jain_index", "jain_index", "-",
       "Jain's fairness index of completed messages' average rates (size / FCT), every transfer "
       "of the run together (all traffic entries, a workload's too); per entry: "
       "`jain_by_traffic`",
       P::Always, [](const RunResult& r) -> json { return r.jain_index; }},
      {"jain_by_traffic", "", "-",
       "one object per `traffic:` entry, in order: fairness among that entry's messages (below)",
       P::Always, jain_by_traffic},
      {"jain_by_traffic[].entry", "", "-", "index of the entry in `traffic:`", P::Always, nullptr},
      {"jain_by_traffic[].pattern", "", "-", "its pattern (`messages`, `incast`, ...)", P::Always,
       nullptr},
      {"jain_by_traffic[].messages", "", "count", "its messages", P::Always, nullptr},
      {"jain_by_traffic[].completed", "", "count", "those that completed", P::Always, nullptr},
      {"jain_by_traffic[].jain_index", "", "-",
       "Jain's index of its completed messages' size / FCT (0 when none completed)", P::Always,
       nullptr},
      {"flow_rates.window", "", "-",
       "`each flow's own [start, finish]`, or an object with the window of "
       "`observe.rate_window`",
       P::Always, flow_rate_window},
      {"flow_rates.window.start_s", "", "s", "start of `observe.rate_window` (when given)",
       P::Always, nullptr},
      {"flow_rates.window.end_s", "", "s", "end of `observe.rate_window` (when given)", P::Always,
       nullptr},
      {"flow_rates.count", "flow_rates_count", "count",
       "flows counted, completed or not (packet fidelity)", P::Always,
       [](const RunResult& r) -> json { return r.flow_rates.flows.size(); }},
      {"flow_rates.min_bps", "flow_rates_min_bps", "bit/s",
       "lowest per-flow mean payload throughput over the window", P::Always,
       [](const RunResult& r) -> json { return r.flow_rates.min_bps; }},
      {"flow_rates.max_bps", "flow_rates_max_bps", "bit/s",
       "highest per-flow mean payload throughput", P::Always,
       [](const RunResult& r) -> json { return r.flow_rates.max_bps; }},
      {"flow_rates.mean_bps", "flow_rates_mean_bps", "bit/s", "mean of the per-flow throughputs",
       P::Always, [](const RunResult& r) -> json { return r.flow_rates.mean_bps; }},
      {"flow_rates.jain_index", "flow_rates_jain_index", "-", "Jain's index over these flows",
       P::Always, [](const RunResult& r) -> json { return r.flow_rates.jain_index; }},
      {"flow_rates.flows", "", "-", "one object per flow (below; packet fidelity)", P::Always,
       flow_rate_flows},
      {"flow_rates.flows[].src", "", "-", "source GPU rank of a flow", P::Always, nullptr},
      {"flow_rates.flows[].dst", "", "-", "destination GPU rank", P::Always, nullptr},
      {"flow_rates.flows[].bps", "", "bit/s", "its mean payload throughput over the window",
       P::Always, nullptr},
      {"flow_rates.flows[].start_s", "", "s", "when it started", P::Always, nullptr},
      {"flow_rates.flows[].finish_s", "", "s", "when it finished (-1: not completed)", P::Always,
       nullptr},
      {"flow_rates.flows[].completed", "", "-",
       "whether it completed; one that did not is listed with its rate from its start to the end "
       "of the run (or over the window)",
       P::Always, nullptr},
      {"flow_rates.flows[].path", "", "-",
       "the switches it crosses, in order (its ECMP path; an NVLink flow names the NVSwitch)",
       P::Always, nullptr},
      {"flow_rates.flows[].cnps", "", "count", "CNPs its destination sent for it (0 without DCQCN)",
       P::Always, nullptr},
      {"flow_rates.flows[].rate_cuts", "", "count",
       "DCQCN rate cuts those CNPs caused at its queue pair (0 without DCQCN)", P::Always, nullptr},
      {"flow_rates.flows[].min_rate_bps", "", "bit/s",
       "the lowest rate its queue pair was at while it ran: at its start or after one of its own "
       "cuts (null without DCQCN)",
       P::Always, nullptr},
      {"transport", "transport", "-", "inter-host transport: `roce`, `roce_host_staged` or `tcp`",
       P::Always, [](const RunResult& r) -> json { return r.transport; }},
      {"retransmitted_packets", "retransmitted_packets", "count",
       "data packets sent again (go-back-N, TCP)", P::Always,
       [](const RunResult& r) -> json { return r.retransmitted_packets; }},
      {"retransmitted_bytes", "retransmitted_bytes", "B", "payload bytes sent again", P::Always,
       [](const RunResult& r) -> json { return r.retransmitted_bytes; }},
      {"out_of_order_packets", "out_of_order_packets", "count",
       "data packets that reached a go-back-N receiver ahead of a missing PSN (reordered by load "
       "balancing, or behind a loss): discarded, or placed with go_back_n.out_of_order",
       P::Always, [](const RunResult& r) -> json { return r.out_of_order_packets; }},
      {"timeouts", "timeouts", "count", "retransmission timeouts (go-back-N timer, TCP RTO)",
       P::Always, [](const RunResult& r) -> json { return r.timeouts; }},
      {"fast_retransmits", "fast_retransmits", "count", "TCP fast retransmits (3 duplicate ACKs)",
       P::Always, [](const RunResult& r) -> json { return r.fast_retransmits; }},
      {"rc_recoveries", "rc_recoveries", "count",
       "RC recoveries on lossless classes (go-back-N after a lost packet)", P::Always,
       [](const RunResult& r) -> json { return r.rc_recoveries; }},
      {"rc_recovery_time_s", "rc_recovery_time_s", "s",
       "RC recoveries' summed time, from the loss to the arrival of every packet lost meanwhile",
       P::Always, [](const RunResult& r) -> json { return r.rc_recovery_time_s; }},
      {"rc_recovery_time_max_s", "rc_recovery_time_max_s", "s", "the longest RC recovery",
       P::Always, [](const RunResult& r) -> json { return r.rc_recovery_time_max_s; }},
      {"rc_retry_exceeded", "rc_retry_exceeded", "count",
       "lossless queue pairs failed after the RC retry count (their messages never complete)",
       P::Always, [](const RunResult& r) -> json { return r.rc_retry_exceeded; }},
      {"rc_recovered", "", "-",
       "the 10 messages with the longest RC recovery, longest first (below)", P::Always,
       rc_recovered},
      {"rc_recovered[].src", "", "-", "source of a recovered message", P::Always, nullptr},
      {"rc_recovered[].dst", "", "-", "its destination", P::Always, nullptr},
      {"rc_recovered[].start_s", "", "s", "when it started", P::Always, nullptr},
      {"rc_recovered[].recovery_s", "", "s", "its time in RC recovery", P::Always, nullptr},
      {"rc_recovered[].finish_s", "", "s", "when it finished (-1: not completed)", P::Always,
       nullptr},
      {"naks", "naks", "count", "go-back-N NAKs sent", P::Always,
       [](const RunResult& r) -> json { return r.naks; }},
      {"acks", "acks", "count", "acknowledgements sent (go-back-N, TCP)", P::Always,
       [](const RunResult& r) -> json { return r.acks; }},
      {"lossless_packets_lost", "lossless_packets_lost", "count",
       "packets of lossless (PFC) classes lost on links that went down (faults)", P::Always,
       [](const RunResult& r) -> json { return r.counters.lossless_packets_lost; }},
      {"lossless_bytes_lost", "lossless_bytes_lost", "B", "their payload", P::Always,
       [](const RunResult& r) -> json { return r.counters.lossless_bytes_lost; }},
      {"route_convergences", "route_convergences", "count",
       "routing repairs after links went down or up (faults)", P::Always,
       [](const RunResult& r) -> json { return r.counters.route_convergences; }},
      {"flows_rerouted", "flows_rerouted", "count",
       "flows whose route changed at a routing convergence (summed over convergences)", P::Always,
       [](const RunResult& r) -> json { return r.counters.flows_rerouted; }},
      {"flows_unroutable", "flows_unroutable", "count",
       "times a flow was left without any route (it waits for one)", P::Always,
       [](const RunResult& r) -> json { return r.counters.flows_unroutable; }},
      {"deadlock.detected", "deadlock_detected", "-", "true when a PFC deadlock stopped the run",
       P::Always, [](const RunResult& r) -> json { return r.deadlock.detected; }},
      {"deadlock.at_s", "deadlock_at_s", "s",
       "when the cycle of paused queues closed (when detected)", P::Deadlock,
       [](const RunResult& r) -> json { return r.deadlock.at_s; }},
      {"deadlock.detected_at_s", "deadlock_detected_at_s", "s",
       "when it was detected and the run stopped (when detected)", P::Deadlock,
       [](const RunResult& r) -> json { return r.deadlock.detected_at_s; }},
      {"deadlock.priority", "deadlock_priority", "-",
       "priority of the deadlocked queues (when detected)", P::Deadlock,
       [](const RunResult& r) -> json { return r.deadlock.priority; }},
      {"deadlock.ports", "", "-",
       "the cycle, as a list of `owner->peer` egress ports (when detected)", P::Deadlock,
       [](const RunResult& r) -> json { return r.deadlock.ports; }},
      {"warnings", "", "-",
       "list of configuration checks and model warnings, also printed by the text output",
       P::Always, [](const RunResult& r) -> json { return r.warnings; }},
      {"timeseries_files", "", "-", "the CSV files written (with `--timeseries`)", P::Timeseries,
       [](const RunResult& r) -> json { return r.timeseries_files; }},
      {"fabric.gpus", "gpus", "count", "GPUs of the fabric", P::Always,
       [](const RunResult& r) -> json { return r.gpus; }},
      {"fabric.hosts", "hosts", "count", "hosts", P::Always,
       [](const RunResult& r) -> json { return r.hosts; }},
      {"fabric.switches", "switches", "count", "switches (leaves, spines, cores, NVSwitches)",
       P::Always, [](const RunResult& r) -> json { return r.switches; }},
      {"fabric.links", "links", "count", "full-duplex links", P::Always,
       [](const RunResult& r) -> json { return r.links; }},
      {"link_tiers", "", "-",
       "one object per link class (host, nvlink, fabric, core), payload routed over its ports "
       "(below)",
       P::Always, link_tiers},
      {"link_tiers[].tier", "", "-", "the link class name", P::Always, nullptr},
      {"link_tiers[].links", "", "count", "its full-duplex cables (two egress ports each)",
       P::Always, nullptr},
      {"link_tiers[].bandwidth_bps", "", "bit/s", "each port's line rate, each direction",
       P::Always, nullptr},
      {"link_tiers[].bytes", "", "B",
       "payload bytes routed over its ports (counted when a transfer starts)", P::Always, nullptr},
      {"link_tiers[].max_port_bytes", "", "B", "the busiest port's payload bytes", P::Always,
       nullptr},
      {"link_tiers[].mean_utilisation", "", "-",
       "bytes x 8 / (bandwidth x ports x sim_time_s): payload only, so a saturated port reads "
       "about 0.98",
       P::Always, nullptr},
      {"link_tiers[].max_utilisation", "", "-", "the busiest port's utilisation", P::Always,
       nullptr},
      {"nccl.channels", "nccl_channels", "count",
       "NCCL channels of the step's collectives (workload)", P::Workload,
       [](const RunResult& r) -> json { return r.step_channels.channels; }},
      {"nccl.channels_requested", "", "-",
       "whether collective.channels set them (else NCCL's own count; workload)", P::Workload,
       [](const RunResult& r) -> json { return r.step_channels.requested; }},
      {"nccl.nics_per_node", "nccl_nics_per_node", "count",
       "NICs per node the step's channels use (workload; 0 inside one host)", P::Workload,
       [](const RunResult& r) -> json { return r.step_channels.nics_used; }},
      {"step_time_s", "step_time_s", "s", "simulated training step (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).step.seconds(); }},
      {"forward_s", "forward_s", "s", "forward compute per step (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).forward.seconds(); }},
      {"backward_s", "backward_s", "s", "backward compute per step (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).backward.seconds(); }},
      {"optimizer_s", "optimizer_s", "s", "optimizer time (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).optimizer.seconds(); }},
      {"sync_s", "sync_s", "s", "gradient synchronisation busy time (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).sync.seconds(); }},
      {"exposed_comm_s", "exposed_comm_s", "s", "step time not covered by compute (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).exposed_comm.seconds(); }},
      {"tail_s", "tail_s", "s", "communication after backward ends (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).tail.seconds(); }},
      {"mfu", "mfu", "-", "model FLOPs utilisation, 0..1 (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).mfu; }},
      {"hfu", "hfu", "-", "hardware FLOPs utilisation, recomputation included (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).hfu; }},
      {"tokens_per_s", "tokens_per_s", "tokens/s", "training throughput (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).tokens_per_s; }},
      {"global_batch", "global_batch", "count",
       "sequences per optimizer step: micro_batch x grad_accumulation x DP (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).global_batch; }},
      {"tokens_per_step", "tokens_per_step", "tokens", "global_batch x sequence (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).tokens_per_step; }},
      {"closed_form_step_time_s", "closed_form_step_time_s", "s",
       "the closed-form step beside the simulated one (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).closed_form_step.seconds(); }},
      {"bytes_per_gpu", "bytes_per_gpu", "B", "bytes each GPU sends per step (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).bytes_per_gpu; }},
      {"memory_per_gpu_bytes", "memory_per_gpu_bytes", "B",
       "estimated GPU memory per GPU (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).memory_per_gpu_bytes; }},
      {"communication_memory_bytes", "communication_memory_bytes", "B",
       "of memory_per_gpu_bytes: NCCL's buffers and DDP's gradient buckets (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).communication_memory_bytes; }},
      {"gpu_memory_bytes", "gpu_memory_bytes", "B", "the GPU's own memory (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).gpu_memory_bytes; }},
      {"fits_memory", "fits_memory", "-",
       "memory_per_gpu_bytes <= gpu_memory_bytes: the layout fits the GPU (workload)",
       P::Workload,
       [](const RunResult& r) -> json { return models::fits_gpu_memory(step(r)); }},
      {"bound_by", "bound_by", "-",
       "the largest share of the step: compute, communication (exposed), pipeline_bubble or "
       "optimizer (workload)",
       P::Workload,
       [](const RunResult& r) -> json {
         return std::string(models::bound_by(models::step_shares(step(r))));
       }},
      {"step_shares", "", "-",
       "shares of the step, summing to 1: compute, exposed_communication, pipeline_bubble, "
       "optimizer (workload)",
       P::Workload,
       [](const RunResult& r) -> json {
         const models::StepShares sh = models::step_shares(step(r));
         return json{{"compute", sh.compute},
                     {"exposed_communication", sh.exposed_communication},
                     {"pipeline_bubble", sh.pipeline_bubble},
                     {"optimizer", sh.optimizer}};
       }},
      {"step_shares.compute", "", "-", "forward and backward work (workload)",
       P::Workload, nullptr},
      {"step_shares.exposed_communication", "", "-",
       "communication not hidden behind compute (workload)", P::Workload, nullptr},
      {"step_shares.pipeline_bubble", "", "-", "idle pipeline slots (workload)", P::Workload,
       nullptr},
      {"step_shares.optimizer", "", "-", "the optimizer step (workload)", P::Workload, nullptr},
      {"bucket_allreduce_model", "bucket_allreduce_model", "-",
       "`simulated`, or the calibration profile that timed the DDP buckets (workload)", P::Workload,
       [](const RunResult& r) -> json { return r.bucket_allreduce_model; }},
      {"bucket_timing.method", "", "-",
       "how big buckets were timed, when any was extrapolated (workload)", P::ExtrapolatedBuckets,
       [](const RunResult&) -> json {
         return "linear in pipeline chunks from idle runs of k1 = 4 ceil(log2 ranks) and 2 k1 "
                "chunks (LL / LL128: k1, 2 k1, 4 k1, ... until the last two slopes agree within "
                "0.5%)";
       }},
      {"bucket_timing.extrapolated_bucket_bytes", "", "B",
       "list of the extrapolated bucket sizes (workload)", P::ExtrapolatedBuckets,
       [](const RunResult& r) -> json { return step(r).extrapolated_bucket_sizes; }},
      {"buckets", "", "-", "one object per DDP bucket (below; workload)", P::Workload, buckets},
      {"buckets[].bytes", "", "B", "DDP bucket size (workload; empty for FSDP and the closed form)",
       P::Workload, nullptr},
      {"buckets[].protocol", "", "-",
       "the NCCL protocol its all-reduce ran (LL, LL128, Simple): NCCL's choice for its size, or "
       "the pinned collective.protocol",
       P::Workload, nullptr},
      {"buckets[].ready_s", "", "s", "when every rank had the bucket ready", P::Workload, nullptr},
      {"buckets[].start_s", "", "s", "when its all-reduce started", P::Workload, nullptr},
      {"buckets[].end_s", "", "s", "when its all-reduce ended", P::Workload, nullptr},
      {"rank_timeline", "", "-",
       "the first 8 ranks' last backward pass, one object per rank (below; workload); before "
       "it, from 0, the forward passes and earlier micro-batches; the last optimizer_s of the "
       "step is the optimizer",
       P::Workload, rank_timeline},
      {"rank_timeline[].rank", "", "-", "the GPU rank", P::Workload, nullptr},
      {"rank_timeline[].backward_start_s", "", "s", "when its last backward pass started",
       P::Workload, nullptr},
      {"rank_timeline[].backward_end_s", "", "s", "when it ended", P::Workload,
       nullptr},
      {"engine", "engine", "-", "`event_driven`, `closed_form` for model parallelism, `chakra_replay` (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).engine; }},
      {"parallelism", "parallelism", "-", "`ddp` or `fsdp` (workload)", P::Workload,
       [](const RunResult& r) -> json {
         return std::string(models::to_string(step(r).parallelism));
       }},
      {"layout.tensor_parallel", "tensor_parallel", "count", "TP degree (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.tensor; }},
      {"layout.context_parallel", "context_parallel", "count", "CP degree (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.context; }},
      {"layout.pipeline_parallel", "pipeline_parallel", "count", "PP degree (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).layout.pipeline; }},
      {"layout.expert_parallel", "expert_parallel", "count",
       "EP degree: routed experts split over EP ranks carved out of DP x CP (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.expert; }},
      {"layout.virtual_pipeline", "virtual_pipeline", "count",
       "model chunks per pipeline rank, interleaved 1F1B (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.virtual_pipeline; }},
      {"layout.tp_comm_overlap", "tp_comm_overlap", "-",
       "TP all-gathers / reduce-scatters pipelined with their GEMMs (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.tp_comm_overlap; }},
      {"layout.distributed_optimizer", "distributed_optimizer", "-",
       "Megatron's distributed optimizer: gradients reduce-scattered, parameters all-gathered, "
       "optimizer state sharded over DP x CP (workload)",
       P::Workload,
       [](const RunResult& r) -> json { return step(r).layout.distributed_optimizer; }},
      {"layout.rank_order", "rank_order", "-",
       "how ranks map to the layout, innermost first: `tp-cp-dp-pp` (Megatron's and torchtitan's "
       "order; rank r runs on the fabric's r-th GPU), `tp-cp-ep-dp-pp` with expert parallelism "
       "(EP groups are consecutive DP x CP ranks) (workload)",
       P::Workload, [](const RunResult& r) -> json {
         return step(r).layout.expert > 1 ? "tp-cp-ep-dp-pp" : "tp-cp-dp-pp";
       }},
      {"layout.grad_accumulation", "grad_accumulation", "count",
       "micro-batches per step, given or derived from workload.global_batch (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).grad_accumulation; }},
      {"layout.data_parallel", "data_parallel", "count", "DP degree (workload)", P::Workload,
       [](const RunResult& r) -> json { return step(r).data_parallel; }},
      {"layout.fsdp_shard_degree", "fsdp_shard_degree", "count",
       "FSDP: ranks sharding each parameter; below data_parallel it is HSDP, the replicas "
       "all-reducing the shards (0 without FSDP) (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).fsdp_shard_degree; }},
      {"layout.sequence_parallel", "sequence_parallel", "-", "sequence parallelism on (workload)",
       P::Workload, [](const RunResult& r) -> json { return step(r).layout.sequence_parallel; }},
      {"collectives", "", "-", "one object per collective (below; workload)", P::Workload,
       collectives},
      {"collectives[].kind", "", "-",
       "collective kind (FSDP all-gathers and reduce-scatters; closed-form TP/CP/PP/DP "
       "rows, `ep_all_to_all` for expert parallelism, `ep_tp_all_gather` / "
       "`ep_tp_reduce_scatter` for the dispatched tokens over TP with EP x TP)",
       P::Workload, nullptr},
      {"collectives[].unit", "", "-",
       "FSDP unit (0 = the root unit, 1.. blocks in forward order; -1: not applicable)",
       P::Workload, nullptr},
      {"collectives[].bytes", "", "B", "its size (nccl-tests' S)", P::Workload, nullptr},
      {"collectives[].protocol", "", "-",
       "the NCCL protocol it ran (LL, LL128, Simple): NCCL's choice for its operation and size, "
       "or the pinned collective.protocol",
       P::Workload, nullptr},
      {"collectives[].ready_s", "", "s", "when it was issued", P::Workload, nullptr},
      {"collectives[].start_s", "", "s", "when it started", P::Workload, nullptr},
      {"collectives[].end_s", "", "s", "when it ended (closed form: the duration of one)",
       P::Workload, nullptr},
      {"collectives[].count", "", "count", "occurrences per step (closed form: one row per kind)",
       P::Workload, nullptr},
      {"pipeline_bubble_s", "pipeline_bubble_s", "s",
       "pipeline bubble per step (model parallelism)", P::ModelParallel,
       [](const RunResult& r) -> json { return step(r).pipeline_bubble.seconds(); }},
      {"bubble_fraction", "bubble_fraction", "-",
       "bubble / (micro-batches x slowest stage), Megatron's definition (model "
       "parallelism)",
       P::ModelParallel, [](const RunResult& r) -> json { return step(r).bubble_fraction; }},
      {"tp_comm_s", "tp_comm_s", "s", "exposed tensor-parallel communication (model parallelism; with EP x TP the "
       "dispatched tokens' TP all-gathers and reduce-scatters too)",
       P::ModelParallel,
       [](const RunResult& r) -> json { return step(r).tensor_parallel_comm.seconds(); }},
      {"cp_exposed_s", "cp_exposed_s", "s",
       "exposed context-parallel communication (model parallelism)", P::ModelParallel,
       [](const RunResult& r) -> json { return step(r).context_parallel_exposed.seconds(); }},
      {"pp_p2p_s", "pp_p2p_s", "s", "pipeline sends on the critical path (model parallelism)",
       P::ModelParallel, [](const RunResult& r) -> json { return step(r).pipeline_p2p.seconds(); }},
      {"ep_all_to_all_s", "ep_all_to_all_s", "s",
       "expert-parallel dispatch and combine all-to-alls per step, exposed (model parallelism)",
       P::ModelParallel,
       [](const RunResult& r) -> json { return step(r).expert_all_to_all.seconds(); }},
      {"report_ranks", "report_ranks", "count",
       "ranks of the `report:` all-reduces (with `report:`)", P::Report,
       [](const RunResult& r) -> json { return report(r).ranks; }},
      {"allreduce_small_bytes", "allreduce_small_bytes", "B",
       "size of the small `report:` all-reduce", P::Report,
       [](const RunResult& r) -> json { return report(r).small_bytes; }},
      {"allreduce_small_latency_s", "allreduce_small_latency_s", "s", "its time", P::Report,
       [](const RunResult& r) -> json { return report(r).small_latency_s; }},
      {"allreduce_large_bytes", "allreduce_large_bytes", "B",
       "size of the large `report:` all-reduce", P::Report,
       [](const RunResult& r) -> json { return report(r).large_bytes; }},
      {"allreduce_large_time_s", "allreduce_large_time_s", "s", "its time", P::Report,
       [](const RunResult& r) -> json { return report(r).large_time_s; }},
      {"allreduce_large_busbw_GBps", "allreduce_large_busbw_GBps", "GB/s",
       "its nccl-tests bus bandwidth", P::Report,
       [](const RunResult& r) -> json { return report(r).large_busbw_GBps; }},
      {"allreduce_channels", "allreduce_channels", "count",
       "NCCL channels the report: all-reduces ran on", P::Report,
       [](const RunResult& r) -> json { return report(r).channels.channels; }},
  };
    // A fault run's keys (result_schema_faults.cpp) stand before the deadlock's.
    const std::span<const ResultKey> fault_keys = faults_result_keys();
    const auto deadlock = std::find_if(
        base.begin(), base.end(), [](const ResultKey& k) { return k.path == "deadlock.detected"; });
    base.insert(deadlock, fault_keys.begin(), fault_keys.end());
    // The per-layer breakdown's keys (result_schema_layers.cpp) follow the step's shares.
    const std::span<const ResultKey> layers = layer_breakdown_result_keys();
    const auto after_shares = std::find_if(base.begin(), base.end(), [](const ResultKey& k) {
      return k.path == "bucket_allreduce_model";
    });
    base.insert(after_shares, layers.begin(), layers.end());
    // The pre-run estimate's keys (result_schema_estimate.cpp) stand before NCCL's channels.
    const std::span<const ResultKey> estimate = estimate_result_keys();
    const auto channels = std::find_if(
        base.begin(), base.end(), [](const ResultKey& k) { return k.path == "nccl.channels"; });
    base.insert(channels, estimate.begin(), estimate.end());
    // How a packet network ran (result_schema_partitions.cpp) follows the events.
    const std::span<const ResultKey> partition_keys = partition_result_keys();
    const auto after_events = std::find_if(
        base.begin(), base.end(), [](const ResultKey& k) { return k.path == "packet_hops"; });
    base.insert(after_events, partition_keys.begin(), partition_keys.end());
    // A Chakra replay's keys (result_schema_chakra.cpp) close the table.
    const std::span<const ResultKey> chakra = chakra_result_keys();
    base.insert(base.end(), chakra.begin(), chakra.end());
    const std::span<const ResultKey> jobs = jobs_result_keys();
    base.insert(base.end(), jobs.begin(), jobs.end());
    return base;
  }();
  return keys;
}

}  // namespace

std::span<const ResultKey> result_keys() { return table(); }

bool result_key_present(const ResultKey& key, const RunResult& r) {
  switch (key.presence) {
    case P::Always:
      return true;
    case P::Workload:
      return r.step.has_value();
    case P::ModelParallel:
      return r.step && r.step->layout.model_parallel();
    case P::ExtrapolatedBuckets:
      return r.step && !r.step->extrapolated_bucket_sizes.empty();
    case P::Report:
      return r.report.has_value();
    case P::Deadlock:
      return r.deadlock.detected;
    case P::Timeseries:
      return !r.timeseries_files.empty();
    case P::Estimate:
      return r.estimate.has_value();
    case P::PeakRss:
      return r.peak_rss_bytes.has_value();
    case P::PortCounters:
      return !r.port_counters.empty();
    case P::Chakra:
      return r.chakra.has_value();
    case P::Jobs:
      return !r.jobs.empty();
    case P::Faults:
      return !r.faults.empty();
    case P::LayerBreakdown:
      return r.step && r.step->layer_compute.has_value();
    case P::Partitioned:
      return !r.thread_scaling.empty();
  }
  return false;
}

}  // namespace syncsim::app
