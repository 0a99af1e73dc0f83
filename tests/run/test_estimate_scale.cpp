// Pre-run estimates of what actually runs: big DDP buckets timed by extrapolation
// (models/step_sim's bucket_extrapolation rule), the expected simulated step time for the progress
// line, the progress text with simulated time, and the sweep's memory check.
#include <doctest/doctest.h>

#include <sstream>

#include "run/estimate.hpp"
#include "run/progress.hpp"
#include "run/sweep.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {
const std::string kScaleScenario = SYNCSIM_SOURCE_DIR "/scenarios/ddp-70b-16k.yaml";

app::Scenario load_scale(const std::vector<std::pair<std::string, std::string>>& overrides) {
  app::LoadOptions o;
  for (auto& [path, value] : overrides) o.overrides.push_back({path, value});
  return app::load_scenario_file(kScaleScenario, o);
}

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;
}  // namespace

TEST_CASE("estimate: extrapolated buckets are sized as the samples that run, not whole plans") {
  for (const std::string pods : {"4", "16", "64"}) {
    CAPTURE(pods);
    const app::Estimate ex = app::estimate_run(load_scale({{"fabric.fat_tree.pods", pods}}));
    const app::Estimate exact = app::estimate_run(
        load_scale({{"fabric.fat_tree.pods", pods}, {"workload.bucket_timing", "exact"}}));
    // NCCL's trees run Simple on 16 channels with 512 KiB chunks at these sizes, so a pipeline
    // unit (one chunk per channel) is 8 MiB: the 2.1 GB and 940 MB buckets have at least 2 k1
    // units at 4k and 16k (k1 = 4 ceil(log2 ranks)) and are extrapolated; the 470 MB one (57
    // units) is not, nor the 940 MB one at 64k (113 < 128). At 4k and 16k the 134 MB buckets run
    // tree LL128, as NCCL's model picks below a few hundred MB there (470 MB: Simple), in LL128
    // chunks that NCCL halves for the deep tree (72,000 B: 117 units at 16k): fewer than the 7 k1
    // units LL128's verified samples start with, so they are simulated whole.
    CHECK(ex.extrapolated_buckets == (pods == "64" ? 1 : 2));
    CHECK(exact.extrapolated_buckets == 0);
    // The samples (k1 and 2 k1 units) cost less than the whole plans they replace; the gain
    // shrinks as fewer buckets qualify (64k). Estimated: transfers 1.63x (4k), 1.52x (16k).
    CHECK(ex.memory_bytes * (pods == "64" ? 1.3 : 2.0) < exact.memory_bytes);
    CHECK(ex.wall_s * (pods == "64" ? 1.1 : 1.4) < exact.wall_s);
    CHECK(ex.transfers * (pods == "64" ? 1.1 : 1.4) < exact.transfers);
  }
}

TEST_CASE("estimate: the scale scenario's estimates against the measured run") {
  // Measured with the Release build, /usr/bin/time -v syncsim run scenarios/ddp-70b-16k.yaml
  // --set fabric.fat_tree.pods=1 --json (docs/scale.md): peak RSS 403 MiB, wall 36.6 s on a quiet
  // machine (112 s with two builds running beside it).
  const app::Estimate e = app::estimate_run(load_scale({{"fabric.fat_tree.pods", "1"}}));
  const double rss = 403 * kMiB;
  CHECK(e.memory_bytes / rss > 0.5);
  CHECK(e.memory_bytes / rss < 2.0);
  CHECK(e.wall_s / 36.6 > 0.5);
  CHECK(e.wall_s / 36.6 < 2.0);
  // 64k GPUs no longer fits a 16 GiB machine (NCCL's channels make the tree plans 32x larger than
  // the two-tree plans of before): the estimate refuses it instead of letting the run be killed.
  const app::Estimate big = app::estimate_run(load_scale({{"fabric.fat_tree.pods", "64"}}));
  CHECK(big.memory_bytes > 16 * kGiB);
  CHECK(app::refusal(big, 16 * kGiB).has_value());
}

TEST_CASE("estimate: expected simulated step time of a DDP step") {
  const app::Estimate e = app::estimate_run(load_scale({{"fabric.fat_tree.pods", "1"}}));
  // Simulated: 6.085 s at 1k GPUs (`syncsim run scenarios/ddp-70b-16k.yaml --set
  // fabric.fat_tree.pods=1 --json`, step_time_s); the progress line's expected total is within a
  // few percent of it.
  CHECK(e.sim_time_s > 0.95 * 6.085);
  CHECK(e.sim_time_s < 1.05 * 6.085);
  // No workload: unknown.
  const app::Scenario traffic =
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/incast-pfc.yaml");
  CHECK(app::estimate_run(traffic).sim_time_s == 0);
}

TEST_CASE("progress: simulated time against the expected total, buckets, private timing phase") {
  app::ProgressView v;
  v.elapsed_s = 12.3;
  v.estimated_wall_s = 30;
  v.sim_published = true;
  v.sim_done_s = 4.2;
  v.sim_expected_s = 11.6;
  v.buckets_done = 12;
  v.buckets = 80;
  CHECK(app::progress_text(v) ==
        "run: sim 4.2 s of ~11.6 s (36%), buckets 12/80; 12.3 s elapsed, ETA 17.7 s");
  v.timing_bucket_bytes = 2'101'346'304;
  v.timing_extrapolated = true;
  CHECK(app::progress_text(v).find(", timing 2.1 GB bucket (samples); ") != std::string::npos);
  v.timing_extrapolated = false;
  CHECK(app::progress_text(v).find(", timing 2.1 GB bucket; ") != std::string::npos);
  // Past the wall estimate; beyond the expected simulated total the fraction stays at 99%.
  v.timing_bucket_bytes = 0;
  v.elapsed_s = 40;
  v.sim_done_s = 12.0;
  const std::string over = app::progress_text(v);
  CHECK(over.find("(99%)") != std::string::npos);
  CHECK(over.find("; 40.0 s elapsed, past the estimated 30.0 s") != std::string::npos);
  // Small simulated times get a unit that fits.
  v.sim_done_s = 2.5e-5;
  v.sim_expected_s = 0;
  CHECK(app::progress_text(v).find("run: sim 25 us, buckets") == 0);
  // Nothing published: the wall-only line.
  v.sim_published = false;
  CHECK(app::progress_text(v) == app::progress_text(40.0, 30.0));
}

TEST_CASE("progress: a line that is never shown still collects the step's progress") {
  app::ProgressLine line(false, 10.0, stderr, 11.6);
  models::StepProgress p;
  p.simulated = Time::from_seconds(2.0);
  p.buckets_done = 3;
  p.buckets = 10;
  line.state().publish(p);
  const std::string text = line.text();
  CHECK(text.find("run: sim 2 s of ~11.6 s (17%), buckets 3/10; ") == 0);
}

TEST_CASE("sweep: a point too big for the machine is refused, naming it and both numbers") {
  app::SweepSpec spec;
  spec.scenario_path = kScaleScenario;
  spec.axes.push_back(app::parse_vary("fabric.fat_tree.pods=1,1024"));
  spec.sets.push_back(app::parse_override("fidelity=packet"));
  const app::SweepPlan plan = app::plan_sweep(spec);
  std::vector<app::Estimate> estimates;
  for (const auto& s : plan.scenarios) estimates.push_back(app::estimate_run(s));
  const double available = 64 * kGiB;
  const auto refused = app::sweep_memory_refusals(plan, estimates, 1, available);
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].find("point 1 (fabric.fat_tree.pods=1024): estimated memory ") == 0);
  CHECK(refused[0].find(" GiB exceeds the 64.00 GiB available") != std::string::npos);
  CHECK(app::sweep_memory_refusals(plan, estimates, 1, std::nullopt).empty());
  // Points running at once multiply: the small point alone fits, N copies of it do not.
  const double small = estimates[0].memory_bytes;
  const auto jobs = app::sweep_memory_refusals(plan, {estimates[0]}, 4, 2.5 * small);
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0].find("x 4 points at once") != std::string::npos);
  CHECK(app::sweep_memory_refusals(plan, {estimates[0]}, 2, 2.5 * small).empty());
}

TEST_CASE("sweep: the ETA weighs the points left by their estimates") {
  std::ostringstream err;
  app::SweepProgress p(4, false, err);
  CHECK(p.text(1, 10.0) ==
        "sweep: 1/4 points, 10.0s elapsed, ETA 30.0s");  // unweighted: 3 more like it
  p.set_estimates({1.0, 1.0, 1.0, 7.0}, 1);
  CHECK(p.text(1, 10.0) ==
        "sweep: 1/4 points, 10.0s elapsed, ETA 1m30s");  // 9 estimated seconds left per 1 done
  CHECK(p.text(0, 2.0).find("ETA ~8.0s (estimated)") != std::string::npos);
  p.set_estimates({1.0, 1.0, 1.0, 7.0}, 2);
  CHECK(p.text(0, 0.0).find("ETA ~5.0s (estimated)") != std::string::npos);
  CHECK(err.str().empty());
}

TEST_CASE("estimate: a model-parallel layout is sized by its groups' collectives, not a DDP step") {
  // Llama 3.1 405B as NVIDIA's DGX Cloud recipe runs it on 2048 H100 (TP 8, PP 8 x VP 8, CP 2,
  // DP 16). Measured with the ci build, /usr/bin/time -v syncsim run scenarios/default.yaml with
  // these settings: peak RSS 110 MiB, wall 15.9 s, 16.5 M transfers (2026-12-05; earlier 58 MiB
  // and 20.5 s). Sized as a whole-model DDP step over 2048 ranks it came to 91 GiB, and the run
  // was refused.
  app::LoadOptions o;
  for (const auto& [path, value] : std::vector<std::pair<std::string, std::string>>{
           {"workload.parallelism", "ddp"},
           {"workload.model", "llama3-405b"},
           {"workload.tensor_parallel", "8"},
           {"workload.pipeline_parallel", "8"},
           {"workload.virtual_pipeline", "8"},
           {"workload.context_parallel", "2"},
           {"workload.sequence_parallel", "true"},
           {"workload.account_for_embedding_in_pipeline_split", "true"},
           {"workload.account_for_loss_in_pipeline_split", "true"},
           {"workload.grad_accumulation", "64"},
           {"fabric.rail_optimized.hosts_per_group", "256"}}) {
    o.overrides.push_back({path, value});
  }
  const app::Estimate e =
      app::estimate_run(app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/default.yaml", o));
  const double rss = 110 * kMiB;
  CHECK(e.memory_bytes / rss > 0.5);
  CHECK(e.memory_bytes / rss < 1.5);
  CHECK(e.wall_s / 15.9 > 0.5);
  CHECK(e.wall_s / 15.9 < 2.0);
  // Every pipeline stage's buckets, each timed on its own groups (16.5 M transfers run).
  CHECK(e.transfers / 16.5e6 > 0.8);
  CHECK(e.transfers / 16.5e6 < 1.25);
  CHECK_FALSE(app::refusal(e, 16 * kGiB).has_value());
}

TEST_CASE("estimate: an MoE recipe counts every stage's buckets and the optimizer's two halves") {
  // moe-deepseek-256 (PP 2, CP 2, EP 128, the distributed optimizer, flow fidelity): the closed
  // form reduce-scatters and all-gathers each stage's buckets on that stage's own groups, 11.56 M
  // transfers run (counted in TransferBackend::start, 2026-12-05); its expert gradients need no
  // collective (expert-data-parallel groups of one). Counted as one all-reduce per distinct size
  // over both stages it was 7.85 M, and the wall 0.52-0.65x of the run's.
  const app::Estimate e = app::estimate_run(
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/moe-deepseek-256.yaml"));
  CHECK(e.transfers / 11.56e6 > 0.9);
  CHECK(e.transfers / 11.56e6 < 1.3);
}
