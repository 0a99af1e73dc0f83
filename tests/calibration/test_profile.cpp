#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include "calibration/profile.hpp"

using namespace syncsim::calibration;

TEST_CASE("calibration: profile YAML round-trips") {
  CalibrationProfile p;
  p.source = "syncsim-probe --iters 20";
  p.gpu_name = "NVIDIA H200";
  p.gpu_count = 8;
  p.driver_version = "570.86.15";
  p.cuda_version = "12.8";
  p.nccl_version = "2.25.1";
  p.spread = 0.0125;
  p.probes.push_back({"hbm_copy_bandwidth", "GB/s", 4012.5, 3.25, 20});
  p.probes.push_back({"kernel_launch_overhead", "us", 2.125, 0.0625, 50});
  p.collectives.push_back({"all_reduce",
                           8,
                           0.031,
                           0.042,
                           {{0, 65535, 12.5, 20.25}, {65536, int64_t{8} << 30, 35.0, 180.125}}});
  p.collectives.push_back({"all_gather", 8, 0.01, 0.02, {{0, 1 << 20, 9.5, 150.0}}});
  GemmFit g;
  g.dtype = "bf16";
  g.peak_tflops = 989.0;
  g.e_max = 0.78;
  g.intensity_half = 310.5;
  g.max_rel_error = 0.05;
  p.gemm.push_back(g);

  const std::string yaml = write_profile_yaml(p);
  const CalibrationProfile q = parse_profile_yaml(yaml, "p.yaml");
  CHECK(q.source == p.source);
  CHECK(q.gpu_name == p.gpu_name);
  CHECK(q.gpu_count == 8);
  CHECK(q.driver_version == p.driver_version);
  CHECK(q.cuda_version == "12.8");  // quoted, so not read back as the number 12.8
  CHECK(q.nccl_version == p.nccl_version);
  CHECK(q.spread == doctest::Approx(p.spread));
  REQUIRE(q.probes.size() == 2);
  CHECK(q.probes[1].name == "kernel_launch_overhead");
  CHECK(q.probes[1].unit == "us");
  CHECK(q.probes[1].mean == doctest::Approx(2.125));
  CHECK(q.probes[1].stddev == doctest::Approx(0.0625));
  CHECK(q.probes[1].samples == 50);
  REQUIRE(q.collectives.size() == 2);
  CHECK(q.collectives[0].op == "all_reduce");
  CHECK(q.collectives[0].ranks == 8);
  CHECK(q.collectives[0].heldout_rel_error == doctest::Approx(0.042));
  REQUIRE(q.collectives[0].regimes.size() == 2);
  CHECK(q.collectives[0].regimes[1].min_bytes == 65536);
  CHECK(q.collectives[0].regimes[1].max_bytes == int64_t{8} << 30);
  CHECK(q.collectives[0].regimes[1].algbw_GBps == doctest::Approx(180.125));
  REQUIRE(q.gemm.size() == 1);
  CHECK(q.gemm[0].intensity_half == doctest::Approx(310.5));
  CHECK(write_profile_yaml(q) == yaml);

  // Through a file too.
  const std::string path = "syncsim_test_profile.yaml";
  write_profile_file(p, path);
  CHECK(read_profile_file(path).collectives.size() == 2);
  std::remove(path.c_str());
}

TEST_CASE("calibration: profile errors name file:line:col and the path") {
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml("syncsim_calibration_profile: 1\ngpu: {nmae: x}\n", "p.yaml"),
      "p.yaml:2:7: gpu.nmae: unknown key", ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml(
          "syncsim_calibration_profile: 1\ncollectives:\n  - op: all_reduce\n    ranks: 8\n"
          "    regimes:\n      - {min_bytes: 0, max_bytes: 10, latency_us: fast, algbw_GBps: 1}\n",
          "p.yaml"),
      "p.yaml:6:51: collectives.0.regimes.0.latency_us: expected a number, found \"fast\"",
      ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml("gpu: {name: x}\n", "p.yaml"),
      "p.yaml:1:1: syncsim_calibration_profile: expected the format version 1, found nothing",
      ProfileError);
}

TEST_CASE("calibration: the profile's compute section (from a profiler trace) round-trips") {
  CalibrationProfile p;
  p.source = "syncsim calibrate trace step.json";
  p.kernel_launch_us = 2.25;
  p.kernel_gaps = 812;
  p.attention.push_back({"bf16", 989, 0.52, 24});
  const std::string yaml = write_profile_yaml(p);
  CHECK(yaml.find("compute:") != std::string::npos);
  const CalibrationProfile q = parse_profile_yaml(yaml, "p.yaml");
  CHECK(q.kernel_launch_us == 2.25);
  CHECK(q.kernel_gaps == 812);
  REQUIRE(q.attention.size() == 1);
  CHECK(q.attention[0].dtype == "bf16");
  CHECK(q.attention[0].peak_tflops == 989);
  CHECK(q.attention[0].efficiency == 0.52);
  CHECK(q.attention[0].calls == 24);
  CHECK(write_profile_yaml(q) == yaml);
  // Without measurements there is no compute section.
  CHECK(write_profile_yaml(CalibrationProfile{}).find("compute") == std::string::npos);

  CHECK_THROWS_WITH_AS(
      parse_profile_yaml("syncsim_calibration_profile: 1\ncompute: {kernel_lunch_us: 2}\n",
                         "p.yaml"),
      "p.yaml:2:11: compute.kernel_lunch_us: unknown key", ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml("syncsim_calibration_profile: 1\ncompute: {kernel_launch_us: -1}\n",
                         "p.yaml"),
      "p.yaml:2:10: compute: expected kernel_launch_us >= 0 and kernel_gaps >= 0", ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml("syncsim_calibration_profile: 1\ncompute:\n  attention:\n"
                         "    - {dtype: bf16, efficiency: 1.5}\n",
                         "p.yaml"),
      "p.yaml:4:7: compute.attention.0: expected 0 < efficiency <= 1, peak_tflops >= 0 and "
      "calls >= 0, found efficiency \"1.5\"",
      ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml("syncsim_calibration_profile: 1\ncompute:\n  attention:\n"
                         "    - {dtype: bf17, efficiency: 0.5}\n",
                         "p.yaml"),
      "p.yaml:4:7: compute.attention.0.dtype: expected a dtype bf16|fp16|fp8|int8|tf32|fp32, "
      "found \"bf17\"",
      ProfileError);
}

TEST_CASE("calibration: the profile's physical block round-trips and rejects bad values") {
  CalibrationProfile p;
  PhysicalFit f;
  f.scenario = "cluster.yaml";
  f.fidelity = "analytic";
  f.points = 28;
  f.rms_rel_error = 0.0125;
  f.max_rel_error = 0.0625;
  f.parameters.push_back({"base_latency.Simple", "us", 12.5, 0.25, 8.4, true});
  f.parameters.push_back({"nic_efficiency", "", 0.875, 0, 1.0, false});
  p.physical = f;
  const CalibrationProfile q = parse_profile_yaml(write_profile_yaml(p), "p.yaml");
  REQUIRE(q.physical.has_value());
  CHECK(q.physical->scenario == "cluster.yaml");
  CHECK(q.physical->points == 28);
  CHECK(q.physical->max_rel_error == 0.0625);
  REQUIRE(q.physical->parameters.size() == 2);
  CHECK(q.physical->parameters[0].name == "base_latency.Simple");
  CHECK(q.physical->parameters[0].value == 12.5);
  CHECK(q.physical->parameters[0].stddev == 0.25);
  CHECK(q.physical->parameters[0].identified);
  CHECK(q.physical->parameters[1].unit.empty());
  CHECK_FALSE(q.physical->parameters[1].identified);
  CHECK_FALSE(parse_profile_yaml(write_profile_yaml(CalibrationProfile{}), "e.yaml").physical);

  const std::string head = "syncsim_calibration_profile: 1\nphysical:\n  parameters:\n";
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml(head + "    - {name: nic_efficiency, value: -1}\n", "b.yaml"),
      doctest::Contains("b.yaml:4:7: physical.parameters.0: expected value > 0"), ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml(head + "    - {name: x, value: 1, colour: red}\n", "b.yaml"),
      doctest::Contains("physical.parameters.0.colour: unknown key"), ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml("syncsim_calibration_profile: 1\nphysical: {}\n", "b.yaml"),
      doctest::Contains("physical.parameters: expected at least one parameter"), ProfileError);
}
