// RED-style ECN marking and its default thresholds.
#include <doctest/doctest.h>

#include "sim/core/rng.hpp"
#include "sim/net/ecn.hpp"
#include "sim/net/network_spec.hpp"

using namespace syncsim;
using namespace syncsim::net;

TEST_CASE("ecn: RED probability is exact outside [Kmin, Kmax] and linear inside") {
  const EcnMarker m(20'000, 60'000, 0.2);
  CHECK(m.probability(0) == 0.0);
  CHECK(m.probability(20'000) == 0.0);
  CHECK(m.probability(40'000) == doctest::Approx(0.1));
  CHECK(m.probability(60'000) == doctest::Approx(0.2));
  CHECK(m.probability(60'001) == 1.0);
  RngStream rng(7, 1);
  for (int i = 0; i < 1000; ++i) {
    CHECK_FALSE(m.mark(19'999, rng));
    CHECK(m.mark(70'000, rng));
  }
  // Statistically at the midpoint (p = 0.1): 200 000 draws, 5 sigma is about 0.0034.
  int marks = 0;
  const int n = 200'000;
  for (int i = 0; i < n; ++i) marks += m.mark(40'000, rng) ? 1 : 0;
  CHECK(static_cast<double>(marks) / n == doctest::Approx(0.1).epsilon(0.035));
  const EcnMarker scaled = EcnMarker(0, 1'000, 1.0);
  CHECK(scaled.probability(250) == doctest::Approx(0.25));
}

// NVIDIA's lossless RoCE profile (Cumulus Linux `nv show qos roce`, Onyx `show roce`): absolute
// thresholds 150,000 B / 1,500,000 B and probability 100, the same on every port.
TEST_CASE("ecn: unset thresholds are the switches' RoCE profile: 150 KB / 1.5 MB, Pmax 1") {
  const EcnParams e;
  const auto [kmin, kmax] = ecn_thresholds(e);
  CHECK(kmin == 150'000);
  CHECK(kmax == 1'500'000);
  CHECK(e.pmax == 1.0);
  // Below XOFF of a stock 400G PFC queue (~3.7 MB in the 16:1 incast of tests/run/test_dcqcn.cpp).
  const EcnMarker m(kmin, kmax, e.pmax);
  CHECK(m.probability(825'000) == doctest::Approx(0.5));
  CHECK(m.probability(1'500'001) == 1.0);
  // Explicit thresholds are kept as given.
  EcnParams given;
  given.kmin_auto = given.kmax_auto = false;
  given.kmin = Bytes{20'000};
  given.kmax = Bytes{60'000};
  CHECK(ecn_thresholds(given) == std::pair<int64_t, int64_t>{20'000, 60'000});
}

TEST_CASE("ecn: step marking (Kmin = Kmax) marks nothing at or below K and everything above") {
  EcnParams e;
  e.kmin_auto = false;
  e.kmax_auto = false;
  e.kmin = Bytes{150'000};
  e.kmax = Bytes{150'000};
  CHECK(e.check().empty());
  const auto [kmin, kmax] = ecn_thresholds(e);
  const EcnMarker m(kmin, kmax, e.pmax);
  RngStream rng(7, 1);
  CHECK(m.probability(150'000) == 0.0);
  CHECK(m.probability(150'002) == 1.0);
  for (int i = 0; i < 100; ++i) {
    CHECK_FALSE(m.mark(150'000, rng));
    CHECK(m.mark(150'002, rng));
  }
}
