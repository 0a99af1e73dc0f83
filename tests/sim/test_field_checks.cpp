// Range rules of parameter structs (check() next to the fields), without any scenario file.
#include <doctest/doctest.h>

#include "sim/net/network_spec.hpp"

using syncsim::Bytes;
using syncsim::net::EcnParams;

TEST_CASE("EcnParams::check: defaults pass, kmin/kmax order and the pmax range are rules") {
  CHECK(EcnParams{}.check().empty());
  EcnParams e;
  e.kmin_auto = false;
  e.kmax_auto = false;
  e.kmin = Bytes{400'000};
  e.kmax = Bytes{100'000};
  e.pmax = 0;
  const auto errors = e.check();
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].field == "kmax");
  CHECK(errors[0].text() == "expected kmax at or above kmin (400000 B), got 100000 B");
  CHECK(errors[1].field == "pmax");
  CHECK(errors[1].text() == "expected 0 < pmax <= 1, got 0");
  e.pmax = 1.5;
  CHECK(e.check().back().text() == "expected 0 < pmax <= 1, got 1.5");
  // Auto thresholds are sized per port later, so their zero placeholders are not checked.
  CHECK(EcnParams{.enabled = true, .pmax = 1.0}.check().empty());
}
