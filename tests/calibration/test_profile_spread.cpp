// The spread of repeated runs in a profile (probe min/median/max, a collective line's spread and
// sample count): round trip and malformed input.
#include <doctest/doctest.h>

#include <cmath>

#include "calibration/profile.hpp"

using namespace syncsim::calibration;

TEST_CASE("calibration: summarize gives mean, sample stddev, min, median and max") {
  const ProbeValue v = summarize("hbm_copy_bandwidth", "GB/s", {4.0, 1.0, 3.0, 2.0});
  CHECK(v.name == "hbm_copy_bandwidth");
  CHECK(v.unit == "GB/s");
  CHECK(v.samples == 4);
  CHECK(v.mean == doctest::Approx(2.5));
  CHECK(v.stddev == doctest::Approx(std::sqrt(5.0 / 3.0)));  // (2.25 + 0.25 + 0.25 + 2.25) / 3
  CHECK(v.min == 1.0);
  CHECK(v.median == 2.5);
  CHECK(v.max == 4.0);
  const ProbeValue odd = summarize("x", "us", {5.0, 1.0, 3.0});
  CHECK(odd.median == 3.0);
  const ProbeValue none = summarize("x", "us", {});
  CHECK(none.samples == 0);
  CHECK(none.mean == 0);
  CHECK(none.max == 0);
}

TEST_CASE("calibration: spread fields round-trip, and old profiles without them still read") {
  CalibrationProfile p;
  p.gpu_name = "NVIDIA H200";
  p.probes.push_back(summarize("kernel_launch_overhead", "us", {2.5, 2.25, 2.75, 2.5, 3.0}));
  p.probes.push_back({"legacy", "us", 1.0, 0.0, 3});  // no min/median/max recorded
  CollectiveProfile c;
  c.op = "send_recv";
  c.ranks = 2;
  c.regimes.push_back({0, 1 << 30, 8.5, 45.25});
  c.spread = 0.0125;
  c.samples = 5;
  p.collectives.push_back(c);
  CollectiveProfile fitted;  // from nccl-tests logs: spread unknown
  fitted.op = "all_reduce";
  fitted.ranks = 8;
  fitted.regimes.push_back({0, 1 << 30, 20.0, 150.0});
  p.collectives.push_back(fitted);

  const std::string yaml = write_profile_yaml(p);
  CHECK(yaml.find("min: 2.25") != std::string::npos);
  CHECK(yaml.find("median: 2.5") != std::string::npos);
  CHECK(yaml.find("max: 3") != std::string::npos);
  const CalibrationProfile q = parse_profile_yaml(yaml, "p.yaml");
  REQUIRE(q.probes.size() == 2);
  CHECK(q.probes[0].min == 2.25);
  CHECK(q.probes[0].median == 2.5);
  CHECK(q.probes[0].max == 3.0);
  CHECK(q.probes[0].stddev == doctest::Approx(p.probes[0].stddev));
  CHECK(q.probes[1].min == 0);
  CHECK(q.probes[1].max == 0);
  REQUIRE(q.collectives.size() == 2);
  CHECK(q.collectives[0].spread == doctest::Approx(0.0125));
  CHECK(q.collectives[0].samples == 5);
  CHECK(q.collectives[1].spread == 0);
  CHECK(q.collectives[1].samples == 0);
  CHECK(write_profile_yaml(q) == yaml);
  // Only the fields that were recorded are written: the legacy probe has no min/median/max keys.
  CHECK(yaml.find("legacy, unit: us, mean: 1, stddev: 0, samples: 3}") != std::string::npos);
}

TEST_CASE("calibration: malformed spread fields name file:line:col") {
  const std::string head = "syncsim_calibration_profile: 1\n";
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml(
          head + "probes:\n  - {name: x, unit: us, mean: 1, min: 2, median: 1, max: 3}\n",
          "p.yaml"),
      "p.yaml:3:5: probes.0: expected min <= median <= max", ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml(head + "probes:\n  - {name: x, unit: us, mean: 1, median: lots}\n",
                         "p.yaml"),
      "p.yaml:3:42: probes.0.median: expected a number, found \"lots\"", ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml(head + "probes:\n  - {name: x, unit: us, mean: 1, p99: 2}\n", "p.yaml"),
      "p.yaml:3:34: probes.0.p99: unknown key", ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml(
          head +
              "collectives:\n  - op: send_recv\n    ranks: 2\n    samples: -1\n"
              "    regimes:\n      - {min_bytes: 0, max_bytes: 10, latency_us: 1, algbw_GBps: 1}\n",
          "p.yaml"),
      "p.yaml:3:5: collectives.0: expected spread >= 0 and samples >= 0", ProfileError);
  CHECK_THROWS_WITH_AS(
      parse_profile_yaml(
          head +
              "collectives:\n  - op: send_recv\n    ranks: 2\n    spread: wide\n"
              "    regimes:\n      - {min_bytes: 0, max_bytes: 10, latency_us: 1, algbw_GBps: 1}\n",
          "p.yaml"),
      "p.yaml:5:13: collectives.0.spread: expected a number, found \"wide\"", ProfileError);
}
