// The bounded least-squares solver against closed forms: on a linear model it must land on the
// ordinary least-squares estimate with its textbook standard errors; bounds hold; a parameter no
// residual depends on stays put and is flagged.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "calibration/bounded_least_squares.hpp"

using namespace syncsim::calibration;

namespace {

// y_i = 3 + 0.5 t_i plus a fixed, zero-sum-free pattern of deviations.
const std::vector<double> kT = {0, 1, 2, 3, 4, 5, 6, 7};
const std::vector<double> kY = {3.1, 3.4, 4.05, 4.45, 5.02, 5.55, 5.93, 6.6};

std::vector<double> line_residuals(const std::vector<double>& x) {
  std::vector<double> r;
  for (std::size_t i = 0; i < kT.size(); ++i) r.push_back(x[0] + x[1] * kT[i] - kY[i]);
  return r;
}

}  // namespace

TEST_CASE("least squares: a linear model gives the OLS estimate and its standard errors") {
  BoundedLeastSquaresProblem p;
  p.start = {1.0, 1.0};
  p.lower = {-10, -10};
  p.upper = {10, 10};
  p.residuals = line_residuals;
  const BoundedLeastSquaresResult r = solve_bounded_least_squares(p);
  // Closed form: b = Sxy / Sxx, a = ybar - b tbar; se(b) = s / sqrt(Sxx), se(a) = s sqrt(1/n +
  // tbar^2 / Sxx), s^2 = SSR / (n - 2).
  const double n = static_cast<double>(kT.size());
  double tbar = 0, ybar = 0;
  for (std::size_t i = 0; i < kT.size(); ++i) {
    tbar += kT[i] / n;
    ybar += kY[i] / n;
  }
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < kT.size(); ++i) {
    sxx += (kT[i] - tbar) * (kT[i] - tbar);
    sxy += (kT[i] - tbar) * (kY[i] - ybar);
  }
  const double b = sxy / sxx, a = ybar - b * tbar;
  double ssr = 0;
  for (std::size_t i = 0; i < kT.size(); ++i) ssr += std::pow(a + b * kT[i] - kY[i], 2);
  const double s = std::sqrt(ssr / (n - 2));
  CHECK(r.converged);
  CHECK(r.x[0] == doctest::Approx(a).epsilon(1e-6));
  CHECK(r.x[1] == doctest::Approx(b).epsilon(1e-6));
  CHECK(r.stddev[1] == doctest::Approx(s / std::sqrt(sxx)).epsilon(1e-4));
  CHECK(r.stddev[0] == doctest::Approx(s * std::sqrt(1 / n + tbar * tbar / sxx)).epsilon(1e-4));
  CHECK(r.sum_of_squares == doctest::Approx(ssr).epsilon(1e-9));
}

TEST_CASE("least squares: a bound holds and is reported; an unused parameter stays put") {
  BoundedLeastSquaresProblem p;
  p.start = {1.0, 0.1, 7.0};
  p.lower = {-10, -10, 0};
  p.upper = {10, 0.25, 10};  // the slope (about 0.5) is capped at 0.25
  p.residuals = [](const std::vector<double>& x) { return line_residuals({x[0], x[1]}); };
  const BoundedLeastSquaresResult r = solve_bounded_least_squares(p);
  CHECK(r.x[1] == 0.25);
  CHECK(r.at_bound[1]);
  CHECK_FALSE(r.at_bound[0]);
  CHECK(r.x[2] == 7.0);
  CHECK_FALSE(r.sensitive[2]);
  CHECK(r.stddev[2] == 0.0);
  CHECK(r.sensitive[0]);
  // With the slope pinned the intercept is the best for it: mean of y - 0.25 t.
  double best = 0;
  for (std::size_t i = 0; i < kT.size(); ++i)
    best += (kY[i] - 0.25 * kT[i]) / static_cast<double>(kT.size());
  CHECK(r.x[0] == doctest::Approx(best).epsilon(1e-6));
}

TEST_CASE("least squares: a nonlinear fit recovers exact parameters, threads change nothing") {
  // r_i = A exp(-k t_i) - y_i with y from A = 2, k = 0.3.
  std::vector<double> t, y;
  for (int i = 0; i < 12; ++i) {
    t.push_back(i * 0.5);
    y.push_back(2.0 * std::exp(-0.3 * i * 0.5));
  }
  BoundedLeastSquaresProblem p;
  p.start = {1.0, 1.0};
  p.lower = {0.1, 0.01};
  p.upper = {10, 5};
  p.residuals = [&](const std::vector<double>& x) {
    std::vector<double> r;
    for (std::size_t i = 0; i < t.size(); ++i) r.push_back(x[0] * std::exp(-x[1] * t[i]) - y[i]);
    return r;
  };
  const BoundedLeastSquaresResult one = solve_bounded_least_squares(p);
  BoundedLeastSquaresOptions o;
  o.threads = 2;
  const BoundedLeastSquaresResult two = solve_bounded_least_squares(p, o);
  CHECK(one.x[0] == doctest::Approx(2.0).epsilon(1e-4));
  CHECK(one.x[1] == doctest::Approx(0.3).epsilon(1e-4));
  CHECK(one.x == two.x);
  CHECK(one.evaluations == two.evaluations);
}

TEST_CASE("least squares: bad problems are refused") {
  BoundedLeastSquaresProblem p;
  p.start = {5.0};
  p.lower = {0};
  p.upper = {1};
  p.residuals = [](const std::vector<double>& x) { return x; };
  CHECK_THROWS_AS(solve_bounded_least_squares(p), std::invalid_argument);
  p.start = {0.5};
  p.upper = {};
  CHECK_THROWS_AS(solve_bounded_least_squares(p), std::invalid_argument);
}
