// Whether more threads would shorten a long run (run/threads_advice.hpp).
#include "run/threads_advice.hpp"

#include <cstdio>
#include <string>

namespace syncsim::app {

namespace {

// The search of threads_advice without its length threshold: the first count halving from `cores`
// that fits, if it saves at least `min_saving` of the one-thread wall, then halved while the wall
// stays the same.
std::optional<ThreadsAdvice> fewest_fastest(const Scenario& scenario, const Estimate& one_thread,
                                            EstimateOptions options, uint32_t cores,
                                            std::optional<double> available, double min_saving) {
  // Halving from the machine's cores (memory grows with the simulations run at once); each
  // estimate costs about 0.1 s on the 16k-GPU step.
  for (uint32_t threads = cores; threads >= 2; threads /= 2) {
    options.threads = threads;
    const Estimate e = estimate_run(scenario, options);
    if (refusal(e, available)) continue;
    if (e.wall_s >= one_thread.wall_s * (1.0 - min_saving)) return std::nullopt;
    ThreadsAdvice advice{threads, e.wall_s, e.memory_bytes};
    // No more threads than help: a step with four simulations is as fast on 4 as on 64.
    while (advice.threads >= 4) {
      options.threads = advice.threads / 2;
      const Estimate fewer = estimate_run(scenario, options);
      if (fewer.wall_s > advice.wall_s * (1.0 + kThreadsAdviceSameWall)) break;
      advice = ThreadsAdvice{options.threads, fewer.wall_s, fewer.memory_bytes};
    }
    return advice;
  }
  return std::nullopt;
}

}  // namespace

std::optional<ThreadsAdvice> threads_advice(const Scenario& scenario, const Estimate& one_thread,
                                            EstimateOptions options, uint32_t cores,
                                            std::optional<double> available) {
  if (one_thread.wall_s < kThreadsAdviceMinWallS) return std::nullopt;
  return fewest_fastest(scenario, one_thread, options, cores, available, kThreadsAdviceMinSaving);
}

uint32_t auto_threads(const Scenario& scenario, const Estimate& one_thread,
                      const EstimateOptions& options, uint32_t cores,
                      std::optional<double> available) {
  const auto best = fewest_fastest(scenario, one_thread, options, cores, available, 0.0);
  return best ? best->threads : 1;
}

std::string to_text(const ThreadsAdvice& advice, const Estimate& one_thread) {
  char text[256];
  std::snprintf(text, sizeof text,
                "estimated %.0f s on one thread; --threads %u would take about %.0f s (%.1f GiB); "
                "results are the same for any thread count",
                one_thread.wall_s, advice.threads, advice.wall_s,
                advice.memory_bytes / (1024.0 * 1024.0 * 1024.0));
  return text;
}

}  // namespace syncsim::app
