// Fitting the simulator's physical parameters (run/physical_fit.hpp) to measurements the
// simulator itself made with known, perturbed parameters: the fit must find the parameters again
// and carry them to a rank count it never saw, where the uncalibrated simulator is far off.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "run/collective_cmd.hpp"
#include "run/physical_fit.hpp"
#include "scenario/physical_parameters.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;
using namespace syncsim::app;

namespace {

// 16 hosts of 4 H100 and 4 x 400G NICs, one rail-optimized group: 8 ranks are 2 hosts, 64 all 16.
const std::string kFabric = R"(name: calibration-fabric
fidelity: analytic
fabric:
  topology: rail_optimized
  rail_optimized: {groups: 1, hosts_per_group: 16, spines: 4}
  host: {gpus: 4, nics: 4, gpu: h100}
  links:
    host:   {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}
    fabric: {bandwidth: 400Gbps, delay: 1us,   mtu: 4096B, header: 64B}
)";

// The "real cluster": every parameter the 8-rank logs exercise moved off its nominal value.
const std::vector<std::pair<std::string, double>> kTruth = {
    {"base_latency.LL", 8.0},         {"base_latency.LL128", 17.0},
    {"base_latency.Simple", 12.0},    {"net_hop_latency.LL", 3.5},
    {"net_hop_latency.LL128", 5.0},   {"net_hop_latency.Simple", 18.0},
    {"channel_copy_bandwidth", 34.0}, {"nvlink_efficiency", 0.92},
    {"nic_efficiency", 0.9},
};

LoadOptions fabric_only() {
  LoadOptions o;
  o.fabric_only_ok = true;
  return o;
}

Scenario truth_scenario() {
  Scenario s = load_scenario_text(kFabric, "fabric.yaml", fabric_only());
  for (const auto& [name, value] : kTruth) set_physical_parameter(s, name, value);
  return s;
}

// "Measured" points: what the truth scenario simulates.
std::vector<MeasuredPoint> measure(const std::vector<std::string>& ops, int ranks,
                                   const std::vector<int64_t>& sizes) {
  std::vector<MeasuredPoint> points;
  for (const std::string& op : ops) {
    for (int64_t bytes : sizes) points.push_back({op, ranks, bytes, 0.0});
  }
  const Scenario truth = truth_scenario();
  for (const PredictedPoint& p : predict_points(truth, points)) {
    for (MeasuredPoint& m : points) {
      if (m.op == p.measured.op && m.bytes == p.measured.bytes) m.measured_us = p.predicted_us;
    }
  }
  return points;
}

const std::vector<int64_t> kSizes = {1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 25, 1 << 28};

double value_of(const calibration::PhysicalFit& fit, const std::string& name) {
  for (const calibration::PhysicalParameter& p : fit.parameters) {
    if (p.name == name) return p.value;
  }
  FAIL("no parameter " << name);
  return 0;
}

}  // namespace

// Labelled slow: about 20 s here and many minutes under the sanitizers, whose stage still runs the
// smaller fits below and the CLI's end-to-end fit.
TEST_CASE("physical fit: 8-rank logs give back the parameters and predict 64 ranks" *
          doctest::test_suite("slow")) {
  const std::vector<MeasuredPoint> small =
      measure({"all_reduce", "all_gather", "reduce_scatter"}, 8, kSizes);
  const Scenario nominal = load_scenario_text(kFabric, "fabric.yaml", fabric_only());
  const PhysicalFitResult r = fit_physical_parameters(nominal, small);
  CHECK(r.fit.points == static_cast<int>(small.size()));
  CHECK(r.fit.max_rel_error < 0.01);
  // The bandwidth parameters are pinned by the large sizes.
  CHECK(value_of(r.fit, "nic_efficiency") == doctest::Approx(0.9).epsilon(0.01));
  CHECK(value_of(r.fit, "nvlink_efficiency") == doctest::Approx(0.92).epsilon(0.01));
  CHECK(value_of(r.fit, "channel_copy_bandwidth") == doctest::Approx(34.0).epsilon(0.03));
  // The latencies of the protocols the small sizes ran, within 10%.
  CHECK(value_of(r.fit, "base_latency.LL") == doctest::Approx(8.0).epsilon(0.1));
  CHECK(value_of(r.fit, "net_hop_latency.LL") == doctest::Approx(3.5).epsilon(0.1));
  CHECK(value_of(r.fit, "base_latency.LL128") == doctest::Approx(17.0).epsilon(0.1));
  // Nothing at 8 ranks on 2 hosts runs a Simple step inside a host over NVLink: that parameter is
  // not in the data and keeps NCCL's value.
  for (const calibration::PhysicalParameter& p : r.fit.parameters) {
    if (p.name == "nvlink_hop_latency.Simple") {
      CHECK_FALSE(p.identified);
      CHECK(p.value == p.nominal);
    }
  }

  // 64 ranks: the fitted simulator within 5% at every size; the uncalibrated one is not.
  const std::vector<MeasuredPoint> large = measure({"all_reduce"}, 64, kSizes);
  double fitted_max = 0, nominal_max = 0;
  for (const PredictedPoint& p : predict_points(with_physical_fit(nominal, r.fit), large)) {
    fitted_max = std::max(fitted_max, std::abs(p.rel_error));
  }
  for (const PredictedPoint& p : predict_points(nominal, large)) {
    nominal_max = std::max(nominal_max, std::abs(p.rel_error));
  }
  CHECK(fitted_max < 0.05);
  CHECK(nominal_max > 0.10);
}

TEST_CASE("physical fit: sizes above the cap are predicted, not fitted") {
  const std::vector<MeasuredPoint> points = measure({"all_reduce"}, 8, {1 << 20, 1 << 24, 1 << 28});
  const Scenario nominal = load_scenario_text(kFabric, "fabric.yaml", fabric_only());
  PhysicalFitOptions o;
  o.parameters = {"nic_efficiency", "nvlink_efficiency"};
  o.max_fit_bytes = 1 << 24;
  const PhysicalFitResult r = fit_physical_parameters(nominal, points, o);
  CHECK(r.fitted_points == 2);
  CHECK(r.fit.points == 2);
  REQUIRE(r.points.size() == 3);
  CHECK(r.points[2].measured.bytes == 1 << 28);
  CHECK(r.points[2].predicted_us > 0);
  // Only the named parameters were fitted; the others keep their nominal values.
  for (const calibration::PhysicalParameter& p : r.fit.parameters) {
    if (p.name != "nic_efficiency" && p.name != "nvlink_efficiency") CHECK(p.value == p.nominal);
  }
  o.max_fit_bytes = 1 << 10;
  CHECK_THROWS_AS(fit_physical_parameters(nominal, points, o), CollectiveUsageError);
  CHECK_THROWS_AS(predict_points(nominal, {{"all_reduce", 128, 1 << 20, 10.0}}),
                  CollectiveUsageError);
}

TEST_CASE("physical fit: a profile's physical block sets the scenario that names it") {
  const auto dir = std::filesystem::temp_directory_path() / "syncsim_physical_profile";
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& name, const std::string& parameters) {
    std::ofstream(dir / name) << "syncsim_calibration_profile: 1\nphysical:\n  parameters:\n"
                              << parameters;
  };
  write("good.yaml",
        "    - {name: nic_efficiency, value: 0.85}\n"
        "    - {name: base_latency.Simple, value: 11.5}\n"
        "    - {name: channel_copy_bandwidth, value: 30}\n");
  write("range.yaml", "    - {name: nic_efficiency, value: 1.5}\n");
  write("unknown.yaml", "    - {name: warp_speed, value: 2}\n");
  const std::string path = (dir / "s.yaml").string();
  auto scenario_with = [&](const std::string& profile) {
    std::ofstream(path) << kFabric << "collective: {calibration: " << profile << "}\n";
    return load_scenario_file(path, fabric_only());
  };
  const Scenario s = scenario_with("good.yaml");
  CHECK(s.nic_efficiency == 0.85);
  CHECK(s.nvlink_efficiency == 1.0);
  CHECK(s.collective.channel_copy_bytes_per_s == 30e9);
  CHECK(physical_parameter_value(s, "base_latency.Simple") == 11.5);
  CHECK(physical_parameter_value(s, "base_latency.LL") == 6.6);  // NCCL's table, untouched
  REQUIRE(s.collective_calibration);
  CHECK_FALSE(s.collective_calibration->lines_are_the_model());
  CHECK_THROWS_WITH_AS(scenario_with("range.yaml"),
                       doctest::Contains("collective.calibration: expected a profile whose "
                                         "physical parameters the simulator knows"),
                       ScenarioError);
  CHECK_THROWS_WITH_AS(scenario_with("unknown.yaml"),
                       doctest::Contains("unknown physical parameter \"warp_speed\""),
                       ScenarioError);
  std::filesystem::remove_all(dir);
}
