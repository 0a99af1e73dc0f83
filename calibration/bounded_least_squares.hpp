#pragma once
// Nonlinear least squares with box bounds (Levenberg-Marquardt with a forward-difference
// Jacobian), for fitting a simulator's parameters to measurements: minimise sum r_i(x)^2 where
// r(x) is whatever the caller computes (e.g. relative errors of simulated against measured
// times). The residual function is a black box, so the Jacobian is taken by finite differences of
// `relative_step` of each parameter's scale; parameters move in units of their start value, so
// microseconds and fractions are treated alike.
//
// Uncertainty: cov = s^2 (J^T J)^+ at the solution (J in the parameters' own units), s^2 = sum r^2
// / (points - free parameters), the usual linearised estimate; its square-root diagonal is each
// parameter's one-sigma error. A parameter no residual depends on (a zero Jacobian column) keeps
// its start value and is reported as not sensitive.
#include <functional>
#include <span>
#include <vector>

namespace syncsim::calibration {

struct BoundedLeastSquaresProblem {
  std::vector<double> start;  // inside [lower, upper]
  std::vector<double> lower;
  std::vector<double> upper;
  // r(x) for x of start.size(); the same length on every call.
  std::function<std::vector<double>(const std::vector<double>&)> residuals;
};

struct BoundedLeastSquaresOptions {
  int max_iterations = 30;
  double relative_step = 0.01;      // finite-difference step, share of the parameter's scale
  double tolerance = 1e-6;          // stop when the sum of squares improves less than this share
  double sensitivity_floor = 1e-9;  // Jacobian columns below this norm: not sensitive
  // Jacobian columns evaluated side by side (the residual function must then be safe to call
  // from several threads). The result does not depend on it.
  unsigned threads = 1;
};

struct BoundedLeastSquaresResult {
  std::vector<double> x;
  std::vector<double> stddev;     // one sigma; 0 for a parameter that is not sensitive
  std::vector<bool> sensitive;    // some residual depends on it
  std::vector<bool> at_bound;     // ended on its lower or upper bound
  std::vector<double> residuals;  // r(x)
  double sum_of_squares = 0;
  int iterations = 0;
  int evaluations = 0;  // calls of the residual function
  bool converged = false;
};

// f at every point of `xs`, on up to `threads` threads; results in the order of `xs`.
std::vector<std::vector<double>> evaluate_each(
    const std::function<std::vector<double>(const std::vector<double>&)>& f,
    std::span<const std::vector<double>> xs, unsigned threads);

// Throws std::invalid_argument for inconsistent sizes or a start outside its bounds.
BoundedLeastSquaresResult solve_bounded_least_squares(
    const BoundedLeastSquaresProblem& problem, const BoundedLeastSquaresOptions& options = {});

}  // namespace syncsim::calibration
