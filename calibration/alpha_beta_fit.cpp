#include "calibration/alpha_beta_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <Eigen/Dense>

namespace syncsim::calibration {

namespace {

constexpr double kUsPerBytePerGBps = 1e-3;  // bytes / (GB/s) = 1e-9 s = 1e-3 us
constexpr double kMadToSigma = 1.4826;
constexpr double kHuberK = 1.345;
constexpr double kTukeyC = 4.685;
constexpr double kMinScale = 1e-3;  // 0.1%: below nccl-tests' printing precision of most rows
constexpr int kHuberIterations = 6;
constexpr int kTukeyIterations = 12;

struct Pt {
  double bytes;
  double time_us;
};

struct LinearFit {
  double a = 0;                // latency, us
  double b = 0;                // us per byte
  std::vector<double> rel;     // relative residuals
  std::vector<bool> rejected;  // zero Tukey weight
};

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double m = *mid;
  if (v.size() % 2 == 0) m = 0.5 * (m + *std::max_element(v.begin(), mid));
  return m;
}

// Weighted least squares of t = a + b*S on relative residuals with per-point robustness weights w.
// free_a / free_b select the parameters (a fixed one is 0).
std::pair<double, double> solve(const std::vector<Pt>& pts, const std::vector<double>& w,
                                bool free_a, bool free_b) {
  double smax = 1;
  for (const auto& p : pts) smax = std::max(smax, p.bytes);
  const auto n = static_cast<Eigen::Index>(pts.size());
  const Eigen::Index cols = (free_a ? 1 : 0) + (free_b ? 1 : 0);
  Eigen::MatrixXd A(n, cols);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& p = pts[static_cast<std::size_t>(i)];
    const double sw = std::sqrt(w[static_cast<std::size_t>(i)]) / p.time_us;  // relative error
    Eigen::Index c = 0;
    if (free_a) A(i, c++) = sw;
    if (free_b) A(i, c++) = sw * p.bytes / smax;  // column scaled to O(1)
    y(i) = sw * p.time_us;
  }
  const Eigen::VectorXd x = A.colPivHouseholderQr().solve(y);
  Eigen::Index c = 0;
  const double a = free_a ? x(c++) : 0.0;
  const double b = free_b ? x(c) / smax : 0.0;
  return {a, b};
}

std::vector<double> residuals(const std::vector<Pt>& pts, double a, double b) {
  std::vector<double> r;
  r.reserve(pts.size());
  for (const auto& p : pts) r.push_back((p.time_us - (a + b * p.bytes)) / p.time_us);
  return r;
}

double robust_scale(const std::vector<double>& r) {
  const double med = median(r);
  std::vector<double> dev;
  dev.reserve(r.size());
  for (double x : r) dev.push_back(std::abs(x - med));
  return std::max(kMinScale, kMadToSigma * median(dev));
}

// IRLS: Huber iterations from the plain weighted fit, then Tukey biweight iterations. Latency and
// bandwidth are kept physical: a negative latency refits with a = 0, a negative slope with b = 0.
LinearFit robust_fit(const std::vector<Pt>& pts) {
  std::size_t distinct = 0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (i == 0 || pts[i].bytes != pts[i - 1].bytes) ++distinct;
  }
  const bool both = distinct >= 2;
  std::vector<double> w(pts.size(), 1.0);
  bool free_a = true;
  bool free_b = both;
  auto fit_once = [&]() {
    auto [a, b] = solve(pts, w, free_a, free_b);
    if (free_a && free_b && a < 0) {
      free_a = false;
      std::tie(a, b) = solve(pts, w, false, true);
    } else if (free_a && free_b && b < 0) {
      free_b = false;
      std::tie(a, b) = solve(pts, w, true, false);
    }
    return std::pair{a, b};
  };
  auto [a, b] = fit_once();
  for (int it = 0; it < kHuberIterations + kTukeyIterations; ++it) {
    const auto r = residuals(pts, a, b);
    const double s = robust_scale(r);
    const bool tukey = it >= kHuberIterations;
    double total = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
      const double u = std::abs(r[i]) / s;
      if (tukey) {
        const double q = u / kTukeyC;
        w[i] = q < 1 ? (1 - q * q) * (1 - q * q) : 0.0;
      } else {
        w[i] = u <= kHuberK ? 1.0 : kHuberK / u;
      }
      total += w[i];
    }
    if (total <= 0) break;  // every point rejected: keep the previous fit
    free_a = true;
    free_b = both;
    std::tie(a, b) = fit_once();
  }
  LinearFit f;
  f.a = a;
  f.b = b;
  f.rel = residuals(pts, a, b);
  const double s = robust_scale(f.rel);
  for (double r : f.rel) f.rejected.push_back(std::abs(r) / s >= kTukeyC);
  return f;
}

// One contiguous group of distinct sizes [begin, end) and the points in it.
struct Segment {
  std::size_t begin = 0, end = 0;   // distinct-size indices
  std::size_t first = 0, last = 0;  // point indices [first, last)
};

double trimmed_cost(const LinearFit& f, double threshold) {
  double c = 0;
  for (double r : f.rel) c += std::min(r * r, threshold * threshold);
  return c;
}

int bad_points(const LinearFit& f, double threshold) {
  return static_cast<int>(
      std::count_if(f.rel.begin(), f.rel.end(), [&](double r) { return std::abs(r) > threshold; }));
}

Regime to_regime(const LinearFit& f) {
  Regime r;
  r.latency_us = f.a;
  r.algbw_GBps = f.b > 0 ? kUsPerBytePerGBps / f.b : 0.0;
  return r;
}

}  // namespace

double Regime::time_us(int64_t bytes) const {
  return latency_us +
         (algbw_GBps > 0 ? static_cast<double>(bytes) * kUsPerBytePerGBps / algbw_GBps : 0.0);
}

double LineFit::time_us(int64_t bytes) const {
  for (const auto& r : regimes) {
    if (bytes <= r.max_bytes) return r.time_us(bytes);
  }
  return regimes.back().time_us(bytes);
}

LineFit fit_line(const std::vector<Measurement>& ms, const FitOptions& options) {
  if (ms.empty()) throw FitError("expected measurements to fit, found none");
  LineFit out;
  out.op = ms.front().op;
  out.ranks = ms.front().ranks;
  const std::string what = out.op + ", " + std::to_string(out.ranks) + " ranks";
  std::vector<const Measurement*> used;
  for (const auto& m : ms) {
    if (m.op != out.op || m.ranks != out.ranks) {
      throw FitError(what + ": expected one op and rank count per line, found " + m.op + " with " +
                     std::to_string(m.ranks) + " ranks");
    }
    if (options.skip_wrong && m.wrong && *m.wrong > 0) continue;
    if (!(m.time_us > 0)) continue;  // a 0.00 us row carries no information
    used.push_back(&m);
  }
  std::stable_sort(used.begin(), used.end(), [](const Measurement* x, const Measurement* y) {
    return x->bytes != y->bytes ? x->bytes < y->bytes : x->placement < y->placement;
  });
  std::vector<Pt> pts;
  std::vector<std::size_t> first_of;  // point index of each distinct size, plus the end
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (i == 0 || used[i]->bytes != used[i - 1]->bytes) first_of.push_back(i);
    pts.push_back({static_cast<double>(used[i]->bytes), used[i]->time_us});
  }
  first_of.push_back(used.size());
  const std::size_t distinct = first_of.size() - 1;
  if (distinct < 2) {
    throw FitError(what +
                   ": expected rows of at least 2 distinct sizes with positive times, found " +
                   std::to_string(distinct));
  }
  auto seg_points = [&](std::size_t b, std::size_t e) {
    return std::vector<Pt>(pts.begin() + static_cast<std::ptrdiff_t>(first_of[b]),
                           pts.begin() + static_cast<std::ptrdiff_t>(first_of[e]));
  };
  const double thr = options.split_threshold;

  // Candidate partitions into 1, 2 or 3 regimes; each is a list of distinct-size boundaries.
  std::map<std::pair<std::size_t, std::size_t>, LinearFit> cache;
  auto seg_fit = [&](std::size_t b, std::size_t e) -> const LinearFit& {
    auto it = cache.find({b, e});
    if (it == cache.end()) it = cache.emplace(std::pair{b, e}, robust_fit(seg_points(b, e))).first;
    return it->second;
  };
  auto evaluate = [&](const std::vector<std::size_t>& bounds) {
    double cost = 0;
    int bad = 0;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      const auto& f = seg_fit(bounds[i], bounds[i + 1]);
      cost += trimmed_cost(f, thr);
      bad += bad_points(f, thr);
    }
    return std::pair{cost, bad};
  };
  std::vector<std::size_t> best = {0, distinct};
  auto [best_cost, best_bad] = evaluate(best);
  const auto minp = static_cast<std::size_t>(std::max(2, options.min_points_per_regime));
  for (int regimes = 2; regimes <= options.max_regimes && best_bad > options.max_outliers;
       ++regimes) {
    std::vector<std::size_t> cand_best;
    double cand_cost = std::numeric_limits<double>::infinity();
    int cand_bad = 0;
    auto consider = [&](std::vector<std::size_t> bounds) {
      const auto [c, bad] = evaluate(bounds);
      if (c < cand_cost) {
        cand_cost = c;
        cand_bad = bad;
        cand_best = std::move(bounds);
      }
    };
    if (regimes == 2) {
      for (std::size_t j = minp; j + minp <= distinct; ++j) consider({0, j, distinct});
    } else {
      for (std::size_t j = minp; j + 2 * minp <= distinct; ++j) {
        for (std::size_t k = j + minp; k + minp <= distinct; ++k) consider({0, j, k, distinct});
      }
    }
    if (!cand_best.empty() && cand_cost < best_cost) {
      best = cand_best;
      best_cost = cand_cost;
      best_bad = cand_bad;
    }
  }

  // Regimes and per-point residuals.
  for (std::size_t s = 0; s + 1 < best.size(); ++s) {
    const auto& f = seg_fit(best[s], best[s + 1]);
    Regime r = to_regime(f);
    r.min_bytes = s == 0 ? 0 : used[first_of[best[s]]]->bytes;
    r.max_bytes =
        s + 2 == best.size() ? used.back()->bytes : used[first_of[best[s + 1]]]->bytes - 1;
    out.regimes.push_back(r);
    for (std::size_t i = first_of[best[s]]; i < first_of[best[s + 1]]; ++i) {
      const std::size_t local = i - first_of[best[s]];
      FitPoint p;
      p.bytes = used[i]->bytes;
      p.placement = used[i]->placement;
      p.measured_us = used[i]->time_us;
      p.predicted_us = r.time_us(p.bytes);
      p.rel_error = f.rel[local];
      p.outlier = f.rejected[local];
      p.regime = static_cast<int>(s);
      p.line = used[i]->line;
      out.max_rel_error = std::max(out.max_rel_error, std::abs(p.rel_error));
      out.outliers += p.outlier ? 1 : 0;
      out.points.push_back(p);
    }
  }

  // Held-out error: interleaved k-fold over the distinct sizes, regimes kept, each regime refitted
  // without the held-out sizes (the full regime fit when too few sizes would remain).
  // With fewer sizes than folds this is leave-one-size-out.
  const auto k = std::min(static_cast<std::size_t>(std::max(2, options.holdout_folds)), distinct);
  for (std::size_t fold = 0; fold < k; ++fold) {
    for (std::size_t s = 0; s + 1 < best.size(); ++s) {
      std::vector<Pt> train;
      std::size_t train_sizes = 0;
      for (std::size_t d = best[s]; d < best[s + 1]; ++d) {
        if (d % k == fold) continue;
        ++train_sizes;
        for (std::size_t i = first_of[d]; i < first_of[d + 1]; ++i) train.push_back(pts[i]);
      }
      const Regime r = train_sizes >= 2 ? to_regime(robust_fit(train)) : out.regimes[s];
      for (std::size_t d = best[s]; d < best[s + 1]; ++d) {
        if (d % k != fold) continue;
        for (std::size_t i = first_of[d]; i < first_of[d + 1]; ++i) {
          if (out.points[i].outlier) continue;
          const double pred = r.time_us(used[i]->bytes);
          out.heldout_rel_error =
              std::max(out.heldout_rel_error, std::abs((pts[i].time_us - pred) / pts[i].time_us));
        }
      }
    }
  }
  return out;
}

std::vector<LineFit> fit_collectives(const std::vector<Measurement>& ms,
                                     const FitOptions& options) {
  std::vector<std::pair<std::pair<std::string, int>, std::vector<Measurement>>> groups;
  for (const auto& m : ms) {
    const std::pair<std::string, int> key{m.op, m.ranks};
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.emplace_back(key, std::vector<Measurement>{});
      it = std::prev(groups.end());
    }
    it->second.push_back(m);
  }
  std::vector<LineFit> fits;
  fits.reserve(groups.size());
  for (const auto& g : groups) fits.push_back(fit_line(g.second, options));
  return fits;
}

int dtype_bytes(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp8" || dtype == "int8") return 1;
  if (dtype == "fp32" || dtype == "tf32") return 4;
  throw FitError("expected a dtype bf16|fp16|fp8|int8|tf32|fp32, found \"" + dtype + "\"");
}

double arithmetic_intensity(int64_t m, int64_t n, int64_t k, int bytes_per_element) {
  const double dm = static_cast<double>(m);
  const double dn = static_cast<double>(n);
  const double dk = static_cast<double>(k);
  return 2.0 * dm * dn * dk / ((dm * dk + dk * dn + dm * dn) * bytes_per_element);
}

double GemmFit::efficiency(int64_t m, int64_t n, int64_t k) const {
  const double i = arithmetic_intensity(m, n, k, dtype_bytes(dtype));
  return e_max * i / (i + intensity_half);
}

GemmFit fit_gemm(const std::vector<GemmSample>& samples, const std::string& dtype,
                 double peak_tflops) {
  if (!(peak_tflops > 0)) throw FitError("gemm " + dtype + ": expected a positive peak_tflops");
  const int eb = dtype_bytes(dtype);
  std::vector<std::pair<double, double>> xy;  // (1/I, 1/eff)
  for (const auto& s : samples) {
    if (s.dtype != dtype) continue;
    if (s.m <= 0 || s.n <= 0 || s.k <= 0 || !(s.tflops > 0)) {
      throw FitError("gemm " + dtype + ": expected positive m, n, k and tflops, found m=" +
                     std::to_string(s.m) + " n=" + std::to_string(s.n) +
                     " k=" + std::to_string(s.k) + " tflops=" + std::to_string(s.tflops));
    }
    xy.emplace_back(1.0 / arithmetic_intensity(s.m, s.n, s.k, eb), peak_tflops / s.tflops);
  }
  if (xy.size() < 2) {
    throw FitError("gemm " + dtype + ": expected at least 2 samples, found " +
                   std::to_string(xy.size()));
  }
  const auto n = static_cast<Eigen::Index>(xy.size());
  Eigen::MatrixXd A(n, 2);
  Eigen::VectorXd y(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& [x, inv_eff] = xy[static_cast<std::size_t>(i)];
    A(i, 0) = 1.0 / inv_eff;
    A(i, 1) = x / inv_eff;
    y(i) = 1.0;
  }
  const Eigen::Vector2d p = A.colPivHouseholderQr().solve(y);
  if (!(p(0) > 0) || p(1) < 0) {
    throw FitError("gemm " + dtype + ": samples do not follow a saturating efficiency curve");
  }
  GemmFit f;
  f.dtype = dtype;
  f.peak_tflops = peak_tflops;
  f.e_max = 1.0 / p(0);
  f.intensity_half = p(1) / p(0);
  for (const auto& s : samples) {
    if (s.dtype != dtype) continue;
    const double pred = f.efficiency(s.m, s.n, s.k) * peak_tflops;
    f.max_rel_error = std::max(f.max_rel_error, std::abs(s.tflops - pred) / s.tflops);
  }
  return f;
}

}  // namespace syncsim::calibration
