#pragma once
// Private to scenario/: one reader per scenario section, each in its own file (read_<section>.cpp),
// plus the --set overrides and the checks that need the whole scenario. The top-level loader
// (scenario_loader.cpp) calls them in document order.
#include <cstdint>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "scenario/scenario_loader.hpp"
#include "scenario/yaml_reader.hpp"

namespace syncsim::app::yaml_reader {

constexpr uint64_t kMaxPriority = 7;  // 802.1p classes 0..7

// overrides.cpp: one `--set path=value` written into the tree before it is read.
void apply_override(OverriddenTree& tree, const Override& o);

// read_fabric.cpp: `fabric:` (topology blocks, host, links, ecmp) and the fabric blocks kept
// outside FabricParams (`fabric.route_overrides`, `fabric.flow`).
// The network's behaviour under `fabric:` (PFC, ECN, NIC, transport, impairments) goes to
// `behaviour`.
topo::FabricParams read_fabric(const Reader& in, const YAML::Node& node, const std::string& path,
                               NetworkBehaviour& behaviour);
std::vector<RouteOverrideSpec> read_route_overrides(const Reader& in, const YAML::Node& node,
                                                    const std::string& path);
net::FlowCcCorrection read_flow_options(const Reader& in, const YAML::Node& node,
                                        const std::string& path);

// read_fabric_switch.cpp: `fabric.switch:` (buffer, priorities, pfc, ecn).
void read_switch(const Reader& in, const YAML::Node& node, const std::string& path,
                 topo::FabricParams& p, NetworkBehaviour& behaviour);

// read_fabric_nic.cpp: `fabric.nic:`, `fabric.transport:`, `fabric.impairments:`. With
// `over_current` (fabric.nic_overrides) the block changes `nic` as it stands: a dcqcn block keeps
// its enabled flag and parameters unless it names them (or a preset).
void read_nic(const Reader& in, const YAML::Node& node, const std::string& path,
              net::NicParams& nic, bool over_current = false);
void read_transport(const Reader& in, const YAML::Node& node, const std::string& path,
                    net::TransportParams& t);
void read_impairments(const Reader& in, const YAML::Node& node, const std::string& path,
                      net::ImpairmentParams& imp);

// read_fabric_infiniband.cpp: `fabric.infiniband:` (sl_to_vl, vl_buffer, congestion_control).
void read_infiniband(const Reader& in, const YAML::Node& node, const std::string& path,
                     net::InfinibandParams& ib, net::SharpParams& sharp);

// read_workload.cpp: `workload:`.
WorkloadSpec read_workload(const Reader& in, const YAML::Node& node, const std::string& path);
// read_moe.cpp: the model's mixture-of-experts keys (a `workload.model` map) and
// `workload.expert_parallel` / `workload.capacity_factor` with the checks the layout alone decides.
void read_moe_model(const Reader& in, const MapView& model, models::TransformerShape& shape);
void read_expert_parallel(const Reader& in, const MapView& workload, models::StepConfig& c);
// read_jobs.cpp: `jobs:`, training jobs sharing the fabric.
std::vector<JobSpec> read_jobs(const Reader& in, const YAML::Node& node, const std::string& path);
// read_chakra.cpp: `workload: {chakra: {...}}` (reads the trace files).
ChakraWorkloadSpec read_chakra_workload(const Reader& in, const YAML::Node& node,
                                        const std::string& path);

// read_traffic.cpp: `traffic:` and `collective:`.
std::vector<models::TrafficSpec> read_traffic(const Reader& in, const YAML::Node& node,
                                              const std::string& path);
models::CollectiveConfig read_collective(const Reader& in, const YAML::Node& node,
                                         const std::string& path);
CollectiveCalibration read_collective_calibration(const Reader& in, const YAML::Node& node,
                                                  const std::string& path);

// read_observe.cpp: `observe:`, `report:` and `sweep:`.
ObserveSpec read_observe(const Reader& in, const YAML::Node& node, const std::string& path);
ReportSpec read_report(const Reader& in, const YAML::Node& node, const std::string& path);
std::vector<SweepAxisSpec> read_sweep(const Reader& in, const YAML::Node& node,
                                      const std::string& path);

// read_faults.cpp: `faults:`, `fabric.routing_convergence`, and the fault targets against the
// built fabric (from validate()).
std::vector<FaultSpec> read_faults(const Reader& in, const YAML::Node& node,
                                   const std::string& path);
Time read_routing_convergence(const Reader& in, const YAML::Node& node, const std::string& path);
void check_faults(const Reader& in, const Scenario& scenario, const net::NetworkSpec& spec);

// validate.cpp: the checks that need the whole scenario (building the fabric, expanding the
// traffic, fitting the workload on the fabric), reported at the deepest node along each path.
void validate(const Reader& in, const Scenario& scenario);
// global_batch.cpp: `workload.global_batch` into grad_accumulation, once the fabric's GPU count
// gives the data-parallel size; before validate().
void resolve_global_batch(const Reader& in, Scenario& scenario);
// Whether a calibration profile's GPU name ("NVIDIA H100 80GB HBM3") is the GPU preset `preset`
// ("h100"), matched as a word of its own.
bool profile_names_gpu(const std::string& measured, const std::string& preset);

}  // namespace syncsim::app::yaml_reader
