// What the run reports about itself, checked against independent counts: ECN marks against the
// packets sent, fairness per traffic entry against the same flows alone, time series ending with
// the run, unfinished flows listed, and observe.ports errors that point at the file.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;

namespace {

app::Scenario scenario_file(const std::string& name, const std::vector<std::string>& sets = {}) {
  app::LoadOptions o;
  for (const auto& s : sets) o.overrides.push_back(app::parse_override(s));
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name, o);
}

// 16 x 2 MiB into one 400G host with the ConnectX DCQCN preset: flows cut to low rates leave
// far-ahead pacing wake-ups behind, superseded (cancelled) when the rate recovers.
const std::string kIncast400 = R"(name: t
seed: 1
fidelity: packet
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 3, hosts_per_leaf: 9, spines: 1}
  host: {gpus: 1, nics: 1}
  links:
    host:   {bandwidth: 400Gbps, delay: 500ns, mtu: 4096B, header: 64B}
    fabric: {bandwidth: 1600Gbps, delay: 500ns, mtu: 4096B, header: 64B}
  switch:
    pfc: {enabled: true, lossless_priorities: [3]}
    ecn: {enabled: true}
  nic:
    dcqcn: {enabled: true, preset: connectx}
observe: {interval: 10us, flows: false}
traffic:
  - {pattern: incast, senders: 16, receiver: 0, size: 32MiB, priority: 3}
)";

}  // namespace

TEST_CASE("ecn_marks counts each marked packet once; ecn_hop_marks counts every hop's decision") {
  const app::RunResult r = app::run_scenario(scenario_file("incast-dcqcn.yaml"));
  REQUIRE(r.ecn_marks > 0);
  // A packet is marked at most once: never more marks than data packets sent.
  CHECK(r.ecn_marks <= r.counters.packets_injected);
  // CE is sticky, so marking decisions at later hops of an already marked packet add up
  // separately: on this incast both the spine and the receiver's leaf mark.
  CHECK(r.ecn_hop_marks > r.ecn_marks);
  const nlohmann::json j = app::to_json(r);
  CHECK(j["ecn_marks"].get<uint64_t>() == r.ecn_marks);
  CHECK(j["ecn_hop_marks"].get<uint64_t>() == r.ecn_hop_marks);
}

TEST_CASE(
    "jain_by_traffic: fairness within each traffic entry, not across a victim and an incast") {
  const app::RunResult r = app::run_scenario(scenario_file("incast-dcqcn.yaml"));
  REQUIRE(r.jain_by_traffic.size() == 2);
  const app::TrafficFairness& victim = r.jain_by_traffic[0];
  const app::TrafficFairness& incast = r.jain_by_traffic[1];
  CHECK(victim.entry == 0);
  CHECK(victim.messages == 1);
  CHECK(victim.jain_index == doctest::Approx(1.0));  // one flow is fair to itself
  CHECK(incast.pattern == "messages");
  CHECK(incast.messages == 16);
  CHECK(incast.completed == 16);
  // The 16 senders share the bottleneck evenly over their whole transfer ...
  CHECK(incast.jain_index > 0.95);
  // ... while the run-wide index mixes them with the victim's ~50x higher rate.
  CHECK(r.jain_index < 0.5);
  const nlohmann::json j = app::to_json(r);
  REQUIRE(j["jain_by_traffic"].size() == 2);
  CHECK(j["jain_by_traffic"][1]["jain_index"].get<double>() == incast.jain_index);
  CHECK(j["jain_by_traffic"][1]["pattern"] == "messages");
}

TEST_CASE("--timeseries sampling stops at the run's end, not at a cancelled far-ahead timer") {
  app::Scenario s = app::load_scenario_text(kIncast400, "t.yaml");
  const auto dir = std::filesystem::temp_directory_path() / "syncsim_test_timeseries_end";
  std::filesystem::remove_all(dir);
  s.observe->csv_dir = dir.string();
  const app::RunResult r = app::run_scenario(s);
  REQUIRE(r.messages_completed == r.messages);
  std::ifstream in(dir / "queues.csv");
  std::string line, last;
  while (std::getline(in, line)) last = line;
  REQUIRE(!last.empty());
  const double last_sample_s = std::stod(last.substr(0, last.find(',')));
  MESSAGE("run ended at " << r.sim_time_s * 1e3 << " ms, last sample at " << last_sample_s * 1e3
                          << " ms");
  CHECK(last_sample_s <= r.sim_time_s);
  CHECK(last_sample_s > r.sim_time_s - 10e-6 - 1e-12);  // the last interval before the end
  // Sampling does not change the run.
  app::Scenario plain = app::load_scenario_text(kIncast400, "t.yaml");
  plain.observe.reset();
  CHECK(app::run_scenario(plain).sim_time_s == r.sim_time_s);
  std::filesystem::remove_all(dir);
}

TEST_CASE("flow_rates.flows lists flows that never completed, flagged completed: false") {
  const app::RunResult r = app::run_scenario(scenario_file("pfc-deadlock.yaml"));
  REQUIRE(r.deadlock.detected);
  REQUIRE(r.messages_completed == 0);
  // Before, the list was empty here: every flow was stuck.
  REQUIRE(!r.flow_rates.flows.empty());
  for (const auto& f : r.flow_rates.flows) {
    CHECK(!f.completed);
    CHECK(f.finish_s == -1.0);
    CHECK(f.bps >= 0);
  }
  const nlohmann::json j = app::to_json(r);
  CHECK(j["flow_rates"]["flows"][0]["completed"] == false);
  CHECK(j["flow_rates"]["count"].get<std::size_t>() == r.flow_rates.flows.size());

  const app::RunResult done = app::run_scenario(scenario_file("incast-pfc.yaml"));
  for (const auto& f : done.flow_rates.flows) CHECK(f.completed);
}

TEST_CASE("observe.ports: a bad name is an error at its file:line:col with a real suggestion") {
  const std::string rail = R"(name: t
fabric:
  topology: rail_optimized
  rail_optimized: {groups: 1, hosts_per_group: 4, spines: 1}
  host: {gpus: 2, nics: 2}
observe:
  ports: ["group0.rail0->host0.nic0", "leaf0->host0.nic0"]
traffic:
  - {pattern: incast, senders: 3, receiver: 0, size: 64KiB}
)";
  CHECK(testing::scenario_error_of(rail) ==
        "t.yaml:7:39: observe.ports.1: expected an egress port \"owner->peer\" of this fabric "
        "(`syncsim ports` lists them), got \"leaf0->host0.nic0\"; did you mean "
        "\"group0.rail0->host0.nic0\"?");
  CHECK(testing::scenario_error_of(testing::text_with(rail, ", \"leaf0->host0.nic0\"", "")) ==
        "<no error>");
}
