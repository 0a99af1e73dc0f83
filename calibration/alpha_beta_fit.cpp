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

double trimmed_cost(const LinearFit& f, double threshold) {
  double c = 0;
  for (double r : f.rel) c += std::min(r * r, threshold * threshold);
  return c;
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
  const std::string& op = ms.front().op;
  const int ranks = ms.front().ranks;
  const std::string what = op + ", " + std::to_string(ranks) + " ranks";
  std::vector<const Measurement*> used;
  for (const auto& m : ms) {
    if (m.op != op || m.ranks != ranks) {
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
  std::map<std::pair<std::size_t, std::size_t>, LinearFit> cache;
  auto seg_fit = [&](std::size_t b, std::size_t e) -> const LinearFit& {
    auto it = cache.find({b, e});
    if (it == cache.end()) it = cache.emplace(std::pair{b, e}, robust_fit(seg_points(b, e))).first;
    return it->second;
  };

  // The best partition into each regime count, by dynamic programming over contiguous segments of
  // at least `min_points_per_regime` sizes: it minimises the summed trimmed squared relative error
  // (a point missing by more than the split threshold costs the threshold squared, so one bad row
  // cannot drag a boundary).
  const auto minp = static_cast<std::size_t>(std::max(2, options.min_points_per_regime));
  const auto most = std::min(static_cast<std::size_t>(std::max(1, options.max_regimes)),
                             std::max<std::size_t>(1, distinct / minp));
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // cost[r][e]: best cost of sizes [0, e) in r regimes; from[r][e]: where its last regime starts.
  std::vector<std::vector<double>> cost(most + 1, std::vector<double>(distinct + 1, kInf));
  std::vector<std::vector<std::size_t>> from(most + 1, std::vector<std::size_t>(distinct + 1, 0));
  cost[0][0] = 0;
  for (std::size_t r = 1; r <= most; ++r) {
    for (std::size_t e = r * minp; e <= distinct; ++e) {
      const std::size_t first_b = (r - 1) * minp;
      for (std::size_t b = first_b; b + minp <= e; ++b) {
        if (cost[r - 1][b] == kInf) continue;
        // One regime takes every size: a line of fewer than `minp` sizes is allowed then.
        const double c = cost[r - 1][b] + trimmed_cost(seg_fit(b, e), thr);
        if (c < cost[r][e]) {
          cost[r][e] = c;
          from[r][e] = b;
        }
      }
    }
  }
  cost[1][distinct] = trimmed_cost(seg_fit(0, distinct), thr);
  from[1][distinct] = 0;

  const std::size_t n_points = pts.size();
  const auto outlier_budget = static_cast<std::size_t>(std::max(
      options.max_outliers,
      static_cast<int>(std::floor(options.max_outlier_fraction * static_cast<double>(n_points)))));
  auto assemble = [&](const std::vector<std::size_t>& best) {
    LineFit out;
    out.op = ms.front().op;
    out.ranks = ms.front().ranks;
    std::vector<std::size_t> rejected;  // points the robust fit gave zero weight, off by > thr
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
        p.regime = static_cast<int>(s);
        p.line = used[i]->line;
        if (f.rejected[local] && std::abs(p.rel_error) > thr) rejected.push_back(i);
        out.points.push_back(p);
      }
    }
    // Outliers are the worst rejected rows, at most `outlier_budget` of them: more rows off the
    // line than that are a shape the regimes miss, and they stay in max_rel_error.
    std::stable_sort(rejected.begin(), rejected.end(), [&](std::size_t x, std::size_t y) {
      return std::abs(out.points[x].rel_error) > std::abs(out.points[y].rel_error);
    });
    if (rejected.size() > outlier_budget) rejected.resize(outlier_budget);
    for (const std::size_t i : rejected) out.points[i].outlier = true;
    for (const auto& p : out.points) {
      const double e = std::abs(p.rel_error);
      out.max_rel_error_all = std::max(out.max_rel_error_all, e);
      if (p.outlier) {
        ++out.outliers;
      } else {
        out.max_rel_error = std::max(out.max_rel_error, e);
      }
    }
    return out;
  };
  auto bounds_of = [&](std::size_t regimes) {
    std::vector<std::size_t> bounds(regimes + 1, 0);
    bounds[regimes] = distinct;
    for (std::size_t r = regimes; r > 0; --r) bounds[r - 1] = from[r][bounds[r]];
    return bounds;
  };

  // Regime count: one line unless it misses a non-outlier point by more than the split threshold;
  // then each further regime (up to one per protocol/algorithm switch NCCL makes over the sweep)
  // is taken only if it cuts the max error of the best fit so far by `min_regime_gain` (a
  // fraction of it), and only while that fit still misses by more than the threshold. Noise never
  // clears the threshold and a regime that only trims noise does not earn its two parameters.
  std::vector<std::size_t> best = {0, distinct};
  LineFit out = assemble(best);
  for (std::size_t regimes = 2; regimes <= most && out.max_rel_error > thr; ++regimes) {
    if (cost[regimes][distinct] == kInf) break;
    auto bounds = bounds_of(regimes);
    LineFit candidate = assemble(bounds);
    if (candidate.max_rel_error <= (1 - options.min_regime_gain) * out.max_rel_error) {
      out = std::move(candidate);
      best = std::move(bounds);
    }
  }

  // Held-out error: every size strictly inside its regime (neither its smallest nor its largest)
  // is left out in turn, the regime is refitted on its other sizes and the left-out size's
  // non-outlier rows are predicted; heldout_rel_error is the largest |relative error| of those
  // predictions. Each prediction is an interpolation inside the sizes that trained it, so a
  // regime of 3 sizes is checked by the line through its two ends, and a left-out end size never
  // extrapolates a 2-size line across decades of sizes.
  for (std::size_t s = 0; s + 1 < best.size(); ++s) {
    for (std::size_t d = best[s] + 1; d + 1 < best[s + 1]; ++d) {
      std::vector<Pt> train;
      for (std::size_t i = first_of[best[s]]; i < first_of[best[s + 1]]; ++i) {
        if (i < first_of[d] || i >= first_of[d + 1]) train.push_back(pts[i]);
      }
      const Regime r = to_regime(robust_fit(train));
      bool predicted = false;
      for (std::size_t i = first_of[d]; i < first_of[d + 1]; ++i) {
        if (out.points[i].outlier) continue;
        const double pred = r.time_us(used[i]->bytes);
        out.heldout_rel_error =
            std::max(out.heldout_rel_error, std::abs((pts[i].time_us - pred) / pts[i].time_us));
        predicted = true;
      }
      out.heldout_sizes += predicted ? 1 : 0;
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
