#include "sim/net/ecn.hpp"

#include "sim/net/network_spec.hpp"

namespace syncsim::net {

std::pair<int64_t, int64_t> ecn_thresholds(const EcnParams& ecn) {
  const int64_t kmin = ecn.kmin_auto ? kEcnDefaultKmin.count() : ecn.kmin.count();
  const int64_t kmax = ecn.kmax_auto ? kEcnDefaultKmax.count() : ecn.kmax.count();
  return {kmin, kmax > kmin ? kmax : kmin + 1};
}

}  // namespace syncsim::net
