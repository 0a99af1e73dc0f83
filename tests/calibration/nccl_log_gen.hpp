#pragma once
// Generates nccl-tests logs in the exact format of NVIDIA/nccl-tests src/util.cu (references §2)
// from a known alpha-beta model plus seeded relative noise, for the calibration tests.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>

namespace syncsim::test {

struct LogGen {
  std::string program = "all_reduce_perf";
  int ranks = 8;
  int64_t min_bytes = 8;
  int64_t max_bytes = int64_t{1} << 30;
  double latency_us = 20.0;
  double algbw_GBps = 150.0;
  // Optional second regime from `switch_bytes` on (0: none).
  int64_t switch_bytes = 0;
  double latency2_us = 0;
  double algbw2_GBps = 0;
  double noise_rel = 0.005;  // relative stddev of the time
  uint64_t seed = 1;
  int64_t outlier_bytes = -1;  // this size's out-of-place time is multiplied by outlier_factor
  double outlier_factor = 3.0;
  bool old_layout = false;  // no root column, float `error` column (nccl-tests <= 2.13-ish)
  std::string prefix;       // e.g. "[0] " or "[1,0]<stdout>:"
  double bus_factor = 2.0 * 7.0 / 8.0;

  double model_us(int64_t bytes) const {
    if (switch_bytes > 0 && bytes >= switch_bytes) {
      return latency2_us + static_cast<double>(bytes) / (1000.0 * algbw2_GBps);
    }
    return latency_us + static_cast<double>(bytes) / (1000.0 * algbw_GBps);
  }

  std::string line(const std::string& s) const { return prefix + s + "\n"; }

  // nccl-tests prints times over 1e4 us with no decimals.
  static std::string time_str(double t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, t < 1e4 ? "%.2f" : "%.0f", t);
    return buf;
  }

  std::string text() const {
    std::mt19937_64 rng(seed);
    std::normal_distribution<double> noise(0.0, noise_rel);
    std::string out;
    char buf[512];
    out += line("# nccl-tests version 2.13.10 nccl-headers=22304 nccl-library=22304");
    out += line("# Collective test starting: " + program);
    std::snprintf(
        buf, sizeof buf,
        "# nThread 1 nGpus %d minBytes %lld maxBytes %lld step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0",
        ranks, static_cast<long long>(min_bytes), static_cast<long long>(max_bytes));
    out += line(buf);
    out += line("#");
    out += line("# Using devices");
    for (int r = 0; r < ranks; ++r) {
      std::snprintf(buf, sizeof buf,
                    "#  Rank %2d Group  0 Pid %6d on %10s device %2d [%04x:%02x:%02x] %s", r,
                    4242 + r, "node001", r, 0, 0x18 + r, 0, "NVIDIA H100 80GB HBM3");
      out += line(buf);
    }
    out += line("#");
    if (old_layout) {
      out += line(
          "#                                                     out-of-place                      "
          " in-place          ");
      out += line(
          "#       size         count      type   redop     time   algbw   busbw  error     time   "
          "algbw   busbw  error");
      out += line(
          "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  "
          "(GB/s)  (GB/s)       ");
    } else {
      out += line(
          "#                                                              out-of-place             "
          "          in-place          ");
      out += line(
          "#       size         count      type   redop    root     time   algbw   busbw  #wrong   "
          "  time   algbw   busbw  #wrong");
      out += line(
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)           "
          "  (us)  (GB/s)  (GB/s)         ");
    }
    for (int64_t size = min_bytes; size <= max_bytes; size *= 2) {
      std::string row;
      if (old_layout) {
        std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s", static_cast<long long>(size),
                      static_cast<long long>(size / 4), "float", "sum");
      } else {
        std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s  %6i",
                      static_cast<long long>(size), static_cast<long long>(size / 4), "float",
                      "sum", -1);
      }
      row += buf;
      for (int place = 0; place < 2; ++place) {
        double t = model_us(size) * (1.0 + noise(rng));
        if (place == 0 && size == outlier_bytes) t *= outlier_factor;
        const std::string ts = time_str(t);
        const double tp = std::stod(ts);
        const double algbw = static_cast<double>(size) / 1e3 / tp;
        if (old_layout) {
          std::snprintf(buf, sizeof buf, "  %7s  %6.2f  %6.2f  %5s", ts.c_str(), algbw,
                        algbw * bus_factor, "2e-07");
        } else {
          std::snprintf(buf, sizeof buf, "  %7s  %6.2f  %6.2f  %5i", ts.c_str(), algbw,
                        algbw * bus_factor, 0);
        }
        row += buf;
      }
      out += line(row);
    }
    out += line("# Out of bounds values : 0 OK");
    out += line("# Avg bus bandwidth    : 42.0 ");
    out += line("#");
    out += line("# Collective test concluded: " + program);
    out += line("#");
    return out;
  }
};

}  // namespace syncsim::test
