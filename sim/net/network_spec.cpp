// Range rules of the fabric parameter structs (network_spec.hpp), next to their fields so every
// producer of a NetworkSpec (scenario files, tests, tools) is held to the same rules.
#include "sim/net/network_spec.hpp"

#include <charconv>
#include <string>

namespace syncsim::net {

namespace {

// Shortest text that reads back as `v` ("0", "0.2", "1.5").
std::string number_text(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

}  // namespace

FieldErrors EcnParams::check() const {
  FieldErrors errors;
  if (!kmin_auto && !kmax_auto && kmin.count() > kmax.count()) {
    errors.push_back({"kmax", "expected kmax at or above kmin (" + std::to_string(kmin.count()) +
                                  " B), got " + std::to_string(kmax.count()) + " B"});
  }
  if (!(pmax > 0.0 && pmax <= 1.0)) {
    errors.push_back({"pmax", "expected 0 < pmax <= 1", number_text(pmax)});
  }
  return errors;
}

}  // namespace syncsim::net
