#include "app/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace syncsim::app {

bool stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

std::string progress_text(double elapsed_s, double estimated_s) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  out << "run: " << elapsed_s << " s elapsed";
  if (estimated_s > 0) {
    const double fraction = elapsed_s / estimated_s;
    out.precision(0);
    out << ", ~" << std::min(99.0, 100.0 * fraction) << "% of the estimated " << estimated_s << " s";
    out.precision(1);
    if (fraction < 1.0) {
      out << ", ETA " << estimated_s - elapsed_s << " s";
    } else {
      out << ", past the estimate";
    }
  }
  return out.str();
}

ProgressLine::ProgressLine(bool enabled, double estimated_wall_s, std::FILE* out)
    : enabled_(enabled),
      estimated_s_(estimated_wall_s),
      out_(out),
      start_(std::chrono::steady_clock::now()) {
  if (enabled_) thread_ = std::thread([this] { loop(); });
}

ProgressLine::~ProgressLine() { stop(); }

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
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string line = progress_text(elapsed, estimated_s_);
    const std::size_t width = line.size();
    if (width < printed_) line.append(printed_ - width, ' ');
    std::fprintf(out_, "\r%s", line.c_str());
    std::fflush(out_);
    printed_ = std::max(printed_, width);
    wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stopping_; });
  }
}

}  // namespace syncsim::app
