// The hosts' GPU (fabric.host.gpu / workload.gpu) and its NVLink, and the one channel knob
// (collective.channels: auto | N, workload.channels as an alias that warns).
#include <doctest/doctest.h>

#include <string>

#include "models/gpu.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::Bandwidth;
using syncsim::app::load_scenario_text;
using syncsim::app::Scenario;

namespace {

const std::string kFabric = R"(name: t
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 1, spines: 1}
  host: {gpus: 8, nics: 8}
  links:
    host: {bandwidth: 400Gbps, delay: 500ns}
)";

const std::string kWorkload = R"(workload:
  model: {preset: gpt3-1.3b, layers: 2}
  micro_batch: 1
)";

std::string error_of(const std::string& yaml) {
  return syncsim::testing::scenario_error_of(yaml, {});
}

}  // namespace

TEST_CASE("host GPU: h100 by default; its NVLink (18 x 20.6 GB/s) is the NVLink port's rate") {
  const Scenario s = load_scenario_text(kFabric + kWorkload, "t.yaml");
  CHECK(s.host_gpu.name == "h100");
  CHECK(s.fabric.links.nvlink.bandwidth == Bandwidth::bps(2'966'400'000'000));
}

TEST_CASE("host GPU: workload.gpu or fabric.host.gpu picks the preset, whose NVLink follows") {
  std::string a100 = kFabric + kWorkload + "  gpu: a100\n";
  const Scenario s = load_scenario_text(a100, "t.yaml");
  CHECK(s.host_gpu.name == "a100");
  CHECK(s.fabric.links.nvlink.bandwidth == Bandwidth::bps(1'920'000'000'000));  // 12 x 20.0 GB/s
  std::string host = kFabric;
  host.replace(host.find("{gpus: 8, nics: 8}"), 18, "{gpus: 8, nics: 8, gpu: b200}");
  const Scenario b =
      load_scenario_text(host + "traffic: [{pattern: ring_shift, size: 1MiB}]\n", "t.yaml");
  CHECK(b.host_gpu.name == "b200");
  CHECK(b.fabric.links.nvlink.bandwidth == Bandwidth::bps(5'774'400'000'000));  // 18 x 40.1 GB/s
  // An explicit NVLink bandwidth wins over the preset.
  std::string explicit_nvlink =
      kFabric + "    nvlink: {bandwidth: 3600Gbps}\n" + kWorkload + "  gpu: a100\n";
  CHECK(load_scenario_text(explicit_nvlink, "t.yaml").fabric.links.nvlink.bandwidth ==
        Bandwidth::gbps(3600));
  // The two must agree; an unknown preset is an error at its position.
  CHECK(error_of(host + kWorkload + "  gpu: h100\n") ==
        "t.yaml:11:8: workload.gpu: expected the fabric's GPU (fabric.host.gpu: b200), found h100");
  std::string bad = kFabric;
  bad.replace(bad.find("{gpus: 8, nics: 8}"), 18, "{gpus: 8, nics: 8, gpu: v100}");
  CHECK(
      error_of(bad + kWorkload) ==
      "t.yaml:5:33: fabric.host.gpu: expected a GPU preset (a100, h100, h200, b200, gb200), found "
      "\"v100\"");
}

TEST_CASE("collective.channels: auto (NCCL's count) or a number; workload.channels is an alias") {
  CHECK_FALSE(load_scenario_text(kFabric + kWorkload, "t.yaml").collective.channels.has_value());
  CHECK_FALSE(load_scenario_text(kFabric + kWorkload + "collective: {channels: auto}\n", "t.yaml")
                  .collective.channels.has_value());
  const Scenario n =
      load_scenario_text(kFabric + kWorkload + "collective: {channels: 4}\n", "t.yaml");
  CHECK(n.collective.channels == 4u);
  CHECK(n.load_warnings.empty());
  const Scenario alias = load_scenario_text(kFabric + kWorkload + "  channels: 2\n", "t.yaml");
  CHECK(alias.collective.channels == 2u);
  REQUIRE(alias.load_warnings.size() == 1);
  CHECK(alias.load_warnings[0].rfind("t.yaml:11:13: workload.channels: workload.channels is an "
                                     "alias of collective.channels",
                                     0) == 0);
  // Both, agreeing: fine (still a warning); differing: an error.
  CHECK(load_scenario_text(kFabric + kWorkload + "  channels: 2\ncollective: {channels: 2}\n",
                           "t.yaml")
            .collective.channels == 2u);
  CHECK(error_of(kFabric + kWorkload + "  channels: 2\ncollective: {channels: 8}\n")
            .rfind("t.yaml:11:13: workload.channels: expected the same value as "
                   "collective.channels",
                   0) == 0);
  CHECK(error_of(kFabric + kWorkload + "collective: {channels: 0}\n").find("collective.channels") !=
        std::string::npos);
}

TEST_CASE("collective.qps_per_connection: NCCL's 1 by default, 0 (a QP per transfer) .. 256") {
  CHECK(load_scenario_text(kFabric + kWorkload, "t.yaml").collective.qps_per_connection == 1u);
  CHECK(load_scenario_text(kFabric + kWorkload + "collective: {qps_per_connection: 4}\n", "t.yaml")
            .collective.qps_per_connection == 4u);
  CHECK(load_scenario_text(kFabric + kWorkload + "collective: {qps_per_connection: 0}\n", "t.yaml")
            .collective.qps_per_connection == 0u);
  const std::string e = error_of(kFabric + kWorkload + "collective: {qps_per_connection: 300}\n");
  CHECK(e.find("collective.qps_per_connection") != std::string::npos);
  CHECK(e.find("expected 0 (a new queue pair per transfer) .. 256") != std::string::npos);
}

TEST_CASE("collective.channel_copy_bandwidth: the GPU generation's unless given, positive") {
  // NCCL's per-channel Simple maximum (tuning.cc perChMaxTreeBws, one node): Hopper 38.7 GB/s.
  CHECK(load_scenario_text(kFabric + kWorkload, "t.yaml").collective.channel_copy_bytes_per_s ==
        doctest::Approx(38.7e9));
  // fabric.host.gpu sits in the host map.
  std::string fabric_a100 = kFabric;
  fabric_a100.replace(fabric_a100.find("host: {gpus: 8, nics: 8}"),
                      std::string("host: {gpus: 8, nics: 8}").size(),
                      "host: {gpus: 8, nics: 8, gpu: a100}");
  CHECK(load_scenario_text(fabric_a100 + kWorkload, "t.yaml").collective.channel_copy_bytes_per_s ==
        doctest::Approx(24.0e9));
  std::string fabric_b200 = fabric_a100;
  fabric_b200.replace(fabric_b200.find("a100"), 4, "b200");
  CHECK(load_scenario_text(fabric_b200 + kWorkload, "t.yaml").collective.channel_copy_bytes_per_s ==
        doctest::Approx(70.0e9));
  CHECK(load_scenario_text(kFabric + kWorkload + "collective: {channel_copy_bandwidth: 20GB/s}\n",
                           "t.yaml")
            .collective.channel_copy_bytes_per_s == doctest::Approx(20e9));
  const std::string e =
      error_of(kFabric + kWorkload + "collective: {channel_copy_bandwidth: 0Gbps}\n");
  CHECK(e.find("t.yaml:") == 0);
  CHECK(e.find("collective.channel_copy_bandwidth") != std::string::npos);
  CHECK(e.find("expected a positive bandwidth") != std::string::npos);
}
