#include "run/physical_fit.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <thread>
#include <utility>

#include "calibration/bounded_least_squares.hpp"
#include "run/collective_cmd.hpp"
#include "run/runner.hpp"
#include "scenario/physical_parameters.hpp"
#include "scenario/units.hpp"

namespace syncsim::app {

namespace {

// A parameter the data pins down: sensitive and known to within half its value.
constexpr double kIdentifiedRelativeError = 0.5;
// The relative error beyond which a point counts less than quadratically (10%: nccl-tests' run to
// run spread is a few percent; warm-up rows are off by 2-4x).
constexpr double kRobustScale = 0.1;

}  // namespace

std::vector<MeasuredPoint> measured_points(const std::vector<calibration::Measurement>& rows) {
  std::vector<std::pair<std::string, int>> keys;
  std::map<std::pair<std::string, int>, std::map<int64_t, std::pair<double, int>>> sums;
  for (const calibration::Measurement& m : rows) {
    if (!(m.time_us > 0) || (m.wrong && *m.wrong > 0)) continue;
    const auto key = std::make_pair(m.op, m.ranks);
    if (!sums.count(key)) keys.push_back(key);
    auto& s = sums[key][m.bytes];
    s.first += m.time_us;
    s.second += 1;
  }
  std::vector<MeasuredPoint> out;
  for (const auto& key : keys) {
    for (const auto& [bytes, sum] : sums[key]) {
      out.push_back({key.first, key.second, bytes, sum.first / sum.second});
    }
  }
  return out;
}

std::vector<PredictedPoint> predict_points(const Scenario& scenario,
                                           const std::vector<MeasuredPoint>& points) {
  std::vector<PredictedPoint> out;
  out.reserve(points.size());
  for (const MeasuredPoint& p : points) {
    CollectiveSweepOptions o;
    try {
      o.op = models::parse_collective_op(p.op);
    } catch (const std::invalid_argument& e) {
      throw CollectiveUsageError(p.op + ": not a collective syncsim models (" + e.what() + ")");
    }
    if (p.ranks < 2) {
      throw CollectiveUsageError(p.op + " measured at " + std::to_string(p.ranks) +
                                 " rank(s): a collective needs at least 2");
    }
    o.ranks = static_cast<uint32_t>(p.ranks);
    o.min_bytes = p.bytes;
    o.max_bytes = p.bytes;
    o.run.hbm_bytes_per_s = parse_bandwidth(kDefaultCollectiveHbm).bytes_per_second();
    const CollectiveSweep sweep = run_collective_sweep(scenario, o);
    const NcclTestsRow& row = sweep.rows.at(0);
    PredictedPoint q;
    q.measured = p;
    q.predicted_us = row.out_of_place.time_us;
    q.rel_error = (q.predicted_us - p.measured_us) / p.measured_us;
    q.algorithm = row.algorithm;
    q.protocol = row.protocol;
    out.push_back(std::move(q));
  }
  return out;
}

Scenario with_physical_fit(Scenario scenario, const calibration::PhysicalFit& fit) {
  apply_physical_parameters(scenario, fit.parameters);
  return scenario;
}

PhysicalFitResult fit_physical_parameters(const Scenario& scenario,
                                          const std::vector<MeasuredPoint>& points,
                                          const PhysicalFitOptions& options) {
  std::vector<MeasuredPoint> fitted_on;
  for (const MeasuredPoint& p : points) {
    if (options.max_fit_bytes <= 0 || p.bytes <= options.max_fit_bytes) fitted_on.push_back(p);
  }
  if (fitted_on.empty()) {
    throw CollectiveUsageError(
        "no measured points to fit" +
        std::string(points.empty() ? "" : " at or below the fit's size cap"));
  }
  Scenario base = scenario;
  base.fidelity = options.fidelity;
  base.collective_calibration.reset();
  std::vector<std::string> names = options.parameters;
  if (names.empty()) {
    for (const PhysicalParameterInfo& info : physical_parameters()) names.push_back(info.name);
  }
  // Start from the nominal values (a profile the scenario named is not the starting point).
  for (const PhysicalParameterInfo& info : physical_parameters()) {
    set_physical_parameter(base, info.name, physical_parameter_nominal(base, info.name));
  }

  PhysicalFitResult result;
  const unsigned threads =
      options.threads > 0 ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  std::atomic<int> simulations{0};
  auto simulate = [&](const std::vector<std::string>& which, const std::vector<double>& x) {
    Scenario s = base;
    for (std::size_t j = 0; j < which.size(); ++j) set_physical_parameter(s, which[j], x[j]);
    ++simulations;
    return predict_points(s, fitted_on);
  };
  // Cauchy loss on the relative errors: a point off by far more than kRobustScale (a warm-up
  // iteration, a noisy size) pulls the fit as log(1 + (r / c)^2), not r^2, so it cannot drag the
  // parameters away from the other sizes. Near zero it is r^2, so exact data fit exactly.
  auto errors = [](const std::vector<PredictedPoint>& predicted) {
    std::vector<double> r;
    r.reserve(predicted.size());
    for (const PredictedPoint& q : predicted) {
      const double x = q.rel_error / kRobustScale;
      r.push_back(std::copysign(kRobustScale * std::sqrt(std::log1p(x * x)), q.rel_error));
    }
    return r;
  };

  // Screening: a parameter whose 10% change moves no point is left out of the fit (it keeps its
  // nominal value); this saves a simulation per such parameter and iteration.
  std::vector<double> start;
  for (const std::string& name : names) start.push_back(physical_parameter_value(base, name));
  const std::vector<double> r0 = errors(simulate(names, start));
  std::vector<std::vector<double>> probes(names.size(), start);
  for (std::size_t j = 0; j < names.size(); ++j) {
    const PhysicalParameterInfo& info = physical_parameter(names[j]);
    double& v = probes[j][j];
    v = v * 1.1 <= info.upper ? v * 1.1 : v * 0.9;
  }
  const std::vector<std::vector<double>> moved_by = calibration::evaluate_each(
      [&](const std::vector<double>& x) { return errors(simulate(names, x)); }, probes, threads);
  std::vector<std::string> active;
  std::vector<double> active_start;
  for (std::size_t j = 0; j < names.size(); ++j) {
    const std::vector<double>& r = moved_by[j];
    double moved = 0;
    for (std::size_t i = 0; i < r.size(); ++i) moved = std::max(moved, std::abs(r[i] - r0[i]));
    if (moved > 1e-9) {
      active.push_back(names[j]);
      active_start.push_back(start[j]);
    }
  }

  std::vector<double> fitted = active_start;
  std::vector<double> stddev(active.size(), 0.0);
  std::vector<bool> sensitive(active.size(), false);
  if (!active.empty()) {
    calibration::BoundedLeastSquaresProblem problem;
    problem.start = active_start;
    for (const std::string& name : active) {
      problem.lower.push_back(physical_parameter(name).lower);
      problem.upper.push_back(physical_parameter(name).upper);
    }
    problem.residuals = [&](const std::vector<double>& x) { return errors(simulate(active, x)); };
    calibration::BoundedLeastSquaresOptions lso;
    lso.max_iterations = options.max_iterations;
    lso.threads = threads;
    const calibration::BoundedLeastSquaresResult ls =
        calibration::solve_bounded_least_squares(problem, lso);
    fitted = ls.x;
    stddev = ls.stddev;
    sensitive = ls.sensitive;
    result.iterations = ls.iterations;
  }

  calibration::PhysicalFit& fit = result.fit;
  fit.scenario = scenario.source;
  fit.fidelity = fidelity_name(options.fidelity);
  for (const std::string& name : names) {
    const PhysicalParameterInfo& info = physical_parameter(name);
    calibration::PhysicalParameter q;
    q.name = name;
    q.unit = info.unit;
    q.nominal = physical_parameter_nominal(base, name);
    q.value = q.nominal;
    const auto it = std::find(active.begin(), active.end(), name);
    if (it != active.end()) {
      const auto k = static_cast<std::size_t>(it - active.begin());
      q.value = fitted[k];
      q.stddev = stddev[k];
      q.identified = sensitive[k] && q.stddev <= kIdentifiedRelativeError * q.value;
    }
    fit.parameters.push_back(q);
  }
  result.points = predict_points(with_physical_fit(base, fit), points);
  result.simulations = simulations + 1;
  result.fitted_points = static_cast<int>(fitted_on.size());
  // The fit's error over the points it used; the others are in `points` as predictions.
  fit.points = result.fitted_points;
  double sq = 0;
  for (const PredictedPoint& q : result.points) {
    if (options.max_fit_bytes > 0 && q.measured.bytes > options.max_fit_bytes) continue;
    sq += q.rel_error * q.rel_error;
    fit.max_rel_error = std::max(fit.max_rel_error, std::abs(q.rel_error));
  }
  fit.rms_rel_error = std::sqrt(sq / static_cast<double>(fitted_on.size()));
  return result;
}

TransferCheck check_transfer(const Scenario& scenario, const std::vector<MeasuredPoint>& points,
                             int fit_on_ranks, int folds, const PhysicalFitOptions& options) {
  TransferCheck check;
  std::vector<int> ranks;
  for (const MeasuredPoint& p : points) {
    if (std::find(ranks.begin(), ranks.end(), p.ranks) == ranks.end()) ranks.push_back(p.ranks);
  }
  if (ranks.empty()) throw CollectiveUsageError("no measured points to fit");
  check.predictions.resize(points.size());
  check.in_fit.assign(points.size(), false);
  if (fit_on_ranks > 0 || ranks.size() > 1) {
    check.fit_on_ranks =
        fit_on_ranks > 0 ? fit_on_ranks : *std::min_element(ranks.begin(), ranks.end());
    std::vector<MeasuredPoint> small;
    for (const MeasuredPoint& p : points) {
      if (p.ranks == check.fit_on_ranks) small.push_back(p);
    }
    if (small.empty()) {
      throw CollectiveUsageError("no measured points at " + std::to_string(check.fit_on_ranks) +
                                 " ranks to fit on");
    }
    const PhysicalFitResult fit = fit_physical_parameters(scenario, small, options);
    check.fits.push_back(fit.fit);
    check.predictions = predict_points(with_physical_fit(scenario, fit.fit), points);
    for (std::size_t i = 0; i < points.size(); ++i) {
      check.in_fit[i] = points[i].ranks == check.fit_on_ranks &&
                        (options.max_fit_bytes <= 0 || points[i].bytes <= options.max_fit_bytes);
    }
    return check;
  }
  // One rank count: fold f holds the sizes whose index (ascending) is f mod folds.
  std::vector<int64_t> sizes;
  for (const MeasuredPoint& p : points) sizes.push_back(p.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  check.folds = std::clamp(folds, 2, static_cast<int>(std::max<std::size_t>(2, sizes.size())));
  if (sizes.size() < 2) throw CollectiveUsageError("k-fold over sizes needs two sizes or more");
  auto fold_of = [&](int64_t bytes) {
    const auto at = std::lower_bound(sizes.begin(), sizes.end(), bytes) - sizes.begin();
    return static_cast<int>(at % check.folds);
  };
  for (int f = 0; f < check.folds; ++f) {
    std::vector<MeasuredPoint> train, held_out;
    std::vector<std::size_t> held_index;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (fold_of(points[i].bytes) == f) {
        held_out.push_back(points[i]);
        held_index.push_back(i);
      } else {
        train.push_back(points[i]);
      }
    }
    if (held_out.empty()) continue;
    const PhysicalFitResult fit = fit_physical_parameters(scenario, train, options);
    check.fits.push_back(fit.fit);
    const std::vector<PredictedPoint> predicted =
        predict_points(with_physical_fit(scenario, fit.fit), held_out);
    for (std::size_t k = 0; k < predicted.size(); ++k)
      check.predictions[held_index[k]] = predicted[k];
  }
  return check;
}

}  // namespace syncsim::app
