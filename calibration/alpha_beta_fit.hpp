#pragma once
// Fits of measured collectives and GEMMs.
//
// Collectives: the alpha-beta model time_us = latency_us + bytes / (1000 * algbw_GBps), one line
// per (op, ranks), fitted by weighted least squares on relative error (weights 1/time^2, so 8 B and
// 8 GB rows count alike), made robust to outliers by iteratively reweighted least squares (Huber,
// then Tukey biweight on the relative residuals, scale = 1.4826 * MAD).
//
// Regimes: NCCL changes protocol (LL, LL128, Simple) and algorithm (ring, tree, NVLS) with size, so
// one line may not fit a whole sweep. For each regime count up to `max_regimes` the contiguous
// partition of the sizes (each regime at least `min_points_per_regime` sizes) minimising the
// summed squared relative error, each point's capped at `split_threshold` squared, is found by
// dynamic programming. One line is kept unless it misses a non-outlier point by more than
// `split_threshold`; a further regime is taken only while the fit so far still misses by more,
// and only if it cuts that max error by the fraction `min_regime_gain`.
//
// Outliers: rows the robust fit of their regime rejected (zero Tukey weight) and that miss it by
// more than `split_threshold`, at most max(`max_outliers`, `max_outlier_fraction` of the rows),
// the worst first (e.g. nccl-tests' first out-of-place iteration catching a warm-up). They are
// listed and counted, left out of `max_rel_error` and kept in `max_rel_error_all`.
//
// Held-out error: each size strictly inside its regime (not its smallest nor its largest) is left
// out in turn, the regime refitted on its remaining sizes, and the left-out size's non-outlier
// rows predicted; `heldout_rel_error` is the largest |relative error| of those predictions, over
// `heldout_sizes` sizes. Every prediction interpolates inside the sizes that trained it: an end
// size left out would extrapolate the refit, and a 3-size regime missing one end is a 2-point
// line whose extrapolation says nothing about the model. Regimes of 2 sizes (a whole sweep of 2
// sizes) have no inner size and are not checked.
//
// GEMM: efficiency = achieved / peak = e_max * I / (I + I_half), with I the arithmetic intensity
// 2mnk / ((mk + kn + mn) * dtype_bytes) in FLOP/byte: a saturating (Michaelis-Menten /
// roofline-knee) curve, fitted per dtype by weighted least squares on its linear form 1/eff =
// 1/e_max + (I_half/e_max) / I with weights 1/(1/eff)^2 (relative error).
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/nccl_tests_log.hpp"

namespace syncsim::calibration {

// Data that cannot be fitted (too few sizes, non-positive times). An input error (exit code 2).
class FitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct FitOptions {
  double split_threshold = 0.10;      // relative error that makes a point "not on the line"
  int max_outliers = 1;               // rows that may be set aside as outliers, at least...
  double max_outlier_fraction = 0.1;  // ...or this fraction of the rows, rounded down
  // One regime per switch NCCL makes over a sweep: LL, LL128 and Simple, and on NVLink/NVLS
  // systems a change of algorithm within Simple.
  int max_regimes = 5;
  int min_points_per_regime = 3;  // distinct sizes
  double min_regime_gain = 0.2;   // an extra regime must cut the max error by this fraction
  bool skip_wrong = true;         // leave out rows whose #wrong / error is > 0
};

struct Regime {
  int64_t min_bytes = 0;  // smallest size of the regime (0 for the first)
  int64_t max_bytes =
      0;  // largest size (the next regime's min - 1; the last measured for the last)
  double latency_us = 0;
  double algbw_GBps = 0;  // 0: time does not grow with size in this regime (latency only)
  double time_us(int64_t bytes) const;
};

struct FitPoint {
  int64_t bytes = 0;
  Placement placement = Placement::OutOfPlace;
  double measured_us = 0;
  double predicted_us = 0;
  double rel_error = 0;  // (measured - predicted) / measured
  bool outlier = false;  // given (near) zero weight by the robust fit
  int regime = 0;
  int line = 0;  // line in the log
};

struct LineFit {
  std::string op;
  int ranks = 0;
  std::vector<Regime> regimes;   // ordered by size, contiguous
  std::vector<FitPoint> points;  // ordered by size
  double max_rel_error = 0;      // max |rel_error| over the points that are not outliers
  double max_rel_error_all = 0;  // max |rel_error| over all points, outliers included
  double heldout_rel_error = 0;  // max |rel_error| of inner sizes predicted by leave-one-out refits
  int heldout_sizes = 0;         // sizes that heldout_rel_error covers
  int outliers = 0;
  // The small-message latency (first regime) and the large-message bandwidth (last regime).
  double latency_us() const { return regimes.front().latency_us; }
  double algbw_GBps() const { return regimes.back().algbw_GBps; }
  double time_us(int64_t bytes) const;
};

// One line: fits `ms` (all of one op and rank count) as described above.
LineFit fit_line(const std::vector<Measurement>& ms, const FitOptions& options = {});
// Groups by (op, ranks), in order of first appearance, and fits each group.
std::vector<LineFit> fit_collectives(const std::vector<Measurement>& ms,
                                     const FitOptions& options = {});

struct GemmSample {
  int64_t m = 0, n = 0, k = 0;
  std::string dtype;  // bf16 | fp16 | fp8 | tf32 | fp32
  double tflops = 0;  // achieved
};

struct GemmFit {
  std::string dtype;
  double peak_tflops = 0;
  double e_max = 0;           // asymptotic efficiency
  double intensity_half = 0;  // FLOP/byte at which efficiency is e_max / 2
  double max_rel_error = 0;
  double efficiency(int64_t m, int64_t n, int64_t k) const;
};

int dtype_bytes(const std::string& dtype);  // throws FitError for an unknown dtype
double arithmetic_intensity(int64_t m, int64_t n, int64_t k, int dtype_bytes);
// Samples of one dtype; peak_tflops is the datasheet dense peak of that dtype.
GemmFit fit_gemm(const std::vector<GemmSample>& samples, const std::string& dtype,
                 double peak_tflops);

}  // namespace syncsim::calibration
