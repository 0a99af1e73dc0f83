#pragma once
// A timed fault on one cable (sim/net/fault.hpp), for the fault tests.
#include <cstdint>

#include "sim/net/fault.hpp"

namespace syncsim::testing {

inline net::NetFault link_fault(Time at, net::NetFaultKind kind, uint32_t link,
                                double fraction = 1.0) {
  net::NetFault f;
  f.at = at;
  f.kind = kind;
  f.links = {link};
  f.fraction = fraction;
  return f;
}

}  // namespace syncsim::testing
