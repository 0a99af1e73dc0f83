#include "scenario/units.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>

namespace syncsim::app {
namespace {

using U128 = uint128;

// Mantissas beyond 25 significant digits would overflow 128 bits once scaled by the largest unit
// (8e12), and no configuration value needs them.
constexpr int kMaxSignificantDigits = 25;
// Enough decimal places for any value that can still come out whole (ps, bytes, bps).
constexpr int kMaxFractionDigits = 30;

struct Unit {
  std::string_view name;
  uint64_t factor;  // base units (ps, bytes, bps) per one of this unit
};

// What is being parsed, for the error messages.
struct Quantity {
  std::string_view kind;       // "time"
  std::string_view example;    // "1.5us"
  std::string_view base_name;  // "picoseconds", for the not-whole error
  const Unit* units;
  std::size_t unit_count;
};

constexpr std::array<Unit, 5> kTimeUnits{{
    {"ps", 1},
    {"ns", 1'000},
    {"us", 1'000'000},
    {"ms", 1'000'000'000},
    {"s", 1'000'000'000'000},
}};

constexpr uint64_t kKi = 1024;
constexpr std::array<Unit, 10> kByteUnits{{
    {"B", 1},
    {"KB", 1'000},
    {"MB", 1'000'000},
    {"GB", 1'000'000'000},
    {"TB", 1'000'000'000'000},
    {"KiB", kKi},
    {"MiB", kKi* kKi},
    {"GiB", kKi* kKi* kKi},
    {"TiB", kKi* kKi* kKi* kKi},
    {"kB", 1'000},  // SI spelling of the kilo prefix
}};

constexpr std::array<Unit, 23> kBandwidthUnits{{
    {"bps", 1},
    {"Kbps", 1'000},
    {"Mbps", 1'000'000},
    {"Gbps", 1'000'000'000},
    {"Tbps", 1'000'000'000'000},
    {"b/s", 1},
    {"Kb/s", 1'000},
    {"Mb/s", 1'000'000},
    {"Gb/s", 1'000'000'000},
    {"Tb/s", 1'000'000'000'000},
    {"kbps", 1'000},
    {"kb/s", 1'000},
    // Byte rates: 8 bits per byte.
    {"Bps", 8},
    {"KBps", 8'000},
    {"MBps", 8'000'000},
    {"GBps", 8'000'000'000},
    {"TBps", 8'000'000'000'000},
    {"B/s", 8},
    {"KB/s", 8'000},
    {"MB/s", 8'000'000},
    {"GB/s", 8'000'000'000},
    {"TB/s", 8'000'000'000'000},
    {"kB/s", 8'000},
}};

constexpr Quantity kTime{"time", "1.5us", "picoseconds", kTimeUnits.data(), kTimeUnits.size()};
constexpr Quantity kBytes{"size", "64MiB", "bytes", kByteUnits.data(), kByteUnits.size()};
constexpr Quantity kBandwidth{"bandwidth", "400Gbps", "bits per second", kBandwidthUnits.data(),
                              kBandwidthUnits.size()};

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string expected_like(const Quantity& q, std::string_view text) {
  return "expected a " + std::string(q.kind) + " like " + quoted(q.example) + ", got " +
         quoted(text);
}

std::string unit_list(const Quantity& q) {
  std::string out;
  for (std::size_t i = 0; i < q.unit_count; ++i) {
    if (i > 0) {
      out += ", ";
    }
    out += q.units[i].name;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  return s;
}

// Parses `<digits>[.<digits>][ ]<unit>` into an exact count of base units.
int64_t parse_quantity(const Quantity& q, std::string_view raw) {
  const std::string_view text = trim(raw);
  std::size_t pos = 0;
  if (!text.empty() && text.front() == '-') {
    throw UnitError("expected a non-negative " + std::string(q.kind) + " like " +
                    quoted(q.example) + ", got " + quoted(text));
  }
  // Integer and fraction digits, kept as one integer mantissa and a count of fraction digits.
  U128 mantissa = 0;
  int significant = 0;
  int fraction_digits = 0;
  std::size_t int_digits = 0;
  while (pos < text.size() && is_digit(text[pos])) {
    if (significant >= kMaxSignificantDigits) {
      throw UnitError(quoted(text) + " is too large for a " + std::string(q.kind));
    }
    mantissa = mantissa * 10 + static_cast<unsigned>(text[pos] - '0');
    if (mantissa != 0) {
      ++significant;
    }
    ++int_digits;
    ++pos;
  }
  if (int_digits == 0) {
    throw UnitError(expected_like(q, text));
  }
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    // Trailing zeros of the fraction carry no value; dropping them keeps "1.50000us" in range.
    std::size_t end = pos;
    while (end < text.size() && is_digit(text[end])) {
      ++end;
    }
    if (end == pos) {
      throw UnitError(expected_like(q, text));
    }
    std::size_t last = end;
    while (last > pos && text[last - 1] == '0') {
      --last;
    }
    for (std::size_t i = pos; i < last; ++i) {
      if (significant >= kMaxSignificantDigits || fraction_digits >= kMaxFractionDigits) {
        throw UnitError(quoted(text) + " has too many digits");
      }
      mantissa = mantissa * 10 + static_cast<unsigned>(text[i] - '0');
      if (mantissa != 0) {
        ++significant;
      }
      ++fraction_digits;
    }
    pos = end;
  }
  const std::string_view unit_text = trim(text.substr(pos));
  if (unit_text.empty()) {
    // A bare zero is unambiguous in every unit; any other bare number is a missing unit.
    if (mantissa == 0) {
      return 0;
    }
    throw UnitError(expected_like(q, text));
  }
  std::optional<uint64_t> factor;
  for (std::size_t i = 0; i < q.unit_count; ++i) {
    if (q.units[i].name == unit_text) {
      factor = q.units[i].factor;
    }
  }
  if (!factor) {
    throw UnitError(expected_like(q, text) + " (unknown unit " + quoted(unit_text) +
                    "; use one of: " + unit_list(q) + ")");
  }
  U128 divisor = 1;
  for (int i = 0; i < fraction_digits; ++i) {
    divisor *= 10;
  }
  const U128 scaled = mantissa * *factor;
  if (scaled % divisor != 0) {
    throw UnitError(quoted(text) + " is not a whole number of " + std::string(q.base_name));
  }
  const U128 value = scaled / divisor;
  if (value > static_cast<U128>(std::numeric_limits<int64_t>::max())) {
    throw UnitError(quoted(text) + " is too large for a " + std::string(q.kind));
  }
  return static_cast<int64_t>(value);
}

// `value / unit` as an exact decimal with at most `max_decimals` places, or nullopt if it needs
// more.
std::optional<std::string> exact_decimal(uint64_t value, uint64_t unit, int max_decimals) {
  std::string out = std::to_string(value / unit);
  uint64_t rem = value % unit;
  if (rem == 0) {
    return out;
  }
  out += '.';
  for (int i = 0; i < max_decimals && rem != 0; ++i) {
    // rem < unit <= 2^40 (TiB), so rem * 10 cannot overflow.
    rem *= 10;
    out += static_cast<char>('0' + rem / unit);
    rem %= unit;
  }
  if (rem != 0) {
    return std::nullopt;
  }
  return out;
}

// Prints with the largest unit not larger than the value (units sorted largest first).
template <std::size_t N>
std::string format_decimal_units(int64_t signed_value, const std::array<Unit, N>& units) {
  const bool negative = signed_value < 0;
  // Negate in unsigned arithmetic so INT64_MIN does not overflow.
  const uint64_t value =
      negative ? 0 - static_cast<uint64_t>(signed_value) : static_cast<uint64_t>(signed_value);
  const Unit* chosen = &units.back();
  for (const Unit& u : units) {
    if (value >= u.factor) {
      chosen = &u;
      break;
    }
  }
  // Decimal units up to 1e12 always divide exactly within 12 places.
  const std::string number = exact_decimal(value, chosen->factor, 12).value_or("?");
  return (negative ? "-" : "") + number + " " + std::string(chosen->name);
}

}  // namespace

Time parse_time(std::string_view text) { return Time::ps(parse_quantity(kTime, text)); }

Bytes parse_bytes(std::string_view text) { return Bytes{parse_quantity(kBytes, text)}; }

Bandwidth parse_bandwidth(std::string_view text) {
  return Bandwidth::bps(parse_quantity(kBandwidth, text));
}

std::string format_time(Time t) {
  constexpr std::array<Unit, 5> kLargestFirst{{{"s", 1'000'000'000'000},
                                               {"ms", 1'000'000'000},
                                               {"us", 1'000'000},
                                               {"ns", 1'000},
                                               {"ps", 1}}};
  if (t == Time::zero()) {
    return "0 s";
  }
  return format_decimal_units(t.picoseconds(), kLargestFirst);
}

std::string format_bandwidth(Bandwidth bw) {
  constexpr std::array<Unit, 5> kLargestFirst{{{"Tbps", 1'000'000'000'000},
                                               {"Gbps", 1'000'000'000},
                                               {"Mbps", 1'000'000},
                                               {"Kbps", 1'000},
                                               {"bps", 1}}};
  return format_decimal_units(bw.bits_per_second(), kLargestFirst);
}

std::string format_bytes(Bytes b) {
  // Binary and decimal units interleaved by size, so 64 MiB prints as "64 MiB" and 1e6 B as "1 MB".
  constexpr std::array<Unit, 8> kLargestFirst{{{"TiB", kKi * kKi * kKi * kKi},
                                               {"TB", 1'000'000'000'000},
                                               {"GiB", kKi * kKi * kKi},
                                               {"GB", 1'000'000'000},
                                               {"MiB", kKi * kKi},
                                               {"MB", 1'000'000},
                                               {"KiB", kKi},
                                               {"KB", 1'000}}};
  const int64_t count = b.count();
  if (count > 0) {
    const auto value = static_cast<uint64_t>(count);
    for (const Unit& u : kLargestFirst) {
      if (value < u.factor) {
        continue;
      }
      // Three places keep "1.5 KiB" readable; sizes that need more print in a smaller unit.
      if (auto s = exact_decimal(value, u.factor, 3)) {
        return *s + " " + std::string(u.name);
      }
    }
  }
  return std::to_string(count) + " B";
}

}  // namespace syncsim::app
