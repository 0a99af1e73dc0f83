#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "calibration/alpha_beta_fit.hpp"
#include "tests/calibration/nccl_log_gen.hpp"

using namespace syncsim::calibration;
using syncsim::test::LogGen;

namespace {
std::vector<Measurement> measure(const LogGen& g) {
  return parse_nccl_tests_log(g.text(), "gen.log").measurements;
}
}  // namespace

TEST_CASE("calibration: alpha-beta fit recovers latency and bandwidth within 2%") {
  for (const uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    CAPTURE(seed);
    for (const double alpha : {5.0, 20.0, 60.0}) {
      CAPTURE(alpha);
      LogGen g;
      g.seed = seed;
      g.latency_us = alpha;
      g.algbw_GBps = 180.0;
      g.noise_rel = 0.01;
      const auto fits = fit_collectives(measure(g));
      REQUIRE(fits.size() == 1);
      const auto& f = fits[0];
      CHECK(f.op == "all_reduce");
      CHECK(f.ranks == 8);
      CHECK(f.regimes.size() == 1);
      CHECK(f.latency_us() == doctest::Approx(alpha).epsilon(0.02));
      CHECK(f.algbw_GBps() == doctest::Approx(180.0).epsilon(0.02));
      CHECK(f.max_rel_error < 0.05);
      CHECK(f.heldout_rel_error < 0.05);
      CHECK(f.points.size() == 2 * 28);
      CHECK(f.outliers == 0);
    }
  }
}

TEST_CASE("calibration: one outlier does not move the fit beyond 2%") {
  for (const int64_t bad : {int64_t{64}, int64_t{1} << 16, int64_t{1} << 28}) {
    for (const double factor : {0.3, 3.0, 10.0}) {
      CAPTURE(bad);
      CAPTURE(factor);
      LogGen g;
      g.noise_rel = 0.005;
      g.outlier_bytes = bad;
      g.outlier_factor = factor;
      const auto f = fit_line(measure(g));
      CHECK(f.regimes.size() == 1);
      CHECK(f.latency_us() == doctest::Approx(20.0).epsilon(0.02));
      CHECK(f.algbw_GBps() == doctest::Approx(150.0).epsilon(0.02));
      CHECK(f.outliers == 1);
      CHECK(f.max_rel_error_all > 0.5);   // the outlier is reported...
      CHECK(f.max_rel_error < 0.05);      // ...but left out of the max error
      CHECK(f.heldout_rel_error < 0.05);  // ...and of the held-out error
      for (const auto& p : f.points) {
        if (p.outlier) CHECK(p.bytes == bad);
      }
    }
  }
}

TEST_CASE("calibration: a two-regime sweep is split at the regime change") {
  LogGen g;
  g.latency_us = 8.0;  // LL-like: low latency, low bandwidth
  g.algbw_GBps = 10.0;
  g.switch_bytes = int64_t{1} << 20;
  g.latency2_us = 60.0;  // Simple-like: higher latency, full bandwidth
  g.algbw2_GBps = 200.0;
  g.noise_rel = 0.005;
  const auto f = fit_line(measure(g));
  REQUIRE(f.regimes.size() == 2);
  CHECK(f.regimes[0].min_bytes == 0);
  CHECK(f.regimes[0].max_bytes == (int64_t{1} << 20) - 1);
  CHECK(f.regimes[1].min_bytes == int64_t{1} << 20);
  CHECK(f.regimes[1].max_bytes == int64_t{1} << 30);
  CHECK(f.regimes[0].latency_us == doctest::Approx(8.0).epsilon(0.02));
  CHECK(f.regimes[0].algbw_GBps == doctest::Approx(10.0).epsilon(0.02));
  CHECK(f.regimes[1].latency_us == doctest::Approx(60.0).epsilon(0.05));
  CHECK(f.regimes[1].algbw_GBps == doctest::Approx(200.0).epsilon(0.02));
  CHECK(f.latency_us() == f.regimes[0].latency_us);
  CHECK(f.algbw_GBps() == f.regimes[1].algbw_GBps);
  CHECK(f.max_rel_error < 0.05);
  CHECK(f.time_us(int64_t{1} << 30) == doctest::Approx(g.model_us(int64_t{1} << 30)).epsilon(0.02));
  CHECK(f.time_us(1024) == doctest::Approx(g.model_us(1024)).epsilon(0.02));
}

TEST_CASE("calibration: three regimes at most") {
  LogGen g;
  g.latency_us = 5.0;
  g.algbw_GBps = 2.0;
  g.switch_bytes = int64_t{1} << 24;
  g.latency2_us = 100.0;
  g.algbw2_GBps = 300.0;
  g.noise_rel = 0.002;
  // A third regime in the middle: a mid-size protocol.
  auto ms = measure(g);
  for (auto& m : ms) {
    if (m.bytes >= (int64_t{1} << 14) && m.bytes < (int64_t{1} << 24)) {
      m.time_us = 30.0 + static_cast<double>(m.bytes) / (1000.0 * 40.0);
    }
  }
  const auto f = fit_line(ms);
  REQUIRE(f.regimes.size() == 3);
  CHECK(f.regimes[1].min_bytes == int64_t{1} << 14);
  CHECK(f.regimes[2].min_bytes == int64_t{1} << 24);
  CHECK(f.regimes[1].algbw_GBps == doctest::Approx(40.0).epsilon(0.02));
  CHECK(f.max_rel_error < 0.05);
}

TEST_CASE("calibration: a regime is added only where it cuts the max error by the stated gain") {
  // A noisy line is one regime though five are allowed: it is within the split threshold. A
  // regime change makes two, unless one line is asked for.
  LogGen g;
  g.noise_rel = 0.01;
  CHECK(fit_line(measure(g)).regimes.size() == 1);
  FitOptions one_line;
  one_line.max_regimes = 1;
  g.switch_bytes = int64_t{1} << 20;
  g.latency2_us = 60.0;
  g.algbw2_GBps = 400.0;
  CHECK(fit_line(measure(g), one_line).regimes.size() == 1);
  CHECK(fit_line(measure(g)).regimes.size() == 2);
}

TEST_CASE("calibration: the held-out error predicts inner sizes from the line through the rest") {
  // Three sizes, one regime: the inner size (2 MB) is left out and predicted by the line through
  // the other two, 10 us + 1e-5 us/B (100 GB/s): 30 us against 33 measured, |33 - 30| / 33.
  std::vector<Measurement> ms;
  for (const auto& [bytes, us] :
       {std::pair<int64_t, double>{1'000'000, 20.0}, {2'000'000, 33.0}, {3'000'000, 40.0}}) {
    Measurement m;
    m.op = "all_reduce";
    m.ranks = 8;
    m.bytes = bytes;
    m.time_us = us;
    ms.push_back(m);
  }
  const auto f = fit_line(ms);
  REQUIRE(f.regimes.size() == 1);
  CHECK(f.heldout_sizes == 1);
  CHECK(f.heldout_rel_error == doctest::Approx(3.0 / 33.0).epsilon(1e-9));

  // On an exact line every left-out size is predicted exactly; the end sizes are never left out.
  for (std::size_t i = 0; i < ms.size(); ++i) {
    ms[i].time_us = 10.0 + static_cast<double>(ms[i].bytes) * 1e-5;
  }
  Measurement four = ms.back();
  four.bytes = 4'000'000;
  four.time_us = 50.0;
  ms.push_back(four);
  const auto exact = fit_line(ms);
  CHECK(exact.heldout_sizes == 2);
  CHECK(exact.heldout_rel_error < 1e-9);
  CHECK(exact.max_rel_error < 1e-9);
}

TEST_CASE("calibration: fits group by op and rank count; unfittable input is a FitError") {
  LogGen a;
  LogGen b;
  b.ranks = 16;
  b.algbw_GBps = 90.0;
  auto ms = measure(a);
  const auto mb = measure(b);
  ms.insert(ms.end(), mb.begin(), mb.end());
  const auto fits = fit_collectives(ms);
  REQUIRE(fits.size() == 2);
  CHECK(fits[1].ranks == 16);
  CHECK(fits[1].algbw_GBps() == doctest::Approx(90.0).epsilon(0.02));

  LogGen one;
  one.min_bytes = one.max_bytes = 1024;
  CHECK_THROWS_WITH_AS(fit_line(measure(one)),
                       "all_reduce, 8 ranks: expected rows of at least 2 distinct sizes with "
                       "positive times, found 1",
                       FitError);
}

TEST_CASE("calibration: GEMM efficiency fit recovers a known saturating curve") {
  const double peak = 989.0;
  const double e_max = 0.8;
  const double i_half = 150.0;
  std::vector<GemmSample> samples;
  for (const int64_t tokens : {128, 512, 2048, 8192}) {
    for (const auto& [n, k] :
         {std::pair<int64_t, int64_t>{4096, 4096}, {12288, 4096}, {4096, 11008}, {1024, 4096}}) {
      const double i = arithmetic_intensity(tokens, n, k, 2);
      samples.push_back({tokens, n, k, "bf16", peak * e_max * i / (i + i_half)});
    }
  }
  samples.push_back({4096, 4096, 4096, "fp16", 500.0});  // another dtype is ignored
  const GemmFit f = fit_gemm(samples, "bf16", peak);
  CHECK(f.e_max == doctest::Approx(e_max).epsilon(1e-6));
  CHECK(f.intensity_half == doctest::Approx(i_half).epsilon(1e-6));
  CHECK(f.max_rel_error < 1e-9);
  CHECK(f.efficiency(8192, 8192, 8192) ==
        doctest::Approx(e_max * 2730.67 / (2730.67 + i_half)).epsilon(1e-4));
  CHECK(arithmetic_intensity(4096, 4096, 4096, 2) == doctest::Approx(4096.0 / 3.0));
  CHECK_THROWS_AS(fit_gemm(samples, "fp16", peak), FitError);  // one sample
  CHECK_THROWS_AS(dtype_bytes("int4"), FitError);
}
