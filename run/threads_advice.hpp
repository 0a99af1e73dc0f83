#pragma once
// Advice for a long run started on one thread: how many threads the machine could give it, and
// what the estimate says they would save. `syncsim run` prints it before a run whose estimate is
// long; results are identical for any thread count, so the only costs of more threads are memory
// (the step's idle-fabric simulations run at once, each with its plan) and the cores themselves.
#include <cstdint>
#include <optional>
#include <string>

#include "run/estimate.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

// Runs estimated shorter than this are not worth a note.
inline constexpr double kThreadsAdviceMinWallS = 60.0;
// Nor is a saving smaller than this share of the one-thread estimate.
inline constexpr double kThreadsAdviceMinSaving = 0.2;
// Half the threads for an estimate this much longer or less count as the same wall.
inline constexpr double kThreadsAdviceSameWall = 0.01;

struct ThreadsAdvice {
  uint32_t threads = 1;
  double wall_s = 0;        // the estimate on `threads` threads
  double memory_bytes = 0;  // the same
};

// The first thread count of `cores`, cores / 2, cores / 4, ... down to 2 whose estimate fits
// `available` memory (when known), if it saves at least kThreadsAdviceMinSaving of `one_thread`'s
// wall, then halved while half as many threads give the same wall (within kThreadsAdviceSameWall:
// threads beyond the run's independent simulations or partitions buy nothing); nullopt when
// `one_thread` (the estimate of the run as asked, on one thread) is below kThreadsAdviceMinWallS,
// when no count fits, or when the first that fits saves too little (fewer threads would save
// less). `options` are the run's own (their `threads` is replaced).
std::optional<ThreadsAdvice> threads_advice(const Scenario& scenario, const Estimate& one_thread,
                                            EstimateOptions options, uint32_t cores,
                                            std::optional<double> available);

// `run --threads auto`: the thread count the same search picks with no threshold (any saving
// counts, at any length), or 1 when more threads save nothing or none fits `available`.
uint32_t auto_threads(const Scenario& scenario, const Estimate& one_thread,
                      const EstimateOptions& options, uint32_t cores,
                      std::optional<double> available);

// "estimated 873 s on one thread; --threads 2 would take about 463 s (11.7 GiB); results are the
// same for any thread count".
std::string to_text(const ThreadsAdvice& advice, const Estimate& one_thread);

}  // namespace syncsim::app
