// The note `syncsim run` prints before a long run on one thread: how many threads fit, and what
// the estimate says they save.
#include <doctest/doctest.h>

#include "run/estimate.hpp"
#include "run/threads_advice.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {
app::Scenario load_shipped(const std::string& name,
                           const std::vector<std::pair<std::string, std::string>>& sets = {}) {
  app::LoadOptions o;
  for (const auto& [path, value] : sets) o.overrides.push_back({path, value});
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name, o);
}
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}  // namespace

TEST_CASE("threads advice: the 16k-GPU step on one thread is told what more threads save") {
  // Estimates only: nothing is simulated. The step's four idle-fabric simulations (two LL128
  // buckets, the Simple samples) run at once on threads, longest first.
  const app::Scenario s = load_shipped("ddp-70b-16k.yaml");
  const app::Estimate one = app::estimate_run(s, app::EstimateOptions{});
  REQUIRE(one.wall_s > app::kThreadsAdviceMinWallS);
  const auto advice = app::threads_advice(s, one, {}, 16, std::nullopt);
  REQUIRE(advice.has_value());
  // The longest simulation bounds the wall (about 37 % of the sum here), and each running one
  // holds its plan: more memory than one thread's.
  CHECK(advice->wall_s < 0.8 * one.wall_s);
  CHECK(advice->wall_s > 0.2 * one.wall_s);
  CHECK(advice->memory_bytes > one.memory_bytes);
  // No more threads than help: the step has four simulations, so 16 threads are as fast as the
  // advice's count, and half of it is slower.
  CHECK(advice->threads >= 2);
  CHECK(advice->threads <= 4);
  const app::Estimate sixteen = app::estimate_run(s, app::EstimateOptions{false, 16, false});
  CHECK(advice->wall_s == doctest::Approx(sixteen.wall_s).epsilon(app::kThreadsAdviceSameWall));
  const app::Estimate at =
      app::estimate_run(s, app::EstimateOptions{false, advice->threads, false});
  CHECK(advice->wall_s == doctest::Approx(at.wall_s));
  CHECK(advice->memory_bytes == doctest::Approx(at.memory_bytes));
  if (advice->threads > 2) {
    const app::Estimate half =
        app::estimate_run(s, app::EstimateOptions{false, advice->threads / 2, false});
    CHECK(half.wall_s > advice->wall_s * (1.0 + app::kThreadsAdviceSameWall));
  }

  // Memory decides how many: with room for two simulations but not all, fewer threads.
  const app::Estimate two = app::estimate_run(s, app::EstimateOptions{false, 2, false});
  const auto fitted = app::threads_advice(s, one, {}, 16, two.memory_bytes * 1.01);
  REQUIRE(fitted.has_value());
  CHECK(fitted->threads == 2);
  CHECK(fitted->memory_bytes <= two.memory_bytes * 1.01);
  // With room for one only, no advice.
  CHECK_FALSE(app::threads_advice(s, one, {}, 16, one.memory_bytes * 1.01).has_value());
  // Nor on one core.
  CHECK_FALSE(app::threads_advice(s, one, {}, 1, std::nullopt).has_value());

  const std::string text = app::to_text(*fitted, one);
  CHECK(text.find("--threads 2 would take about") != std::string::npos);
  CHECK(text.find("same for any thread count") != std::string::npos);
  CHECK(two.memory_bytes / kGiB > 1.0);
}

TEST_CASE("threads advice: none for a short run, nor where threads would not help") {
  // The built-in default runs in seconds.
  const app::Scenario quick = load_shipped("default.yaml");
  const app::Estimate q = app::estimate_run(quick, app::EstimateOptions{});
  CHECK(q.wall_s < app::kThreadsAdviceMinWallS);
  CHECK_FALSE(app::threads_advice(quick, q, {}, 64, std::nullopt).has_value());
  // A 4k-GPU step whose buckets run live (not reused): one simulation, hours long, that threads
  // do not split (the estimate is the same on 16 threads).
  const app::Scenario live =
      load_shipped("ddp-70b-16k.yaml",
                   {{"fabric.fat_tree.pods", "4"}, {"workload.reuse_bucket_timings", "false"}});
  const app::Estimate one = app::estimate_run(live, app::EstimateOptions{});
  REQUIRE(one.wall_s > app::kThreadsAdviceMinWallS);
  CHECK(app::estimate_run(live, app::EstimateOptions{false, 16, false}).wall_s ==
        doctest::Approx(one.wall_s));
  CHECK_FALSE(app::threads_advice(live, one, {}, 16, std::nullopt).has_value());
}

TEST_CASE("threads auto: the advice's count at any length, 1 where threads do not help or fit") {
  const app::Scenario s = load_shipped("ddp-70b-16k.yaml");
  const app::Estimate one = app::estimate_run(s, app::EstimateOptions{});
  const auto advice = app::threads_advice(s, one, {}, 16, std::nullopt);
  REQUIRE(advice.has_value());
  CHECK(app::auto_threads(s, one, {}, 16, std::nullopt) == advice->threads);
  CHECK(app::auto_threads(s, one, {}, 16, one.memory_bytes * 1.01) == 1);  // room for one only
  CHECK(app::auto_threads(s, one, {}, 1, std::nullopt) == 1);
  // A short run gets threads too where they help (its idle-fabric simulations at once).
  const app::Scenario quick = load_shipped("default.yaml");
  const app::Estimate q = app::estimate_run(quick, app::EstimateOptions{});
  const uint32_t n = app::auto_threads(quick, q, {}, 64, std::nullopt);
  CHECK(n >= 2);
  CHECK(app::estimate_run(quick, app::EstimateOptions{false, n, false}).wall_s < q.wall_s);
  // One simulation that threads do not split: 1.
  const app::Scenario live =
      load_shipped("ddp-70b-16k.yaml",
                   {{"fabric.fat_tree.pods", "4"}, {"workload.reuse_bucket_timings", "false"}});
  const app::Estimate l = app::estimate_run(live, app::EstimateOptions{});
  CHECK(app::auto_threads(live, l, {}, 16, std::nullopt) == 1);
}
