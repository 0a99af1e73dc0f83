#include "calibration/bounded_least_squares.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <Eigen/Dense>

#include "sim/core/parallel_for.hpp"

namespace syncsim::calibration {

namespace {

double sum_of_squares(const std::vector<double>& r) {
  double s = 0;
  for (double v : r) s += v * v;
  return s;
}

// Each parameter's unit of movement: its start value, or 1 where that is 0.
std::vector<double> scales_of(const std::vector<double>& start) {
  std::vector<double> s(start.size());
  for (std::size_t j = 0; j < start.size(); ++j) s[j] = start[j] != 0 ? std::abs(start[j]) : 1.0;
  return s;
}

}  // namespace

std::vector<std::vector<double>> evaluate_each(
    const std::function<std::vector<double>(const std::vector<double>&)>& f,
    std::span<const std::vector<double>> xs, unsigned threads) {
  std::vector<std::vector<double>> out(xs.size());
  parallel_for(xs.size(), threads, [&](std::size_t i) { out[i] = f(xs[i]); });
  return out;
}

BoundedLeastSquaresResult solve_bounded_least_squares(const BoundedLeastSquaresProblem& p,
                                                      const BoundedLeastSquaresOptions& o) {
  const std::size_t n = p.start.size();
  if (p.lower.size() != n || p.upper.size() != n || !p.residuals) {
    throw std::invalid_argument("least squares: start, lower and upper differ in size");
  }
  for (std::size_t j = 0; j < n; ++j) {
    if (!(p.lower[j] <= p.start[j] && p.start[j] <= p.upper[j])) {
      throw std::invalid_argument("least squares: parameter " + std::to_string(j) +
                                  " starts outside its bounds");
    }
  }
  const std::vector<double> scale = scales_of(p.start);
  BoundedLeastSquaresResult out;
  out.x = p.start;
  out.residuals = p.residuals(out.x);
  ++out.evaluations;
  const std::size_t m = out.residuals.size();
  out.sum_of_squares = sum_of_squares(out.residuals);

  // J in scaled units (d r / d(x / scale)): columns of comparable size whatever the units.
  Eigen::MatrixXd jac(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(n));
  auto jacobian = [&] {
    std::vector<std::vector<double>> xs(n, out.x);
    std::vector<double> steps(n);
    for (std::size_t j = 0; j < n; ++j) {
      double h = o.relative_step * scale[j];
      if (out.x[j] + h > p.upper[j]) h = -h;  // step inward at the upper bound
      xs[j][j] += h;
      steps[j] = h;
    }
    const std::vector<std::vector<double>> rs = evaluate_each(p.residuals, xs, o.threads);
    out.evaluations += static_cast<int>(n);
    for (std::size_t j = 0; j < n; ++j) {
      if (rs[j].size() != m) throw std::invalid_argument("least squares: residual count changed");
      for (std::size_t i = 0; i < m; ++i) {
        jac(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(j)) =
            (rs[j][i] - out.residuals[i]) / steps[j] * scale[j];
      }
    }
  };

  double lambda = 1e-2;
  out.sensitive.assign(n, false);
  for (out.iterations = 0; out.iterations < o.max_iterations; ++out.iterations) {
    jacobian();
    Eigen::VectorXd r(static_cast<Eigen::Index>(m));
    for (std::size_t i = 0; i < m; ++i) r(static_cast<Eigen::Index>(i)) = out.residuals[i];
    const Eigen::MatrixXd jtj = jac.transpose() * jac;
    const Eigen::VectorXd g = jac.transpose() * r;
    for (std::size_t j = 0; j < n; ++j) {
      out.sensitive[j] = jac.col(static_cast<Eigen::Index>(j)).norm() > o.sensitivity_floor;
    }
    bool improved = false;
    for (int attempt = 0; attempt < 10 && !improved; ++attempt) {
      // A parameter at a bound whose step points out of the box is held there and the step is
      // solved again for the others (an active set): clamping the joint step instead would move
      // a correlated parameter by an amount meant for the unbounded problem, and the fit could
      // stall short of the bounded optimum.
      std::vector<bool> held(n, false);
      Eigen::VectorXd step;
      for (std::size_t pass = 0; pass <= n; ++pass) {
        Eigen::MatrixXd a = jtj;
        Eigen::VectorXd rhs = -g;
        for (std::size_t j = 0; j < n; ++j) {
          const auto k = static_cast<Eigen::Index>(j);
          // Marquardt's scaling by the diagonal; an insensitive or held parameter gets an
          // identity row and column so it stays where it is.
          if (out.sensitive[j] && !held[j]) {
            a(k, k) = jtj(k, k) * (1.0 + lambda);
            continue;
          }
          a.row(k).setZero();
          a.col(k).setZero();
          a(k, k) = 1.0;
          rhs(k) = 0;
        }
        step = a.ldlt().solve(rhs);
        bool more = false;
        for (std::size_t j = 0; j < n; ++j) {
          const double d = step(static_cast<Eigen::Index>(j));
          if (!held[j] &&
              ((out.x[j] >= p.upper[j] && d > 0) || (out.x[j] <= p.lower[j] && d < 0))) {
            held[j] = true;
            more = true;
          }
        }
        if (!more) break;
      }
      std::vector<double> x = out.x;
      for (std::size_t j = 0; j < n; ++j) {
        x[j] = std::clamp(x[j] + step(static_cast<Eigen::Index>(j)) * scale[j], p.lower[j],
                          p.upper[j]);
      }
      std::vector<double> rx = p.residuals(x);
      ++out.evaluations;
      const double s = sum_of_squares(rx);
      if (s < out.sum_of_squares) {
        const double gain = (out.sum_of_squares - s) / std::max(out.sum_of_squares, 1e-300);
        out.x = std::move(x);
        out.residuals = std::move(rx);
        out.sum_of_squares = s;
        lambda = std::max(lambda / 3.0, 1e-9);
        improved = true;
        if (gain < o.tolerance) out.converged = true;
      } else {
        lambda *= 4.0;
      }
    }
    if (!improved || out.converged) {
      out.converged = true;
      break;
    }
  }

  // Uncertainty at the solution from the last Jacobian (taken before the final step; the
  // linearised estimate does not need the exact point).
  jacobian();
  std::vector<Eigen::Index> free;
  for (std::size_t j = 0; j < n; ++j) {
    out.sensitive[j] = jac.col(static_cast<Eigen::Index>(j)).norm() > o.sensitivity_floor;
    if (out.sensitive[j]) free.push_back(static_cast<Eigen::Index>(j));
  }
  out.stddev.assign(n, 0.0);
  out.at_bound.assign(n, false);
  for (std::size_t j = 0; j < n; ++j) {
    out.at_bound[j] = out.x[j] <= p.lower[j] || out.x[j] >= p.upper[j];
  }
  if (!free.empty()) {
    Eigen::MatrixXd jf(static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(free.size()));
    for (std::size_t k = 0; k < free.size(); ++k)
      jf.col(static_cast<Eigen::Index>(k)) = jac.col(free[k]);
    // (J^T J)^-1 = V S^-2 V^T; singular values floored at 1e-6 of the largest, so a direction
    // the data cannot resolve (two parameters that act alike) shows as a huge error on both
    // instead of vanishing from a pseudo-inverse.
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(jf, Eigen::ComputeThinV);
    const Eigen::VectorXd sv = svd.singularValues();
    const double floor = std::max(sv.size() > 0 ? sv(0) : 0.0, 1e-300) * 1e-6;
    Eigen::VectorXd inv_sq(sv.size());
    for (Eigen::Index k = 0; k < sv.size(); ++k) {
      const double v = std::max(sv(k), floor);
      inv_sq(k) = 1.0 / (v * v);
    }
    const Eigen::MatrixXd cov = svd.matrixV() * inv_sq.asDiagonal() * svd.matrixV().transpose();
    const double dof = m > free.size() ? static_cast<double>(m - free.size()) : 1.0;
    const double s2 = out.sum_of_squares / dof;
    for (std::size_t k = 0; k < free.size(); ++k) {
      const auto j = static_cast<std::size_t>(free[k]);
      const double var = cov(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(k)) * s2;
      out.stddev[j] = std::sqrt(std::max(0.0, var)) * scale[j];
    }
  }
  return out;
}

}  // namespace syncsim::calibration
