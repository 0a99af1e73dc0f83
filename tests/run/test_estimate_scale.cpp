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
    // The scale scenario's three big buckets (2.1 GB, 940 MB, 470 MB) are extrapolated at 4k and
    // 16k (docs/scale.md); at 64k the 470 MB one is 112 units < 2 k1 = 128 and stays exact.
    CHECK(ex.extrapolated_buckets == (pods == "64" ? 2 : 3));
    CHECK(exact.extrapolated_buckets == 0);
    // At 64k the 470 MB bucket's whole plan is still simulated, so the gain is smaller there.
    CHECK(ex.memory_bytes * 3 < exact.memory_bytes);
    CHECK(ex.wall_s * 2 < exact.wall_s);
    CHECK(ex.transfers * 2 < exact.transfers);
  }
}

TEST_CASE("estimate: the scale scenario's estimates are within 2x of the measured runs") {
  // Measured with the Release build, /usr/bin/time -v syncsim run scenarios/ddp-70b-16k.yaml
  // --set fabric.fat_tree.pods=P --json, one loaded core (docs/scale.md): wall s, peak RSS.
  struct Measured {
    const char* pods;
    double wall_s;
    double rss_bytes;
  };
  for (const Measured m : {Measured{"1", 4.0, 181 * kMiB}, Measured{"4", 7.2, 250 * kMiB},
                           Measured{"16", 54.3, 1.10 * kGiB}}) {
    CAPTURE(std::string(m.pods));
    const app::Estimate e = app::estimate_run(load_scale({{"fabric.fat_tree.pods", m.pods}}));
    CHECK(e.memory_bytes / m.rss_bytes > 0.5);
    CHECK(e.memory_bytes / m.rss_bytes < 2.0);
    CHECK(e.wall_s / m.wall_s > 0.5);
    CHECK(e.wall_s / m.wall_s < 2.0);
  }
  // 64k GPUs fits a 16 GiB machine (it was refused at 28 GiB when whole plans were sized).
  const app::Estimate big = app::estimate_run(load_scale({{"fabric.fat_tree.pods", "64"}}));
  CHECK(big.memory_bytes < 16 * kGiB);
  CHECK_FALSE(app::refusal(big, 16 * kGiB).has_value());
}

TEST_CASE("estimate: expected simulated step time of a DDP step") {
  const app::Estimate e = app::estimate_run(load_scale({{"fabric.fat_tree.pods", "1"}}));
  // Simulated: 9.114 s at 1k GPUs (`syncsim run scenarios/ddp-70b-16k.yaml --set
  // fabric.fat_tree.pods=1 --json`, step_time_s); the progress line's expected total is within a
  // few percent of it.
  CHECK(e.sim_time_s > 0.95 * 9.114);
  CHECK(e.sim_time_s < 1.05 * 9.114);
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
