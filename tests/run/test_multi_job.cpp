// Several training jobs on one fabric (`jobs:`, run/multi_job.hpp), checked against oracles: one
// job alone is the single-workload step; jobs that share no link do not slow each other, jobs that
// share an oversubscribed uplink do; consecutive steps of an unshared job repeat its step; and
// the scenario errors point at the job.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "run/runner.hpp"
#include "run/trace.hpp"
#include "scenario/scenario_loader.hpp"
#include "tests/scenario/scenario_text_fixtures.hpp"

using namespace syncsim;

namespace {

// 4 leaves x 2 hosts of one H100 and one 100G NIC, leaves 2:1 oversubscribed (one 100G uplink per
// leaf). Host h sits on leaf h / 2.
const std::string kFabric = R"(name: jobs-test
seed: 3
fidelity: flow
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 4, hosts_per_leaf: 2, oversubscription: 2}
  host: {gpus: 1, nics: 1}
  links:
    host:   {bandwidth: 100Gbps, delay: 500ns}
    fabric: {bandwidth: 100Gbps, delay: 1us}
)";

// A 4-layer GPT-3 1.3B shape: a few 25 MiB buckets, so a step is quick to simulate.
const std::string kWorkload =
    "{model: {preset: gpt3-1.3b, layers: 4}, gpu: h100, micro_batch: 1, "
    "reuse_bucket_timings: false}";

std::string job(const std::string& name, const std::string& hosts, const std::string& extra = "") {
  return "  - {name: " + name + ", hosts: " + hosts + ", workload: " + kWorkload + extra + "}\n";
}

app::RunResult run_text(const std::string& yaml) {
  return app::run_scenario(app::load_scenario_text(yaml, "jobs.yaml"));
}

std::string error_of(const std::string& yaml) {
  return syncsim::testing::scenario_error_of(yaml, {}, "jobs.yaml");
}

}  // namespace

TEST_CASE("jobs: one job is the single-workload step, bit for bit") {
  const app::RunResult one = run_text(kFabric + "jobs:\n" + job("a", "[0, 2, 4, 6]"));
  std::string single = kFabric + "workload: " + kWorkload + "\n";
  single = testing::text_with(single, "micro_batch: 1",
                              "micro_batch: 1, data_parallel: 4, "
                              "placement: spread");
  const app::RunResult alone = run_text(single);
  REQUIRE(one.jobs.size() == 1);
  REQUIRE(alone.step.has_value());
  // spread puts ranks 0..3 on hosts 0, 2, 4, 6 (one per leaf), as the job's host list does.
  CHECK(one.jobs[0].hosts == std::vector<uint32_t>{0, 2, 4, 6});
  CHECK(one.jobs[0].step_times_s.front() == alone.step->step.seconds());
  CHECK(one.jobs[0].exposed_comm_s == alone.step->exposed_comm.seconds());
  CHECK(one.jobs[0].mfu == doctest::Approx(alone.step->mfu).epsilon(1e-12));
  CHECK(one.jobs[0].loads_fabric);
  CHECK(one.jobs[0].engine == "event_driven");
}

TEST_CASE("jobs: disjoint links cost nothing, a shared oversubscribed uplink does") {
  // Apart: job a on leaf 0 (hosts 0, 1), job b on leaf 1 (hosts 2, 3): each ring stays under its
  // own leaf, so no link carries both.
  const app::RunResult apart =
      run_text(kFabric + "compare_alone: true\njobs:\n" + job("a", "[0, 1]") + job("b", "[2, 3]"));
  REQUIRE(apart.jobs.size() == 2);
  for (const app::JobRun& j : apart.jobs) {
    REQUIRE(j.slowdown_vs_alone.has_value());
    CHECK(*j.slowdown_vs_alone == 1.0);
  }
  // Shared: both rings cross the spines from every leaf, and each leaf has one 100G uplink for
  // its two hosts (one of each job): the jobs' inter-leaf hops share it.
  const app::RunResult shared = run_text(kFabric + "compare_alone: true\njobs:\n" +
                                         job("a", "[0, 2, 4, 6]") + job("b", "[1, 3, 5, 7]"));
  for (const app::JobRun& j : shared.jobs) {
    REQUIRE(j.slowdown_vs_alone.has_value());
    CHECK(*j.slowdown_vs_alone > 1.2);
    // The alone run is the apart geometry's peer: not slower than sharing.
    CHECK(*j.alone_step_time_s < j.step_time_s);
  }
  // Deterministic: the same scenario again gives the same steps.
  const app::RunResult again = run_text(kFabric + "compare_alone: true\njobs:\n" +
                                        job("a", "[0, 2, 4, 6]") + job("b", "[1, 3, 5, 7]"));
  CHECK(again.jobs[0].step_times_s == shared.jobs[0].step_times_s);
  CHECK(again.jobs[1].step_times_s == shared.jobs[1].step_times_s);
}

TEST_CASE("jobs: consecutive steps and a later start") {
  const app::RunResult r =
      run_text(kFabric + "jobs:\n" + job("a", "[0, 1]", ", steps: 3, start: 2ms"));
  REQUIRE(r.jobs.size() == 1);
  const app::JobRun& a = r.jobs[0];
  REQUIRE(a.step_times_s.size() == 3);
  // Nothing else on the fabric: every step repeats the first.
  CHECK(a.step_times_s[1] == doctest::Approx(a.step_times_s[0]).epsilon(1e-9));
  CHECK(a.step_times_s[2] == doctest::Approx(a.step_times_s[0]).epsilon(1e-9));
  CHECK(a.start_s == doctest::Approx(2e-3));
  CHECK(a.end_s == doctest::Approx(2e-3 + 3 * a.step_times_s[0]).epsilon(1e-9));
}

TEST_CASE("jobs: the trace draws each job's steps where they ran") {
  const app::RunResult r = run_text(kFabric + "jobs:\n" + job("a", "[0, 1]", ", steps: 2") +
                                    job("b", "[2, 3]", ", start: 1ms"));
  const nlohmann::json trace = app::jobs_trace(r.jobs);
  int slices = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const auto& j = r.jobs[e["pid"].get<std::size_t>()];
    const auto k = static_cast<std::size_t>(std::stoul(e["name"].get<std::string>().substr(5)));
    CHECK(e["ts"].get<double>() == doctest::Approx(j.step_starts_s[k] * 1e6));
    CHECK(e["dur"].get<double>() == doctest::Approx(j.step_times_s[k] * 1e6));
    ++slices;
  }
  CHECK(slices == 3);  // two steps of a, one of b
  CHECK(r.jobs[1].step_starts_s.front() == doctest::Approx(1e-3));
  // Job a's second step begins where its first ended.
  CHECK(r.jobs[0].step_starts_s[1] ==
        doctest::Approx(r.jobs[0].step_starts_s[0] + r.jobs[0].step_times_s[0]));
}

TEST_CASE("jobs: placement policies skip GPUs earlier jobs hold") {
  const app::Scenario s =
      app::load_scenario_text(kFabric + "jobs:\n" + job("a", "[0, 1]") +
                                  "  - {name: b, workload: {model: gpt3-1.3b, data_parallel: 3}}\n",
                              "jobs.yaml");
  const auto placed = app::place_jobs(s, app::scenario_network(s));
  REQUIRE(placed.size() == 2);
  CHECK(placed[0] == std::vector<uint32_t>{0, 1});
  CHECK(placed[1] == std::vector<uint32_t>{2, 3, 4});  // packed: the first free GPUs
}

TEST_CASE("jobs: model-parallel jobs run event by event and slow each other on shared links") {
  // Two PP 2 jobs, each with a stage on leaf 0 and one on leaf 1: their pipeline sends and
  // gradient all-reduces cross the same 2:1 uplinks.
  const std::string pp =
      "{model: {preset: gpt3-1.3b, layers: 4}, gpu: h100, micro_batch: 1, grad_accumulation: 4, "
      "pipeline_parallel: 2}";
  std::string yaml = kFabric + "compare_alone: true\njobs:\n";
  yaml += "  - {name: a, hosts: [0, 2], workload: " + pp + "}\n";
  yaml += "  - {name: b, hosts: [1, 3], workload: " + pp + "}\n";
  const app::RunResult r = run_text(yaml);
  REQUIRE(r.jobs.size() == 2);
  for (const app::JobRun& j : r.jobs) {
    CAPTURE(j.name);
    CHECK(j.engine == "event_driven");
    CHECK(j.loads_fabric);
    REQUIRE(j.slowdown_vs_alone.has_value());
    MESSAGE(j.name << ": slowdown " << *j.slowdown_vs_alone);
    CHECK(*j.slowdown_vs_alone > 1.05);  // measured 1.10 for both
  }
}

TEST_CASE("jobs: a closed-form model-parallel job is timed on an idle fabric and says so") {
  std::string yaml = testing::text_with(kFabric, "gpus: 1, nics: 1", "gpus: 2, nics: 2");
  yaml +=
      "jobs:\n  - {name: tp, hosts: [0, 1], workload: {model: {preset: gpt3-1.3b, layers: 4}, "
      "tensor_parallel: 2, step_engine: closed_form}}\n";
  const app::RunResult r = run_text(yaml);
  REQUIRE(r.jobs.size() == 1);
  CHECK(r.jobs[0].engine == "closed_form");
  CHECK_FALSE(r.jobs[0].loads_fabric);
  CHECK(r.jobs[0].step_time_s > 0);
  bool warned = false;
  for (const std::string& w : r.warnings)
    warned |= w.find("neither loads the shared fabric") != std::string::npos;
  CHECK(warned);
}

TEST_CASE("jobs: scenario errors point at the job") {
  CHECK(error_of(kFabric + "workload: " + kWorkload + "\njobs:\n" + job("a", "[0]"))
            .find("jobs.yaml:") == 0);
  CHECK(error_of(kFabric + "workload: " + kWorkload + "\njobs:\n" + job("a", "[0]"))
            .find("expected either workload (one job) or jobs (several), got both") !=
        std::string::npos);
  CHECK(error_of(kFabric + "jobs:\n" + job("a", "[0]") + job("a", "[1]"))
            .find("jobs.1.name: expected a job name of its own, got \"a\" again") !=
        std::string::npos);
  CHECK(error_of(kFabric + "jobs:\n" + job("a", "[0, 1]") + job("b", "[1, 2]"))
            .find("jobs.1.hosts.0: expected a host no other job holds, got host 1, which job a "
                  "lists") != std::string::npos);
  CHECK(error_of(kFabric + "jobs:\n" + job("a", "[0, 9]"))
            .find("jobs.0.hosts.1: expected a host number below the fabric's 8 hosts, got 9") !=
        std::string::npos);
  CHECK(error_of(kFabric + "jobs:\n  - {name: a, workload: {model: gpt3-1.3b}}\n")
            .find("jobs.0.workload.data_parallel: missing key") != std::string::npos);
  CHECK(error_of(kFabric + "jobs:\n" + job("a", "[0]") +
                 "  - {name: b, workload: {model: gpt3-1.3b, data_parallel: 8}}\n")
            .find("jobs.1.workload.data_parallel: expected the jobs to fit the fabric's 8 GPUs "
                  "together; with this one they take 9") != std::string::npos);
  CHECK(error_of(kFabric + "jobs:\n  - {name: a, hosts: [0], sizes: 3, workload: " + kWorkload +
                 "}\n")
            .find("jobs.0.sizes") != std::string::npos);
  CHECK(error_of(kFabric + "compare_alone: true\nworkload: " + kWorkload + "\n")
            .find("compare_alone: expected compare_alone only beside jobs:") != std::string::npos);
  CHECK(error_of(kFabric + "jobs:\n" + job("a", "[0]", ", steps: 0")).find("jobs.0.steps") !=
        std::string::npos);
}

TEST_CASE("jobs: a straggler slows its own job only, and each fault says what it cost each job") {
  const std::string jobs =
      "jobs:\n" + job("a", "[0, 1]", ", steps: 2") + job("b", "[2, 3]", ", steps: 2");
  const app::RunResult healthy = run_text(kFabric + jobs);
  // GPU 0 (host 0: job a's rank 0) computes twice as slowly from 0 on.
  const app::RunResult slow =
      run_text(kFabric + jobs + "faults:\n  - {kind: straggler, at: 0s, gpu: 0, slowdown: 2}\n");
  REQUIRE(slow.jobs.size() == 2);
  // The 4-layer step is communication-bound: the slow rank's compute (a few ms) delays its buckets
  // and the step by a few percent.
  CHECK(slow.jobs[0].step_time_s > 1.02 * healthy.jobs[0].step_time_s);
  // Job b shares no link with job a (each under its own leaf) and has no slow GPU.
  CHECK(slow.jobs[1].step_times_s == healthy.jobs[1].step_times_s);
  REQUIRE(slow.faults.size() == 1);
  REQUIRE(slow.faults[0].jobs.size() == 2);
  CHECK(slow.faults[0].jobs[0].job == "a");
  CHECK(slow.faults[0].jobs[0].steps_during == 2);
  CHECK(slow.faults[0].jobs[0].step_during_s == doctest::Approx(slow.jobs[0].step_time_s));
  CHECK(slow.faults[0].jobs[0].step_before_s == 0);
}
