#pragma once
// A progress line for one long run on a terminal: wall time elapsed against the pre-run estimate
// (app/estimate.hpp) and, when the run publishes it, simulated time; rewritten in place on stderr
// twice a second and erased when the run ends. Off unless stderr is a terminal and --quiet is not
// given. It runs on its own thread and only reads an atomic the simulation thread writes, so the
// simulation itself (events, results) is the same with or without it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace syncsim::app {

bool stderr_is_terminal();

// "12.3 s elapsed, ~41% of the estimated 30 s, ETA 18 s"; exposed for tests.
std::string progress_text(double elapsed_s, double estimated_s);

class ProgressLine {
 public:
  ProgressLine(bool enabled, double estimated_wall_s, std::FILE* out = stderr);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  void stop();

 private:
  void loop();

  bool enabled_;
  double estimated_s_;
  std::FILE* out_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::size_t printed_ = 0;
  std::thread thread_;
};

}  // namespace syncsim::app
