#pragma once
// Fitting the simulator's physical parameters (scenario/physical_parameters.hpp) to nccl-tests
// measurements: every measured point (op, rank count, size) is simulated on the scenario's fabric,
// as `syncsim collective` would run it (NCCL's algorithm, protocol and channels), and the
// parameters move, within their ranges, to minimise the squared relative errors
// (calibration/bounded_least_squares.hpp). Because the parameters are the simulator's own, the fit
// carries to any op and rank count the scenario's fabric holds: measure 2 nodes, predict 64.
//
// A parameter no measured point depends on (a protocol NCCL never ran at the measured sizes, the
// NIC in a one-node log) keeps its nominal value and is reported as not identified; so is one the
// data cannot tell apart from another (relative one-sigma error above 50%).
#include <cstdint>
#include <string>
#include <vector>

#include "calibration/nccl_tests_log.hpp"
#include "calibration/profile.hpp"
#include "scenario/scenario.hpp"

namespace syncsim::app {

// One measured size: the mean time over the measurement's usable rows (both placements unless
// the caller filtered them).
struct MeasuredPoint {
  std::string op;
  int ranks = 0;
  int64_t bytes = 0;
  double measured_us = 0;
};

struct PredictedPoint {
  MeasuredPoint measured;
  double predicted_us = 0;
  double rel_error = 0;  // (predicted - measured) / measured
  std::string algorithm;
  std::string protocol;
};

// Points per (op, ranks, bytes), ascending, in order of first appearance of (op, ranks): usable
// rows only (time > 0, #wrong not > 0).
std::vector<MeasuredPoint> measured_points(const std::vector<calibration::Measurement>& rows);

// Simulates every point on `scenario` (its fidelity, its parameters). Throws
// CollectiveUsageError for a point the fabric cannot hold (more ranks than GPUs) or an op syncsim
// does not model.
std::vector<PredictedPoint> predict_points(const Scenario& scenario,
                                           const std::vector<MeasuredPoint>& points);

struct PhysicalFitOptions {
  std::vector<std::string> parameters;  // names to fit; empty: all of them
  Fidelity fidelity = Fidelity::Analytic;
  // Points above this size are left out of the fit (the fit's cost grows with the bytes
  // simulated, and past a few hundred MiB a collective's time is linear in its size, so they add
  // cost, not information) and predicted with the fitted parameters: a check of the extrapolation.
  // 0: none.
  int64_t max_fit_bytes = int64_t{256} << 20;
  int max_iterations = 20;
  unsigned threads = 0;  // simulations side by side; 0: one per hardware thread
};

struct PhysicalFitResult {
  calibration::PhysicalFit fit;
  std::vector<PredictedPoint> points;  // every point, with the fitted parameters
  int fitted_points = 0;               // how many of them the fit used (max_fit_bytes)
  int simulations = 0;                 // sweeps of all points the fit ran
  int iterations = 0;
};

// Fits on `points`; the scenario's calibration profile, if any, is ignored (the fit starts from
// the nominal values). Throws as predict_points does.
PhysicalFitResult fit_physical_parameters(const Scenario& scenario,
                                          const std::vector<MeasuredPoint>& points,
                                          const PhysicalFitOptions& options = {});

// Fit small, check large: how well the physical fit predicts what it did not see.
//   - fit_on_ranks set, or the points hold several rank counts: fit on the points of that rank
//     count (default: the smallest) and predict every point; the fitted rank count's own points
//     are in-sample (PredictedPoint::in_fit).
//   - one rank count: k-fold over sizes, interleaved (size index mod folds), each held-out size
//     predicted by the fit on the others.
struct TransferCheck {
  int fit_on_ranks = 0;                        // 0: k-fold
  int folds = 0;                               // k-fold only
  std::vector<calibration::PhysicalFit> fits;  // the one fit, or one per fold
  std::vector<PredictedPoint> predictions;     // in the order of the points given
  std::vector<bool> in_fit;                    // per prediction: the fit saw this point
};
TransferCheck check_transfer(const Scenario& scenario, const std::vector<MeasuredPoint>& points,
                             int fit_on_ranks, int folds, const PhysicalFitOptions& options = {});

// `scenario` with the fit's parameters set (as a profile's `physical:` block sets them).
Scenario with_physical_fit(Scenario scenario, const calibration::PhysicalFit& fit);

}  // namespace syncsim::app
