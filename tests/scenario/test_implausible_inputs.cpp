// Inputs that load and run but would answer wrongly without a word: each is refused at load time
// (file:line:col: path: expected ..., got ...) or loads with a warning naming its key.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using syncsim::app::load_scenario_text;
using syncsim::app::LoadOptions;
using syncsim::app::Override;
using syncsim::app::Scenario;
using syncsim::testing::scenario_error_of;
using syncsim::testing::text_with;

namespace {

// 32 GPUs: 2 leaves x 2 hosts x 8 GPUs, a DDP step at flow fidelity. Line numbers refer to this.
const std::string kBase = R"(name: t
fidelity: flow
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  host: {gpus: 8, nics: 8}
  links:
    host: {bandwidth: 100Gbps, delay: 1us}
    fabric: {bandwidth: 400Gbps, delay: 1us}
    nvlink: {bandwidth: 3600Gbps, delay: 100ns}
workload:
  model: gpt3-2.7b
  algorithm: ring
)";

Scenario load(const std::string& text, std::vector<Override> overrides = {}) {
  LoadOptions o;
  o.overrides = std::move(overrides);
  return load_scenario_text(text, "t.yaml", o);
}

std::string error_of(const std::string& text, std::vector<Override> overrides = {}) {
  LoadOptions o;
  o.overrides = std::move(overrides);
  return scenario_error_of(text, o);
}

// The load warnings about `path` (each is `file:line:col: path: message`).
std::vector<std::string> warnings_at(const Scenario& s, const std::string& path) {
  std::vector<std::string> out;
  for (const std::string& w : s.load_warnings) {
    if (w.find(": " + path + ": ") != std::string::npos) out.push_back(w);
  }
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("implausible: the base scenario loads without warnings") {
  const Scenario s = load(kBase);
  CHECK(s.load_warnings.empty());
}

TEST_CASE(
    "implausible: kv_heads follows heads on a multi-head preset, not on a grouped-query one") {
  // GPT-3 is multi-head: overriding heads keeps it multi-head (it used to keep kv_heads 96).
  const Scenario gpt =
      load(text_with(kBase, "  model: gpt3-2.7b", "  model: {preset: gpt3-175b, heads: 128}"));
  CHECK(gpt.workload->step.model.heads == 128);
  CHECK(gpt.workload->step.model.kv_heads == 128);
  const Scenario gpt160 = load(text_with(
      kBase, "  model: gpt3-2.7b", "  model: {preset: gpt3-175b, heads: 160, hidden: 12800}"));
  CHECK(gpt160.workload->step.model.kv_heads == 160);
  // Llama 3 is grouped-query: its 8 KV heads stay when they divide the new head count ...
  const Scenario llama =
      load(text_with(kBase, "  model: gpt3-2.7b", "  model: {preset: llama3-70b, heads: 128}"));
  CHECK(llama.workload->step.model.kv_heads == 8);
  // ... an explicit kv_heads wins ...
  const Scenario explicit_kv = load(text_with(
      kBase, "  model: gpt3-2.7b", "  model: {preset: llama3-70b, heads: 128, kv_heads: 16}"));
  CHECK(explicit_kv.workload->step.model.kv_heads == 16);
  // ... and when they do not divide it, the error names both and where kv_heads came from.
  CHECK(error_of(text_with(kBase, "  model: gpt3-2.7b",
                           "  model: {preset: llama3-70b, heads: 100, hidden: 8000}")) ==
        "t.yaml:12:38: workload.model.heads: expected heads divisible by kv_heads, got heads 100 "
        "and kv_heads 8 (kv_heads 8 kept from the grouped-query preset: set kv_heads too)");
  CHECK(error_of(text_with(kBase, "  model: gpt3-2.7b",
                           "  model: {preset: llama3-70b, heads: 64, kv_heads: 48}")) ==
        "t.yaml:12:52: workload.model.kv_heads: expected heads divisible by kv_heads, got heads 64 "
        "and kv_heads 48");
  CHECK(
      error_of(
          text_with(kBase, "  model: gpt3-2.7b", "  model: {preset: gpt3-175b, heads: 160}")) ==
      "t.yaml:12:37: workload.model.heads: expected heads dividing hidden (12288), got heads 160");
}

TEST_CASE("implausible: more NICs than GPUs is an error, an uneven share a warning") {
  CHECK(error_of(kBase, {{"fabric.host.nics", "16"}}) ==
        "--set:1:1: fabric.host.nics: expected at most one NIC per GPU (each GPU sends through "
        "one NIC, so NICs beyond fabric.host.gpus = 8 would carry nothing; give one NIC the "
        "combined rate instead), got 16");
  CHECK(
      contains(error_of(text_with(kBase, "nics: 8", "nics: 9")), "t.yaml:6:25: fabric.host.nics"));
  const Scenario uneven = load(kBase, {{"fabric.host.nics", "3"}});
  REQUIRE(warnings_at(uneven, "fabric.host.nics").size() == 1);
  CHECK(contains(uneven.load_warnings.front(), "3 NICs for 8 GPUs"));
  CHECK(load(kBase, {{"fabric.host.nics", "4"}}).load_warnings.empty());
}

TEST_CASE("implausible: an oversubscription no spine count can build is refused, rounding warned") {
  const std::string derived = text_with(kBase, "spines: 2}", "oversubscription: 100}");
  // One spine (the fewest) gives 4:1 here: 2 hosts x 8 NICs x 100G under one 400G uplink.
  CHECK(error_of(derived) ==
        "t.yaml:5:64: fabric.spine_leaf.oversubscription: expected at most 4:1 (a single spine, "
        "the fewest there can be, gives a leaf 400 Gbps of uplink under 1600 Gbps of host links; "
        "for less uplink, lower links.fabric.bandwidth), got 100:1");
  const Scenario three = load(text_with(kBase, "spines: 2}", "oversubscription: 3}"));
  REQUIRE(warnings_at(three, "fabric.spine_leaf.oversubscription").size() == 1);
  CHECK(three.load_warnings.front().rfind(
            "t.yaml:5:64: fabric.spine_leaf.oversubscription: 3:1 builds 2 spines", 0) == 0);
  CHECK(contains(three.load_warnings.front(), "which is 2:1"));
  CHECK(load(text_with(kBase, "spines: 2}", "oversubscription: 2}")).load_warnings.empty());
  CHECK(load(text_with(kBase, "spines: 2}", "oversubscription: 4}")).load_warnings.empty());
}

TEST_CASE("implausible: tensor parallelism across hosts is a warning") {
  const Scenario across = load(kBase, {{"workload.tensor_parallel", "16"}});
  REQUIRE(warnings_at(across, "workload.tensor_parallel").size() == 1);
  CHECK(contains(across.load_warnings.front(), "groups of 16 GPUs span hosts of 8 GPUs"));
  CHECK(load(kBase, {{"workload.tensor_parallel", "8"}}).load_warnings.empty());
  CHECK(load(kBase, {{"workload.tensor_parallel", "4"}}).load_warnings.empty());
}

TEST_CASE("implausible: link rates outside 1 Mb/s .. 100 Tb/s are refused") {
  // 100 b/s used to overflow simulated time ("an event was scheduled in the past", exit 1).
  CHECK(error_of(kBase, {{"fabric.links.fabric.bandwidth", "0.0000001Gbps"}}) ==
        "--set:1:1: fabric.links.fabric.bandwidth: expected a link rate in 1Mbps..100Tbps (the "
        "range of real links, and what keeps simulated time within its int64 picoseconds), got "
        "\"0.0000001Gbps\"");
  CHECK(contains(error_of(text_with(kBase, "3600Gbps", "200Tbps")),
                 "t.yaml:10:25: fabric.links.nvlink.bandwidth: expected a link rate in"));
  CHECK_NOTHROW(load(kBase, {{"fabric.links.host.bandwidth", "1Mbps"}}));
  CHECK_NOTHROW(load(kBase, {{"fabric.links.nvlink.bandwidth", "100Tbps"}}));
  CHECK(
      contains(error_of(kBase, {{"fabric.links.host.bandwidth", "999999bps"}}), "1Mbps..100Tbps"));
}

TEST_CASE("implausible: messages beyond the 32-bit sequence space at the MTU are refused") {
  // 16000000 GB used to die at packet fidelity with "message too large for 32-bit PSNs" (exit 1).
  const std::string traffic = kBase + R"(traffic:
  - pattern: messages
    messages: [{src: 0, dst: 9, size: 16000000GB}]
)";
  CHECK(error_of(traffic) ==
        "t.yaml:16:39: traffic.0.messages.0.size: expected a message of at most 17179869176 KiB "
        "(2^32 - 2 packets of the fabric's smallest MTU, 4 KiB: the transports' 32-bit sequence "
        "numbers), got 16000 TB");
  // (2^32 - 2) x 4 KiB is the limit at the default MTU.
  CHECK_NOTHROW(load(text_with(traffic, "16000000GB", "17179869176KiB")));
  CHECK(contains(error_of(text_with(traffic, "16000000GB", "17179869180KiB")),
                 "expected a message of at most 17179869176 KiB"));
  CHECK(contains(error_of(kBase, {{"workload.ddp", "{bucket_cap_mb: 20000000000}"}}),
                 "--set:1:17: workload.ddp.bucket_cap_mb: expected a message of at most"));
}

TEST_CASE("implausible: packet-only settings at flow or analytic fidelity are warnings") {
  const std::string lossless = text_with(kBase, "    nvlink: {bandwidth: 3600Gbps, delay: 100ns}",
                                         R"(    nvlink: {bandwidth: 3600Gbps, delay: 100ns}
  switch:
    buffer: 32MiB
    priorities: 8
    pfc: {enabled: true, lossless_priorities: [0]}
    ecn: {enabled: true}
  nic: {dcqcn: {enabled: true}}
  transport:
    kind: tcp
    tcp: {initial_window: 20, stack_latency: 10us}
  impairments: {loss: 0.001})");
  const Scenario flow = load(lossless);
  for (const char* key : {"fabric.switch.pfc", "fabric.switch.ecn", "fabric.nic.dcqcn",
                          "fabric.transport.tcp.initial_window", "fabric.impairments.loss"}) {
    INFO(key);
    REQUIRE(warnings_at(flow, key).size() == 1);
    CHECK(contains(warnings_at(flow, key).front(), "does nothing at flow fidelity"));
  }
  // The stack latency acts at every fidelity (host staging), so it is not named.
  CHECK(warnings_at(flow, "fabric.transport.tcp.stack_latency").empty());
  CHECK(flow.load_warnings.size() == 5);
  const Scenario analytic = load(lossless, {{"fidelity", "analytic"}});
  CHECK(contains(warnings_at(analytic, "fabric.switch.pfc").front(), "at analytic fidelity"));
  CHECK(load(lossless, {{"fidelity", "packet"}}).load_warnings.empty());
  // Disabled, or not stated: nothing to say.
  CHECK(load(lossless, {{"fabric.switch.pfc.enabled", "false"},
                        {"fabric.switch.ecn.enabled", "false"},
                        {"fabric.nic", "null"},
                        {"fabric.transport", "null"},
                        {"fabric.impairments", "null"}})
            .load_warnings.empty());
}

TEST_CASE("implausible: a calibration profile from other hardware is a warning") {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / "syncsim-test-h200-profile.yaml";
  {
    std::ofstream out(file);
    out << R"(syncsim_calibration_profile: 1
gpu: {name: NVIDIA H200, count: 8}
gemm:
  - {dtype: bf16, peak_tflops: 989, e_max: 0.78, intensity_half: 310.5, max_rel_error: 0.05}
collectives:
  - op: all_reduce
    ranks: 16
    max_rel_error: 0.03
    heldout_rel_error: 0.04
    regimes:
      - {min_bytes: 0, max_bytes: 8589934592, latency_us: 35.0, algbw_GBps: 180.2}
)";
  }
  const Scenario gemm = load(kBase, {{"workload.calibration", file.string()}});
  REQUIRE(warnings_at(gemm, "workload.calibration").size() == 1);
  CHECK(contains(gemm.load_warnings.front(),
                 "measured on NVIDIA H200, the scenario's workload.gpu is h100"));
  CHECK(load(kBase, {{"workload.calibration", file.string()}, {"workload.gpu", "h200"}})
            .load_warnings.empty() == true);

  // 16 ranks on 8-GPU nodes crossed the network at a bus bandwidth of 2703 Gbps: not 100G NICs.
  const Scenario coll = load(kBase, {{"collective", "{calibration: " + file.string() + "}"}});
  const std::vector<std::string> w = warnings_at(coll, "collective.calibration");
  REQUIRE(w.size() == 2);
  CHECK(contains(w[0], "measured on NVIDIA H200"));
  CHECK(contains(w[1], "measured on faster NICs"));
  CHECK(warnings_at(load(kBase, {{"collective", "{calibration: " + file.string() + "}"},
                                 {"workload.gpu", "h200"},
                                 {"fabric.links.host.bandwidth", "3200Gbps"}}),
                    "collective.calibration")
            .empty());
  std::filesystem::remove(file);
}

TEST_CASE("implausible: transport blocks of another transport kind are warnings") {
  const std::string roce = text_with(kBase, "    nvlink: {bandwidth: 3600Gbps, delay: 100ns}",
                                     R"(    nvlink: {bandwidth: 3600Gbps, delay: 100ns}
  transport:
    kind: roce
    tcp: {initial_window: 20}
    host_staging: {pcie: 256Gbps})");
  const Scenario s = load(roce, {{"fidelity", "packet"}});
  CHECK(warnings_at(s, "fabric.transport.tcp").size() == 1);
  CHECK(warnings_at(s, "fabric.transport.host_staging").size() == 1);
  const Scenario staged =
      load(roce, {{"fidelity", "packet"}, {"fabric.transport.kind", "roce_host_staged"}});
  CHECK(warnings_at(staged, "fabric.transport.tcp").size() == 1);
  CHECK(warnings_at(staged, "fabric.transport.host_staging").empty());
  CHECK(
      load(roce, {{"fidelity", "packet"}, {"fabric.transport.kind", "tcp"}}).load_warnings.empty());
}

TEST_CASE("host staging: GPUs per PCIe switch default from the GPU preset, bad values refused") {
  // h100 (the workload's default GPU): DGX H100 puts each GPU behind its own ConnectX-7's switch.
  CHECK(load(kBase).network.transport.staging.gpus_per_pcie_switch == 1);
  CHECK(load(kBase, {{"workload.gpu", "a100"}}).network.transport.staging.gpus_per_pcie_switch ==
        2);
  // Capped at the host's GPUs: one GPU per host cannot share a switch with another.
  CHECK(
      load(kBase, {{"workload.gpu", "a100"}, {"fabric.host.gpus", "1"}, {"fabric.host.nics", "1"}})
          .network.transport.staging.gpus_per_pcie_switch == 1);
  CHECK(load(kBase, {{"fabric.host.gpus_per_pcie_switch", "4"}})
            .network.transport.staging.gpus_per_pcie_switch == 4);
  CHECK(error_of(kBase, {{"fabric.host.gpus_per_pcie_switch", "9"}}) ==
        "--set:1:1: fabric.host.gpus_per_pcie_switch: expected at most fabric.host.gpus (8) GPUs "
        "behind one PCIe switch, found 9");
  CHECK(contains(error_of(kBase, {{"fabric.host.gpus_per_pcie_switch", "0"}}),
                 "fabric.host.gpus_per_pcie_switch: expected an integer in 1.."));
  CHECK(contains(error_of(text_with(kBase, "nics: 8}", "nics: 8, gpus_per_pcie_switch: 16}")),
                 "t.yaml:6:"));
  // It shapes copies through host memory only: written under GPUDirect RDMA it warns.
  const Scenario direct = load(kBase, {{"fabric.host.gpus_per_pcie_switch", "2"}});
  REQUIRE(warnings_at(direct, "fabric.host.gpus_per_pcie_switch").size() == 1);
  CHECK(contains(warnings_at(direct, "fabric.host.gpus_per_pcie_switch").front(),
                 "has no effect with fabric.transport.kind: roce"));
  CHECK(warnings_at(load(kBase), "fabric.host.gpus_per_pcie_switch").empty());
  CHECK(warnings_at(load(kBase, {{"fabric.host.gpus_per_pcie_switch", "2"},
                                 {"fabric.transport.kind", "tcp"}}),
                    "fabric.host.gpus_per_pcie_switch")
            .empty());
}
