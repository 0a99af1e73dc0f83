#include "sim/net/ecn.hpp"

#include <cmath>

#include "sim/net/network_spec.hpp"

namespace syncsim::net {

std::pair<int64_t, int64_t> ecn_thresholds(const EcnParams& ecn, Bandwidth bandwidth) {
  // HPCC's ns-3 defaults: Kmin 100 KB and Kmax 400 KB per 25 Gb/s of port speed.
  const double scale = static_cast<double>(bandwidth.bits_per_second()) / 25e9;
  const int64_t kmin =
      ecn.kmin_auto ? static_cast<int64_t>(std::llround(100'000.0 * scale)) : ecn.kmin.count();
  const int64_t kmax =
      ecn.kmax_auto ? static_cast<int64_t>(std::llround(400'000.0 * scale)) : ecn.kmax.count();
  return {kmin, kmax > kmin ? kmax : kmin + 1};
}

}  // namespace syncsim::net
