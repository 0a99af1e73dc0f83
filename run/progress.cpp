#include "run/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <utility>

namespace syncsim::app {

namespace {

// Simulated time with a unit that fits it (packet runs last microseconds, a step seconds).
std::string sim_seconds(double s) {
  std::ostringstream out;
  out.precision(3);
  if (s != 0 && std::abs(s) < 1e-3) {
    out << s * 1e6 << " us";
  } else if (s != 0 && std::abs(s) < 1.0) {
    out << s * 1e3 << " ms";
  } else {
    out << s << " s";
  }
  return out.str();
}

std::string decimal_bytes(int64_t bytes) {
  std::ostringstream out;
  out.precision(3);
  const auto b = static_cast<double>(bytes);
  if (b >= 1e9) {
    out << b / 1e9 << " GB";
  } else if (b >= 1e6) {
    out << b / 1e6 << " MB";
  } else {
    out << b << " B";
  }
  return out.str();
}

}  // namespace

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

std::string progress_text(double elapsed_s, double estimated_s) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << "run: " << elapsed_s << " s elapsed";
  if (estimated_s > 0) {
    const double fraction = elapsed_s / estimated_s;
    out.precision(0);
    out << ", ~" << std::min(99.0, 100.0 * fraction) << "% of the estimated " << estimated_s
        << " s";
    out.precision(1);
    if (fraction < 1.0) {
      out << ", ETA " << estimated_s - elapsed_s << " s";
    } else {
      out << ", past the estimate";
    }
  }
  return out.str();
}

std::string progress_text(const ProgressView& v) {
  if (!v.sim_published) return progress_text(v.elapsed_s, v.estimated_wall_s);
  std::ostringstream out;
  out << "run: sim " << sim_seconds(v.sim_done_s);
  double fraction = -1;
  if (v.sim_expected_s > 0) {
    fraction = v.sim_done_s / v.sim_expected_s;
    out << " of ~" << sim_seconds(v.sim_expected_s) << " ("
        << static_cast<int>(std::min(99.0, 100.0 * fraction)) << "%)";
  }
  if (v.buckets > 0) out << ", buckets " << v.buckets_done << "/" << v.buckets;
  if (v.timing_bucket_bytes > 0) {
    out << ", timing " << decimal_bytes(v.timing_bucket_bytes) << " bucket"
        << (v.timing_extrapolated ? " (samples)" : "");
  }
  out.setf(std::ios::fixed);
  out.precision(1);
  out << "; " << v.elapsed_s << " s elapsed";
  // No ETA from the rate of simulated time: in a DDP step nearly all the wall time goes into the
  // private timing runs of the first bucket of each size, so simulated time says little about it.
  if (v.estimated_wall_s > 0 && v.elapsed_s < v.estimated_wall_s) {
    out << ", ETA " << v.estimated_wall_s - v.elapsed_s << " s";
  } else if (v.estimated_wall_s > 0) {
    out << ", past the estimated " << v.estimated_wall_s << " s";
  }
  return out.str();
}

void RunProgress::publish(const models::StepProgress& p) {
  sim_done_s.store(p.simulated.seconds(), std::memory_order_relaxed);
  buckets_done.store(static_cast<uint32_t>(p.buckets_done), std::memory_order_relaxed);
  buckets.store(static_cast<uint32_t>(p.buckets), std::memory_order_relaxed);
  timing_bucket_bytes.store(p.timing_bucket_bytes, std::memory_order_relaxed);
  timing_extrapolated.store(p.timing_extrapolated, std::memory_order_relaxed);
  sim_published.store(true, std::memory_order_release);
}

std::function<void(const models::StepProgress&)> step_progress_hook(
    ProgressLine& line, std::function<void(const models::StepProgress&)> also) {
  if (!line.enabled() && !also) return {};
  return [&line, also = std::move(also)](const models::StepProgress& p) {
    if (line.enabled()) line.state().publish(p);
    if (also) also(p);
  };
}

ProgressLine::ProgressLine(bool enabled, double estimated_wall_s, std::FILE* out,
                           double expected_sim_s)
    : enabled_(enabled),
      estimated_s_(estimated_wall_s),
      expected_sim_s_(expected_sim_s),
      out_(out),
      start_(std::chrono::steady_clock::now()) {
  if (enabled_) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() { stop(); }

std::string ProgressLine::text() const {
  ProgressView v;
  v.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  v.estimated_wall_s = estimated_s_;
  v.sim_published = state_.sim_published.load(std::memory_order_acquire);
  v.sim_done_s = state_.sim_done_s.load(std::memory_order_relaxed);
  v.sim_expected_s = expected_sim_s_;
  v.buckets_done = state_.buckets_done.load(std::memory_order_relaxed);
  v.buckets = state_.buckets.load(std::memory_order_relaxed);
  v.timing_bucket_bytes = state_.timing_bucket_bytes.load(std::memory_order_relaxed);
  v.timing_extrapolated = state_.timing_extrapolated.load(std::memory_order_relaxed);
  return progress_text(v);
}

void ProgressLine::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (printed_ > 0) {
    std::fprintf(out_, "\r%s\r", std::string(printed_, ' ').c_str());
    std::fflush(out_);
  }
}

void ProgressLine::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  // Quiet for the first second: short runs print nothing.
  if (wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) return;
  while (!stopping_) {
    std::string line = text();
    const std::size_t width = line.size();
    if (width < printed_) line.append(printed_ - width, ' ');
    std::fprintf(out_, "\r%s", line.c_str());
    std::fflush(out_);
    printed_ = std::max(printed_, width);
    wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stopping_; });
  }
}

}  // namespace syncsim::app
