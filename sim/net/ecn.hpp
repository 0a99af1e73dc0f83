#pragma once
// RED-style ECN marking (the DCQCN congestion point): on a queue of q bytes, mark with probability
// 0 below Kmin, Pmax * (q - Kmin) / (Kmax - Kmin) between Kmin and Kmax, and 1 above Kmax.
// Pure: the caller owns the random stream, so each egress port draws from its own seeded stream.
#include <cstdint>
#include <utility>

#include "sim/core/check.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/units.hpp"

namespace syncsim::net {

struct EcnParams;

class EcnMarker {
 public:
  EcnMarker() = default;
  EcnMarker(int64_t kmin, int64_t kmax, double pmax) : kmin_(kmin), kmax_(kmax), pmax_(pmax) {
    SIM_CHECK(kmin >= 0 && kmin < kmax, "ECN needs 0 <= Kmin < Kmax");
    SIM_CHECK(pmax > 0.0 && pmax <= 1.0, "ECN needs 0 < Pmax <= 1");
  }
  double probability(int64_t queue_bytes) const {
    if (queue_bytes <= kmin_) return 0.0;
    if (queue_bytes > kmax_) return 1.0;
    return pmax_ * static_cast<double>(queue_bytes - kmin_) / static_cast<double>(kmax_ - kmin_);
  }
  // Draws only between Kmin and Kmax, so the exact 0 and 1 regions cost no random numbers.
  bool mark(int64_t queue_bytes, RngStream& rng) const {
    if (queue_bytes <= kmin_) return false;
    if (queue_bytes > kmax_) return true;
    return rng.uniform() < probability(queue_bytes);
  }
  int64_t kmin() const { return kmin_; }
  int64_t kmax() const { return kmax_; }
  double pmax() const { return pmax_; }

 private:
  int64_t kmin_ = 0;
  int64_t kmax_ = 1;
  double pmax_ = 1.0;
};

// ECN (Kmin, Kmax) in bytes: explicit values, or the RoCE class's shipped defaults
// (kEcnDefaultKmin / kEcnDefaultKmax, the same at every port speed); Kmax is kept above Kmin.
std::pair<int64_t, int64_t> ecn_thresholds(const EcnParams& ecn);

}  // namespace syncsim::net
