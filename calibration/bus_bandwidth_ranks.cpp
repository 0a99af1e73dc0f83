#include "calibration/bus_bandwidth_ranks.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace syncsim::calibration {

namespace {

// nccl-tests prints algbw and busbw with two decimals: each is known to +-0.005.
constexpr double kHalfUlp = 0.005;
// Rank counts beyond this are not told apart by two-decimal bandwidths anyway.
constexpr int kMaxRanks = 1 << 20;

enum class Shape { Unknown, Constant, TwiceNMinusOneOverN, NMinusOneOverN };

Shape shape_of(const std::string& op) {
  if (op == "all_reduce") return Shape::TwiceNMinusOneOverN;
  if (op == "all_gather" || op == "reduce_scatter" || op == "all_to_all" || op == "gather" ||
      op == "scatter" || op == "hypercube")
    return Shape::NMinusOneOverN;
  if (op == "broadcast" || op == "reduce" || op == "send_recv") return Shape::Constant;
  return Shape::Unknown;
}

// The real n whose factor is `ratio` (the factor's inverse); +inf at or past the asymptote.
double n_of_ratio(Shape s, double ratio) {
  const double top = s == Shape::TwiceNMinusOneOverN ? 2.0 : 1.0;  // the factor's limit
  if (ratio >= top) return std::numeric_limits<double>::infinity();
  return top / (top - ratio);
}

}  // namespace

std::optional<double> nccl_tests_bus_factor(const std::string& op, int ranks) {
  if (ranks <= 0) return std::nullopt;
  const double n = ranks;
  switch (shape_of(op)) {
    case Shape::TwiceNMinusOneOverN:
      return 2.0 * (n - 1) / n;
    case Shape::NMinusOneOverN:
      return (n - 1) / n;
    case Shape::Constant:
      return 1.0;
    case Shape::Unknown:
      break;
  }
  return std::nullopt;
}

RanksFromBusBandwidth ranks_from_bus_bandwidth(const std::string& op,
                                               const std::vector<Measurement>& rows) {
  RanksFromBusBandwidth out;
  const Shape shape = shape_of(op);
  if (shape == Shape::Unknown) {
    out.why_not = "nccl-tests defines no busbw/algbw factor for " + op;
    return out;
  }
  if (shape == Shape::Constant) {
    out.why_not = "busbw = algbw for " + op + " whatever the rank count";
    return out;
  }
  double lo = 0;
  double hi = std::numeric_limits<double>::infinity();
  bool any = false;
  for (const auto& m : rows) {
    if (!(m.algbw_GBps > kHalfUlp)) continue;  // 0.00: no digits to divide
    any = true;
    lo = std::max(lo, std::max(0.0, m.busbw_GBps - kHalfUlp) / (m.algbw_GBps + kHalfUlp));
    hi = std::min(hi, (m.busbw_GBps + kHalfUlp) / (m.algbw_GBps - kHalfUlp));
  }
  if (!any) {
    out.why_not = "no row has algbw above 0.00";
    return out;
  }
  if (lo > hi) {
    out.why_not = "the rows' busbw/algbw agree with no single rank count";
    return out;
  }
  const double top = shape == Shape::TwiceNMinusOneOverN ? 2.0 : 1.0;
  if (lo >= top) {
    out.why_not = "busbw/algbw of the rows is at or above " + op + "'s limit of " +
                  (top == 2.0 ? std::string("2") : std::string("1"));
    return out;
  }
  const double n_lo = std::ceil(n_of_ratio(shape, lo) - 1e-9);
  const double n_hi = std::min<double>(kMaxRanks, std::floor(n_of_ratio(shape, hi) + 1e-9));
  if (n_lo > n_hi) {
    out.why_not = "busbw/algbw of the rows lies between two whole rank counts";
    return out;
  }
  if (n_lo != n_hi) {
    const std::string upper =
        n_hi >= kMaxRanks ? std::string("more") : std::to_string(static_cast<long long>(n_hi));
    out.why_not = "busbw/algbw of the rows fits " +
                  std::to_string(static_cast<long long>(std::max(1.0, n_lo))) + " to " + upper +
                  " ranks";
    return out;
  }
  out.ranks = static_cast<int>(n_lo);
  return out;
}

}  // namespace syncsim::calibration
