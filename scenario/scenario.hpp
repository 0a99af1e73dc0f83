#pragma once
// A scenario after parsing: plain structs, no YAML. Produced by load_scenario
// (scenario_loader.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "calibration/profile.hpp"
#include "models/chakra_graph.hpp"
#include "models/collective_cost.hpp"
#include "models/step_sim.hpp"
#include "models/traffic.hpp"
#include "sim/backends/fidelity.hpp"
#include "sim/net/network_spec.hpp"
#include "topologies/fabric_params.hpp"
#include "topologies/placement.hpp"

namespace syncsim::app {

// `workload:` a DDP training step (models/step_sim.hpp). rank_to_gpu is filled at run time: ranks
// are the first `data_parallel` GPUs of the fabric (all of them when 0).
struct WorkloadSpec {
  models::StepConfig step;
  uint32_t data_parallel = 0;
  // `workload.global_batch`: sequences per optimizer step (Megatron's --global-batch-size); when
  // set, step.grad_accumulation = global_batch / (micro_batch x data-parallel replicas).
  std::optional<uint32_t> global_batch;
  // Unset: reuse idle-fabric bucket timings unless background traffic shares the fabric.
  std::optional<bool> reuse_bucket_timings;
  // `workload.step_engine` for model-parallel layouts: event_driven (true) or closed_form (false).
  // Unset: event-driven when the step's collectives run live (reuse_bucket_timings off: other
  // traffic, other jobs or network faults share the fabric), the closed form otherwise.
  std::optional<bool> event_driven_layouts;
  // `workload.placement`: which GPU each rank runs on (topologies/placement.hpp; random uses the
  // scenario seed).
  topo::Placement placement = topo::Placement::Packed;
};

// `jobs:` one training job of several sharing the fabric (run/multi_job.hpp). Its workload is read
// as `workload:` is; its GPUs are those of `hosts` in order, or else `workload.placement`'s order
// over the fabric less the GPUs of the jobs listed before it.
struct JobSpec {
  std::string name;
  WorkloadSpec workload;
  std::vector<uint32_t> hosts{};  // explicit placement; empty: the placement policy
  Time start = Time::zero();      // when its first step begins
  uint32_t steps = 1;             // consecutive steps, each begun when the previous one ends
};

// `workload: {chakra: {...}}`: a Chakra execution trace (ASTRA-sim's workload format), one file per
// rank, read at load and replayed on the fabric by models/chakra_replay.hpp (docs/chakra.md).
// Rank r runs on the fabric's r-th GPU.
struct ChakraWorkloadSpec {
  std::string path;  // DIR or PREFIX as resolved (relative to the scenario file's folder)
  uint32_t ranks = 0;
  bool retime = false;  // compute nodes with num_ops re-timed by the compute model
  models::GpuSpec gpu;  // `chakra.gpu` (retime's GPU; h100 by default)
  models::DType dtype = models::DType::Bf16;
  std::size_t retimed_nodes = 0;  // compute nodes retime changed (the rest keep the trace's)
  models::ChakraTrace trace;
};

// `collective.calibration: FILE`: the fitted collective lines of a calibration profile. They
// replace the simulated time of `syncsim collective` rows and of the workload's bucket all-reduces
// for the (op, rank count) pairs they cover (run/calibrated_collective.hpp).
struct CollectiveCalibration {
  std::string file;
  std::vector<calibration::CollectiveProfile> collectives;
  // The profile's fitted physical parameters (`physical:`), already applied to the scenario. With
  // them the simulator, so set, is the model, and the fitted lines are a report of the
  // measurement (`syncsim collective --model calibrated` still evaluates them).
  std::vector<calibration::PhysicalParameter> physical{};
  // The fitted lines time collectives in place of the simulator: a profile without physical
  // parameters.
  bool lines_are_the_model() const { return physical.empty() && !collectives.empty(); }
  std::string gpu_name{};  // the profile's `gpu.name` and `gpu.count` (empty, 0: not recorded)
  int gpu_count = 0;
};

// `observe:` time series and the flow-rate window (packet fidelity). Sampling never perturbs the
// run: the runner advances the event queue to each sample time and reads the state.
struct ObserveSpec {
  Time interval = Time::us(10);      // sampling period of the time series
  std::vector<std::string> ports{};  // "owner->peer" egress ports; empty: every switch port
  bool flows = true;                 // per-flow rate and delivered bytes
  bool rate_window = false;          // flow_rates over [window_start, window_end]
  Time window_start = Time::zero();
  Time window_end = Time::zero();
  std::string csv_dir{};  // set by `--timeseries DIR`: write CSV files there
};

// `fabric.route_overrides`: flows from GPU `src` to GPU `dst` pass through the named switches
// (each with NICs attached: leaves) in order; resolved to NetworkSpec::route_overrides by the
// runner.
struct RouteOverrideSpec {
  uint32_t src_gpu = 0;
  uint32_t dst_gpu = 0;
  std::vector<std::string> via{};
};

// `report:` extra numbers for `syncsim run` and `syncsim sweep`: an all_reduce of each size over
// the workload's ranks (every GPU without a workload) on an idle copy of the fabric, timed exactly
// as `syncsim collective --op all_reduce -b SIZE -e SIZE` times it (run/collective_cmd.hpp).
struct ReportSpec {
  int64_t allreduce_small_bytes = 8;          // reported as a latency
  int64_t allreduce_large_bytes = 256 << 20;  // reported as nccl-tests' bus bandwidth
};

// What `fabric:` sets on the network beyond its shape: PFC and ECN on the switches, the NICs'
// congestion control, the transport and the link impairments. The topology builders never read
// these; run/ copies them into the NetworkSpec (scenario_network).
// `fabric.nic_overrides[i]`: the NICs of `hosts` run `nic` (fabric.nic with the entry's `nic:`
// block over it) instead of fabric.nic.
struct NicOverrideSpec {
  std::vector<uint32_t> hosts;
  net::NicParams nic;
};

struct NetworkBehaviour {
  net::PfcParams pfc;                                // `fabric.switch.pfc`
  net::EcnParams ecn;                                // `fabric.switch.ecn`
  net::EtsParams ets;                                // `fabric.switch.ets`
  net::NicParams nic;                                // `fabric.nic`
  std::vector<NicOverrideSpec> nic_overrides;        // `fabric.nic_overrides` (later entries win)
  net::TransportParams transport;                    // `fabric.transport`
  net::ImpairmentParams impairments;                 // `fabric.impairments`
  net::LinkLayer link_layer = net::LinkLayer::Roce;  // `fabric.link_layer`
  net::InfinibandParams infiniband;                  // `fabric.infiniband`
  // `fabric.switch.latency` (or its preset's): port-to-port latency of every fabric switch, added
  // to the link delays (half on host links, all on fabric and core links: a path of n links
  // crosses n - 1 switches, and host links come in pairs). 0: store-and-forward only.
  Time switch_latency = Time::zero();
  uint32_t switch_radix = 0;  // `fabric.switch.preset`'s port count (0: none); checked at load
  // `fabric.routing`; unset: ftree on InfiniBand (what its subnet manager computes), ecmp on RoCE.
  std::optional<net::RoutingAlgorithm> routing;
  net::RoutingAlgorithm routing_algorithm() const {
    return routing.value_or(link_layer == net::LinkLayer::Infiniband ? net::RoutingAlgorithm::Ftree
                                                                     : net::RoutingAlgorithm::Ecmp);
  }
};

// One `sweep:` axis: a dotted path and its values, each YAML text as written (a scalar, or a flow
// collection such as `{pattern: incast, senders: 16}`). `labels` name the values in the sweep's
// column when the axis was written as a map {label: value, ...}; empty when written as a list.
struct SweepAxisSpec {
  std::string path;
  std::vector<std::string> values;
  std::vector<std::string> labels{};
};

// `faults:` one timed event (docs/faults.md), named as written; run/fault_plan.hpp resolves the
// names against the built fabric.
enum class FaultKind : uint8_t {
  LinkDown,      // `link: "a->b"`: the cable, both directions
  LinkUp,        // ... back up (at full rate)
  LinkDegraded,  // ... at `fraction` of its rate
  SwitchDown,    // `switch: NAME`: every cable of the switch
  SwitchUp,
  NicDown,  // `nic: NAME`: the host NIC's cable
  NicUp,
  Straggler,  // `gpu: R`: its compute `slowdown` times slower
  PfcStorm,   // `nic: NAME` sends PAUSE on `priority` for `duration`
};
struct FaultSpec {
  FaultKind kind = FaultKind::LinkDown;
  Time at = Time::zero();
  std::string target{};  // the link, switch or NIC as named
  uint32_t gpu = 0;      // straggler
  double fraction = 1.0;
  double slowdown = 1.0;
  uint8_t priority = 3;
  // Down and degraded kinds: back up (at full rate) this long after each start; pfc_storm: its
  // length; straggler: how long it stays slow. Unset: for the rest of the run.
  std::optional<Time> duration{};
  Time period = Time::zero();  // > 0: the event repeats `count` times, `period` apart (flaps)
  uint32_t count = 1;
  std::string path{};  // "faults.N", for messages
};

struct Scenario {
  std::string name;
  std::string source;  // file path, or "<built-in default>"
  uint64_t seed = 1;
  Fidelity fidelity = Fidelity::Packet;
  topo::FabricParams fabric;
  // The hosts' GPU (`fabric.host.gpu`, else `workload.gpu`, else h100): its NVLink sets the
  // fabric's NVLink port unless `fabric.links.nvlink.bandwidth` is given, and NCCL's channel search
  // reads its generation.
  models::GpuSpec host_gpu;
  NetworkBehaviour network;  // the rest of `fabric:`
  std::vector<models::TrafficSpec> traffic;
  models::CollectiveConfig collective;  // `collective:` (NCCL knobs for `syncsim collective`)
  std::optional<CollectiveCalibration> collective_calibration;  // `collective.calibration`
  // Measured shares of the line rate the NICs and the GPUs' NVLink ports deliver (PCIe, NIC
  // processing, protocol), from a calibration profile's `physical:` block
  // (scenario/physical_parameters.hpp). scenario_network scales those links' rates by them; NCCL's
  // channel search keeps reading the nominal rates, as NCCL rates links by their speed. 1: the
  // line rate less the packet headers, the simulator's physics without a calibration.
  double nic_efficiency = 1.0;
  double nvlink_efficiency = 1.0;
  std::optional<WorkloadSpec> workload;  // a training step to simulate; traffic then runs beside it
  std::optional<ChakraWorkloadSpec> chakra;  // `workload.chakra`: a trace to replay (no `workload`)
  // `jobs:` several training jobs on the fabric at once (no `workload`), with `traffic:` beside
  // them; `compare_alone: true` also runs each job alone on the same fabric for its slowdown.
  std::vector<JobSpec> jobs;
  bool compare_alone = false;
  // `sweep:` axes for `syncsim sweep FILE`; `syncsim run` ignores them.
  std::vector<SweepAxisSpec> sweep;
  std::optional<ObserveSpec> observe;              // `observe:`, or `--timeseries DIR` alone
  std::vector<RouteOverrideSpec> route_overrides;  // `fabric.route_overrides`
  std::vector<FaultSpec> faults;                   // `faults:`
  // `fabric.routing_convergence`: how long routing keeps using a cable after it went down or up
  // before the ECMP groups are repaired (sim/net/fault.hpp). 100 ms: RFC 7938 (BGP in large data
  // centres) section 7 makes sub-second convergence achievable with "fast fallover" on link-down
  // (point-to-point fibre failures are "detected in milliseconds"), and tuned BGP with BFD reaches
  // "a few tens of milliseconds" end to end (N. Modena, "Controlling BGP Convergence Time",
  // ipSpace.net); 100 ms lies between. Hardware fast failover (ECMP member removal in the
  // switch's own pipeline) takes ~1 ms: state it with this key.
  Time routing_convergence = Time::ms(100);
  std::optional<ReportSpec> report;  // `report:`
  net::FlowCcCorrection flow_cc;     // `fabric.flow.cc_correction` (flow fidelity)
  // `file:line:col: path: message` warnings found while reading: legal but likely wrong inputs
  // (aliases, a setting the fidelity ignores, TP spanning hosts, a profile from other hardware);
  // every command prints them.
  std::vector<std::string> load_warnings;
};

}  // namespace syncsim::app
