#include "scenario/physical_parameters.hpp"

#include <array>
#include <stdexcept>

#include "models/collective_cost.hpp"
#include "models/nccl_channels.hpp"

namespace syncsim::app {

namespace {

using models::LatencyKind;
using models::NcclProtocol;

constexpr std::array<NcclProtocol, 3> kProtocols = {NcclProtocol::LL, NcclProtocol::LL128,
                                                    NcclProtocol::Simple};
constexpr std::array<std::pair<const char*, LatencyKind>, 3> kLatencies = {{
    {"base_latency", LatencyKind::Base},
    {"nvlink_hop_latency", LatencyKind::NvlinkHop},
    {"net_hop_latency", LatencyKind::NetHop},
}};

// The latency parameter `name` names, if it is one: its protocol and kind.
struct LatencySlot {
  bool found = false;
  NcclProtocol protocol = NcclProtocol::Simple;
  LatencyKind kind = LatencyKind::Base;
};
LatencySlot latency_slot(std::string_view name) {
  for (const auto& [prefix, kind] : kLatencies) {
    for (NcclProtocol p : kProtocols) {
      if (name == std::string(prefix) + "." + std::string(models::to_string(p))) {
        return {true, p, kind};
      }
    }
  }
  return {};
}

template <class Config>
auto& latency_field(Config& c, const LatencySlot& s) {
  auto& m = c.measured_latency[static_cast<std::size_t>(s.protocol)];
  return s.kind == LatencyKind::Base        ? m.base_us
         : s.kind == LatencyKind::NvlinkHop ? m.nvlink_hop_us
                                            : m.net_hop_us;
}

}  // namespace

const std::vector<PhysicalParameterInfo>& physical_parameters() {
  static const std::vector<PhysicalParameterInfo> all = [] {
    std::vector<PhysicalParameterInfo> v;
    // Latencies from a tenth of a microsecond to a millisecond: wide enough for any cluster, and
    // positive, as a latency must be.
    for (const auto& [prefix, kind] : kLatencies) {
      for (NcclProtocol p : kProtocols) {
        v.push_back(
            {std::string(prefix) + "." + std::string(models::to_string(p)), "us", 0.1, 1000.0});
      }
    }
    v.push_back({"channel_copy_bandwidth", "GB/s", 1.0, 1000.0});
    // Efficiencies up to the line rate: hardware never beats it, so a fit that wants more says
    // that something else in the model is too slow (the bound shows in the report).
    v.push_back({"nvlink_efficiency", "", 0.2, 1.0});
    v.push_back({"nic_efficiency", "", 0.2, 1.0});
    return v;
  }();
  return all;
}

const PhysicalParameterInfo& physical_parameter(std::string_view name) {
  std::string known;
  for (const PhysicalParameterInfo& p : physical_parameters()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw std::invalid_argument("unknown physical parameter \"" + std::string(name) + "\" (" + known +
                              ")");
}

double physical_parameter_nominal(const Scenario& scenario, std::string_view name) {
  (void)physical_parameter(name);
  if (const LatencySlot s = latency_slot(name); s.found) {
    return models::nccl_ring_latency_us(s.protocol, s.kind);
  }
  if (name == "channel_copy_bandwidth") {
    return models::nccl_channel_copy_GBps(scenario.host_gpu.compute_capability);
  }
  return 1.0;
}

double physical_parameter_value(const Scenario& scenario, std::string_view name) {
  if (const LatencySlot s = latency_slot(name); s.found) {
    const double v = latency_field(scenario.collective, s);
    return v > 0 ? v : physical_parameter_nominal(scenario, name);
  }
  if (name == "channel_copy_bandwidth") return scenario.collective.channel_copy_bytes_per_s / 1e9;
  if (name == "nvlink_efficiency") return scenario.nvlink_efficiency;
  if (name == "nic_efficiency") return scenario.nic_efficiency;
  return physical_parameter_nominal(scenario, name);  // throws for an unknown name
}

void set_physical_parameter(Scenario& scenario, std::string_view name, double value) {
  const PhysicalParameterInfo& info = physical_parameter(name);
  if (!(value >= info.lower && value <= info.upper)) {
    throw std::invalid_argument("physical parameter " + info.name + ": expected " +
                                std::to_string(info.lower) + ".." + std::to_string(info.upper) +
                                (info.unit.empty() ? "" : " " + info.unit) + ", found " +
                                std::to_string(value));
  }
  if (const LatencySlot s = latency_slot(name); s.found) {
    latency_field(scenario.collective, s) = value;
  } else if (name == "channel_copy_bandwidth") {
    scenario.collective.channel_copy_bytes_per_s = value * 1e9;
  } else if (name == "nvlink_efficiency") {
    scenario.nvlink_efficiency = value;
  } else {
    scenario.nic_efficiency = value;
  }
}

void apply_physical_parameters(Scenario& scenario,
                               const std::vector<calibration::PhysicalParameter>& parameters) {
  for (const calibration::PhysicalParameter& p : parameters) {
    set_physical_parameter(scenario, p.name, p.value);
  }
}

}  // namespace syncsim::app
