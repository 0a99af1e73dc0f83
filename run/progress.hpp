#pragma once
// A progress line for one long run on a terminal: simulated time done against the expected total
// (the closed-form step time from run/estimate.hpp, for a DDP step), buckets done, which bucket is
// being timed in a private idle-fabric simulation, wall time elapsed and the ETA from the pre-run
// wall estimate; rewritten in place on stderr twice a second and erased when the run ends. Off
// unless stderr is a terminal and --quiet is not given. It runs on its own thread and only reads
// atomics the simulation thread writes (RunProgress), so the simulation itself (events, results)
// is the same with or without it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "models/step_sim.hpp"

namespace syncsim::app {

bool stderr_is_terminal();

// "run: 12.3 s elapsed, ~41% of the estimated 30 s, ETA 17.7 s" (wall time only).
std::string progress_text(double elapsed_s, double estimated_s);

// One reading of a run's progress; everything the line shows.
struct ProgressView {
  double elapsed_s = 0;
  double estimated_wall_s = 0;  // pre-run estimate; 0 = unknown
  bool sim_published = false;   // the run publishes simulated time (a DDP step does)
  double sim_done_s = 0;
  double sim_expected_s = 0;  // expected total simulated time; 0 = unknown
  uint32_t buckets_done = 0;
  uint32_t buckets = 0;
  int64_t timing_bucket_bytes = 0;  // > 0: a bucket's idle-fabric time is being simulated
  bool timing_extrapolated = false;
};
// "run: sim 4.2 s of ~11.6 s (36%), buckets 12/80, timing 2.1 GB bucket (samples); 12.3 s elapsed,
// ETA 17.7 s". Without published simulated time it is progress_text(elapsed, estimated). The
// fraction is simulated time (capped at 99% while running); the ETA comes from the pre-run wall
// estimate ("past the estimated N s" beyond it). "(samples)": the bucket's time is being
// extrapolated from the two sample runs (models/step_sim.hpp).
std::string progress_text(const ProgressView& v);

// What a run publishes while it runs: written by the simulating thread, read by the progress line.
struct RunProgress {
  std::atomic<bool> sim_published{false};
  std::atomic<double> sim_done_s{0};
  std::atomic<uint32_t> buckets_done{0};
  std::atomic<uint32_t> buckets{0};
  std::atomic<int64_t> timing_bucket_bytes{0};
  std::atomic<bool> timing_extrapolated{false};
  void publish(const models::StepProgress& p);
};

class ProgressLine;
// What a DDP step calls as it advances: publishes to `line` when it is on, and calls `also` when
// set; empty when neither wants it (the step then skips the calls).
std::function<void(const models::StepProgress&)> step_progress_hook(
    ProgressLine& line, std::function<void(const models::StepProgress&)> also);

class ProgressLine {
 public:
  // `expected_sim_s`: expected total simulated time (0 = unknown).
  ProgressLine(bool enabled, double estimated_wall_s, std::FILE* out = stderr,
               double expected_sim_s = 0);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  bool enabled() const { return enabled_; }
  RunProgress& state() { return state_; }
  // The line as it would be printed now.
  std::string text() const;
  void stop();

 private:
  void loop();

  bool enabled_;
  double estimated_s_;
  double expected_sim_s_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  RunProgress state_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::size_t printed_ = 0;
  std::thread thread_;
};

}  // namespace syncsim::app
