// Whole-scenario invariants: conservation, determinism, fidelity agreement.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

std::vector<std::string> scenario_files() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(SYNCSIM_SOURCE_DIR "/scenarios")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

nlohmann::json without_wall(nlohmann::json j) {
  j.erase("wall_s");
  return j;
}

}  // namespace

TEST_CASE("run: every scenario in scenarios/ conserves bytes" * doctest::test_suite("slow")) {
  const auto files = scenario_files();
  REQUIRE(files.size() >= 3);
  for (const auto& file : files) {
    CAPTURE(file);
    // Scale studies run at their smallest size here (docs/scale.md runs them in full).
    app::LoadOptions small;
    if (file.find("ddp-70b-16k.yaml") != std::string::npos) {
      small.overrides = {{"fabric.fat_tree.pods", "1"},
                         {"fabric.fat_tree.leaves_per_pod", "2"},
                         {"workload.model", "llama3-8b"}};
    }
    if (file.find("llama3-405b-16k.yaml") != std::string::npos) {
      small.overrides = {{"fabric.fat_tree.pods", "1"}};
    }
    if (file.find("multi-job.yaml") != std::string::npos) {
      small.overrides = {{"jobs.0.workload.model", "{preset: gpt3-1.3b, layers: 2}"},
                         {"jobs.1.workload.model", "{preset: gpt3-1.3b, layers: 2}"}};
    }
    // The EP all-to-alls of 256 GPUs: ~13 s at flow fidelity, ~6 s analytic (the same step).
    if (file.find("moe-deepseek-256.yaml") != std::string::npos) {
      small.overrides = {{"fidelity", "analytic"}};
    }
    // 8,192 hosts at packet level: ~30 s with its 2 MB messages, 0.5 s with one packet each.
    if (file.find("permutation-8k.yaml") != std::string::npos) {
      small.overrides = {{"traffic.0.size", "4096B"}};
    }
    // 16,384 hosts: ~35 s. 5 of its 64 pods keep every tier of its paths, and none of its shifts
    // is a multiple of their 1,280 hosts (with 2 or 4 pods some would wrap to the sender): 0.7 s.
    if (file.find("all-to-all-burst-16k.yaml") != std::string::npos) {
      small.overrides = {{"fabric.fat_tree.pods", "5"}};
    }
    // Its base point, a 4,096-GPU DDP step at flow fidelity: about 4 min; its sweep's smallest
    // (256 GPUs of the same fabric): 3 s.
    if (file.find("capacity-gpus.yaml") != std::string::npos) {
      small.overrides = {{"workload.data_parallel", "256"}};
    }
    if (file.find("capacity-70b-4k.yaml") != std::string::npos) {
      small.overrides = {{"fabric.spine_leaf.leaves", "2"}, {"workload.model", "llama3-8b"}};
    }
    const app::Scenario s = app::load_scenario_file(file, small);
    const app::RunResult r = app::run_scenario(s);
    if (s.workload) {
      REQUIRE(r.step.has_value());
      CHECK(r.step->step > Time::zero());
    }
    if (!s.traffic.empty()) CHECK(r.counters.bytes_injected > 0);
    // A PFC deadlock (pfc-deadlock.yaml) stops the run with bytes stuck in the fabric, by design.
    if (r.deadlock.detected) {
      CHECK(!r.deadlock.ports.empty());
      continue;
    }
    // Retransmitting transports also inject what the receiver discards (out of order, duplicates).
    CHECK(r.counters.bytes_injected ==
          r.counters.bytes_delivered + r.counters.bytes_dropped + r.bytes_discarded);
    // With a workload (or a Chakra replay) beside the traffic, completed transfers include the
    // collectives' own.
    const bool collectives = s.workload.has_value() || s.chakra.has_value() || !s.jobs.empty();
    if (r.counters.bytes_dropped == 0 && !collectives) CHECK(r.messages_completed == r.messages);
    if (r.counters.bytes_dropped == 0 && collectives) CHECK(r.messages_completed >= r.messages);
  }
}

TEST_CASE("run: same scenario and seed give identical JSON in one process") {
  app::LoadOptions opts;
  opts.overrides = {{"traffic.0.size", "1MiB"}};  // keeps the NVLink messages of traffic.1
  const auto s =
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/ring-shift-8gpu.yaml", opts);
  const auto a = without_wall(app::to_json(app::run_scenario(s)));
  const auto b = without_wall(app::to_json(app::run_scenario(s)));
  CHECK(a == b);
  CHECK(a["events"].get<uint64_t>() > 0);
}

TEST_CASE("run: another ECMP hash seed changes the outcome") {
  auto run_with_hash = [](const std::string& seed) {
    app::LoadOptions opts;
    opts.overrides = {{"fabric.ecmp.hash_seed", seed}, {"traffic.0.size", "1MiB"}};
    return without_wall(app::to_json(app::run_scenario(
        app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/ring-shift-8gpu.yaml", opts))));
  };
  const auto base = run_with_hash("0");
  bool changed = false;
  for (const char* seed : {"1", "2", "3"}) {
    const auto other = run_with_hash(seed);
    changed |= other["messages"]["fct_s"] != base["messages"]["fct_s"];
  }
  CHECK(changed);
}

TEST_CASE("run: packet and analytic fidelity agree on an uncongested permutation-free pattern") {
  // One flow per host pair on a non-blocking fabric with distinct spines is contention-free only
  // when ECMP does not collide; a single message is the clean comparison.
  const std::string yaml = R"(
name: one-flow
fidelity: packet
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 2, spines: 2}
  links:
    host: {bandwidth: 200Gbps, delay: 700ns}
    fabric: {bandwidth: 400Gbps, delay: 1us}
traffic:
  - pattern: messages
    messages: [{src: 0, dst: 3, size: 3MB}]
)";
  const auto packet = app::run_scenario(app::load_scenario_text(yaml, "inline.yaml"));
  app::LoadOptions opts;
  opts.overrides = {{"fidelity", "analytic"}};
  const auto analytic = app::run_scenario(app::load_scenario_text(yaml, "inline.yaml", opts));
  CHECK(packet.fct.max_s == doctest::Approx(analytic.fct.max_s).epsilon(1e-9));
  // The packet backend also carries go-back-N's coalesced ACKs (PFC is off: the class is lossy),
  // four hops each (NIC, leaf, spine, leaf) on the reverse path.
  CHECK(packet.counters.packet_hops - 4 * packet.acks == analytic.counters.packet_hops);
  CHECK(analytic.counters.max_queue_bytes == 0);
}
