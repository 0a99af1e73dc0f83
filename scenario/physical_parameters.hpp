#pragma once
// The simulator's physical parameters that a calibration fits from measurements and a profile's
// `physical:` block sets (calibration/profile.hpp PhysicalFit), by name:
//
//   base_latency.P        us    NCCL's base latency of protocol P (LL, LL128, Simple), Ring row
//   nvlink_hop_latency.P  us    its per-step NVLink latency
//   net_hop_latency.P     us    its per-step network latency; a GPUDirect/PCIe crossing and the
//                               switches a step passes are inside it (nccl-tests timings cannot
//                               tell them apart: each adds once per network step)
//   channel_copy_bandwidth GB/s what one channel's CTA copies per second
//   nvlink_efficiency      -    share of the NVLink port's rate the GPU's copies reach
//   nic_efficiency         -    share of the NIC's line rate its payload reaches
//
// Where they act: models::CollectiveConfig::measured_latency and channel_copy_bytes_per_s, and
// Scenario::nvlink_efficiency / nic_efficiency (scenario_network scales the links). Unset, each
// has its nominal value: NCCL's tables, the GPU generation's copy rate, 1.
#include <string>
#include <string_view>
#include <vector>

#include "calibration/profile.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

struct PhysicalParameterInfo {
  std::string name;
  std::string unit;  // "us", "GB/s", "" (a fraction)
  double lower = 0;  // the range a fit may move it in
  double upper = 0;
};

// Every parameter, in the order a fit lists them.
const std::vector<PhysicalParameterInfo>& physical_parameters();
// The entry for `name`; throws std::invalid_argument naming the known ones.
const PhysicalParameterInfo& physical_parameter(std::string_view name);

// The value `name` has in `scenario` (its nominal value where nothing set it).
double physical_parameter_value(const Scenario& scenario, std::string_view name);
// Its value without any calibration (NCCL's table, the GPU's copy rate, 1).
double physical_parameter_nominal(const Scenario& scenario, std::string_view name);
// Sets `name` in `scenario`; throws std::invalid_argument for an unknown name or a value outside
// its range.
void set_physical_parameter(Scenario& scenario, std::string_view name, double value);

// A profile's fitted parameters into `scenario` (unidentified ones too: they hold their nominal
// value). Throws std::invalid_argument as set_physical_parameter does.
void apply_physical_parameters(Scenario& scenario,
                               const std::vector<calibration::PhysicalParameter>& parameters);

}  // namespace syncsim::app
