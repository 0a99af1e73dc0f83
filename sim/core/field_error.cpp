#include "sim/core/field_error.hpp"

#include <charconv>
#include <system_error>

namespace syncsim {

std::string number_text(double v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::to_string(v);
}

std::string time_text(Time t) { return std::to_string(t.picoseconds()) + " ps"; }

std::string bytes_text(Bytes b) { return std::to_string(b.count()) + " B"; }

std::string rate_text(Bandwidth b) { return std::to_string(b.bits_per_second()) + " bit/s"; }

}  // namespace syncsim
