#pragma once
// Runs a parsed scenario on the backend its fidelity names and summarises the outcome.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "models/chakra_replay.hpp"
#include "models/nccl_channels.hpp"
#include "models/step_sim.hpp"
#include "run/collective_cmd.hpp"
#include "run/estimate.hpp"
#include "run/fault_run.hpp"
#include "run/link_tiers.hpp"
#include "run/multi_job.hpp"
#include "run/port_counters.hpp"
#include "scenario/scenario.hpp"
#include "sim/backends/make_backend.hpp"
#include "sim/backends/transfer_backend.hpp"

namespace syncsim::app {

struct FctSummary {
  double min_s = 0, mean_s = 0, p50_s = 0, p99_s = 0, max_s = 0;
};

// Per-flow mean throughput (payload bits delivered / window length) over a window: the scenario's
// `observe.rate_window` when stated (flows active in it), else each completed flow over its own
// [start, finish]. Packet fidelity only.
struct FlowRateStats {
  bool stated_window = false;
  double window_start_s = 0, window_end_s = 0;  // the stated window (0, 0 otherwise)
  struct Flow {
    std::string src{}, dst{};
    double bps = 0;
    double start_s = 0, finish_s = -1;  // the flow's start and completion (-1: not completed)
    bool completed = false;
    std::vector<std::string> path{};  // the switches it crosses, in order
    // DCQCN (packet fidelity, when on): CNPs for it, the cuts they caused, its lowest rate.
    uint32_t cnps = 0;
    uint32_t rate_cuts = 0;
    double min_rate_bps = -1;  // -1: DCQCN off
  };
  std::vector<Flow> flows{};
  double min_bps = 0, max_bps = 0, mean_bps = 0;
  double jain_index = 0;  // over `flows`
};

// Fairness within one `traffic:` entry (its messages only; a workload's transfers are not in any).
struct TrafficFairness {
  uint32_t entry = 0;     // index in `traffic:`
  std::string pattern{};  // its pattern: messages, ring_shift, permutation, incast, all_to_all
  uint64_t messages = 0;
  uint64_t completed = 0;
  double jain_index = 0;  // over its completed messages' size / FCT; 0 when none completed
};

// A PFC deadlock the network detected (the run was stopped there).
struct DeadlockSummary {
  bool detected = false;
  double at_s = 0;           // when the cycle closed (its last queue was paused)
  double detected_at_s = 0;  // when it was detected and the run stopped
  unsigned priority = 0;
  std::vector<std::string> ports{};  // "owner->peer", each waiting on the next
};

// A replayed Chakra trace (`workload.chakra`, run/chakra_run.hpp).
struct ChakraRun {
  std::string path{};
  uint32_t ranks = 0;
  std::size_t retimed_nodes = 0;  // compute nodes the compute model re-timed (retime: true)
  models::ChakraReplayResult replay{};
};

struct RunResult {
  std::string scenario;
  uint64_t seed = 0;
  Fidelity fidelity = Fidelity::Packet;
  double sim_time_s = 0;  // time of the last event (last completion)
  double wall_s = 0;      // host wall-clock time of set-up and simulation
  uint64_t events = 0;
  // A packet-level traffic run's partitions and windows (sim/net/partition_windows.hpp): 1 and 0
  // when the network ran as one queue.
  uint32_t partitions = 1;
  uint64_t windows = 0;
  // What more threads would make of those windows (sim/net/window_load.hpp): per thread count, the
  // busiest thread's events summed over the windows, and the speed-up they bound: every event of
  // the run / (that sum + the events outside the partitions). Empty on one queue.
  struct ThreadScaling {
    uint32_t threads = 0;
    uint64_t busiest_thread_events = 0;
    double speedup_bound = 1;
  };
  std::vector<ThreadScaling> thread_scaling;
  BackendCounters counters;
  uint64_t messages = 0;
  uint64_t messages_completed = 0;
  // Every transfer the backend completed: the traffic's messages and the collectives' transfers
  // (of a step, jobs or a Chakra replay) alike, where the backend keeps their records.
  uint64_t transfers_completed = 0;
  FctSummary fct;
  uint32_t gpus = 0;
  uint32_t hosts = 0;
  std::size_t switches = 0;
  std::size_t links = 0;
  // Per link class: payload bytes routed and utilisation over the run (run/link_tiers.hpp).
  std::vector<LinkTierUse> link_tiers;
  uint64_t packets_dropped_buffer_full = 0;
  // Packet-level only (zero on the analytic backend).
  std::vector<std::pair<std::string, uint64_t>> drops;  // packets dropped, by reason (every reason)
  uint64_t pause_frames = 0;                            // PFC PAUSE frames sent
  uint64_t resume_frames = 0;                           // PFC RESUME frames sent
  uint64_t nic_pause_frames = 0;                        // receiver-side PFC PAUSE frames (NICs)
  int64_t max_nic_rx_bytes = 0;                         // fullest NIC receive buffer
  double paused_time_s = 0;  // summed over every egress port and priority
  std::vector<std::pair<std::string, double>>
      paused_ports;                      // "owner->peer", seconds, longest first
  std::vector<double> fct_by_message_s;  // per message in start order (stable), -1 if not completed
  uint64_t ecn_marks = 0;                // data packets marked (once each)
  uint64_t ecn_hop_marks = 0;            // marking decisions summed over hops
  uint64_t cnps = 0;                     // DCQCN CNPs sent by destination NICs
  uint64_t rate_cuts = 0;                // DCQCN rate decreases at source NICs
  // Jain's fairness index (sum x)^2 / (n sum x^2) of the completed messages' average rates
  // x = size / FCT, each over its own [start, finish] window; 0 when none completed. Every
  // transfer of the run together (all traffic entries, and a workload's); jain_by_traffic groups.
  double jain_index = 0;
  std::vector<TrafficFairness> jain_by_traffic;  // one per `traffic:` entry, in order
  // Per port x priority counters (RunOptions::port_counters, packet fidelity); empty otherwise.
  std::vector<PortCounterRow> port_counters;
  // The switch queue (port x priority) with the highest time-averaged depth, from port_counters.
  std::string busiest_queue_port{};
  unsigned busiest_queue_priority = 0;
  double queue_mean_bytes = 0, queue_p99_bytes = 0;
  FlowRateStats flow_rates;  // packet fidelity
  DeadlockSummary deadlock;
  std::vector<std::string> timeseries_files;  // CSV files written (`--timeseries DIR`)
  std::vector<std::string> warnings;          // configuration checks
  // Reliable transports (packet backend): go-back-N RoCE on lossy classes, TCP.
  std::string transport = "roce";
  uint64_t retransmitted_packets = 0;
  int64_t retransmitted_bytes = 0;
  uint64_t out_of_order_packets = 0;
  uint64_t timeouts = 0;
  uint64_t fast_retransmits = 0;
  uint64_t naks = 0;
  uint64_t acks = 0;
  int64_t bytes_discarded = 0;
  // RC recovery on lossless classes: recoveries (a loss to the arrival of every packet lost
  // meanwhile), their summed and longest time, and the messages that needed one, longest first.
  uint64_t rc_recoveries = 0;
  double rc_recovery_time_s = 0;
  double rc_recovery_time_max_s = 0;
  uint64_t rc_retry_exceeded = 0;  // queue pairs (messages) failed after NCCL's retry count
  struct RcRecoveredMessage {
    std::string src{}, dst{};
    double start_s = 0;
    double recovery_s = 0;  // summed over the message's recoveries
    double finish_s = -1;   // -1: not completed
  };
  std::vector<RcRecoveredMessage> rc_recovered{};
  std::vector<FaultOutcome> faults;        // `faults:`, one per occurrence, by time
  std::optional<models::StepResult> step;  // when the scenario has a workload
  std::optional<ChakraRun> chakra;         // `workload.chakra` (step is then filled from it)
  std::vector<JobRun> jobs;                // `jobs:` each job's steps on the shared fabric
  models::NcclChannels step_channels{};    // NCCL's channels for the step's collectives
  // How the bucket all-reduces were timed: "simulated", or "calibrated: FILE, all_reduce at N
  // ranks" (collective.calibration).
  std::string bucket_allreduce_model = "simulated";
  // `report:` all_reduces (run/collective_cmd.hpp), timed after the run on an idle fabric; their
  // simulation is not counted in wall_s or events.
  std::optional<ReportedCollectives> report;
  // Attached by the caller after the run (`syncsim run`), not by run_scenario: the pre-run
  // estimate and the process's measured peak RSS, so --json prints them with the rest.
  std::optional<Estimate> estimate;
  std::optional<double> peak_rss_bytes;
};

struct RunOptions {
  bool progress = false;        // a progress line on stderr (run/progress.hpp)
  double estimated_wall_s = 0;  // from run/estimate.hpp, for the progress line's ETA
  double expected_sim_s = 0;    // from run/estimate.hpp: the progress line's simulated-time total
  // Collect per port x priority counters (packet fidelity; about 1 KiB per port and priority).
  bool port_counters = false;
  // Threads for the training step's private idle-fabric simulations (models::StepConfig::threads);
  // results are the same for any count.
  uint32_t threads = 1;
  // A packet-level run's windows: events per thread a window needs before it is handed to the
  // threads (net::NetworkSpec::Execution::min_window_events_per_thread); results are the same for
  // any value.
  uint64_t min_window_events_per_thread =
      net::NetworkSpec::Execution{}.min_window_events_per_thread;
  // Called on the simulating thread as a DDP step advances (models::StepProgress: a few calls per
  // bucket), besides the progress line; the Python module's progress callback. Results are the
  // same with or without it.
  std::function<void(const models::StepProgress&)> on_step_progress{};
};

RunResult run_scenario(const Scenario& scenario, const RunOptions& options = {});

// The scenario's fabric with everything the scenario sets on it: PFC, ECN, NIC congestion control,
// transport, impairments, the flow-level CC correction and route overrides. `syncsim run` and
// `syncsim collective` (and the step model's private timing runs, which copy the spec) all see the
// same one.
net::NetworkSpec scenario_network(const Scenario& scenario);
// The link classes scenario_network builds the fabric with: the measured NIC and NVLink
// efficiencies applied, the switches' latency on the delays.
topo::LinkClasses scenario_link_classes(const Scenario& scenario);
// What scenario_network sets on the built fabric beyond its shape (PFC, ECN, ETS, NICs and their
// overrides, transport, impairments, link layer, routing algorithm, flow-level correction); on a
// spec without nodes (the estimate's), the NIC overrides are listed but placed on no NIC.
void set_network_behaviour(const Scenario& scenario, net::NetworkSpec& spec);

// NCCL's channels for a collective over `ranks` ranks of the scenario's fabric, ranks filling hosts
// in order (models/nccl_channels.hpp): the node shape from fabric.host and the NIC and NVLink
// links, the GPU from host_gpu, the count from `requested` (a command-line flag) or else
// collective.channels, auto when neither gives one. Throws std::invalid_argument for a shape NCCL
// cannot run (a multi-host collective without NICs).
models::NcclChannels scenario_nccl_channels(const Scenario& scenario, uint32_t ranks,
                                            std::optional<uint32_t> requested = std::nullopt);

// A DDP step that runs CollNet (workload.algorithm collnet_direct / collnet_chain) gets the SHARP
// tree of each NIC rail over its ranks' hosts (net::usable_rail_trees); where SHARP cannot run
// them (no common switch, too many trees in one) a ScenarioError at workload.algorithm says why.
// Other algorithms: unchanged.
void set_collnet_trees(models::StepConfig& step, const Scenario& scenario,
                       const net::NetworkSpec& spec);

// The --json object, generated from the result schema (run/result_schema.hpp).
nlohmann::json to_json(const RunResult& r);
// A human-readable summary for the terminal (run/result_text.cpp): a workload run leads with its
// step; message, FCT and queue lines appear only when the scenario has traffic messages.
std::string to_text(const RunResult& r);

using syncsim::fidelity_name;

// Nearest-rank percentile of an ascending vector (p in [0, 100]).
double percentile_sorted(const std::vector<double>& sorted, double p);

}  // namespace syncsim::app
