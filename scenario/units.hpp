#pragma once
// Parsing and printing of quantities with units ("1.5us", "64MiB", "400Gbps") for scenarios and CLI
// output. Pure functions, no YAML: the scenario loader turns a UnitError into a ScenarioError that
// points at the offending node.
//
// Parsing is exact: the decimal mantissa is read as an integer and scaled in 128-bit math, so
// "1.5us" is exactly 1'500'000 ps and "3.2Tbps" exactly 3'200'000'000'000 bps. Going through double
// would round some of these, and serialization times derived from them would drift.
#include <stdexcept>
#include <string>
#include <string_view>

#include "sim/core/units.hpp"

namespace syncsim::app {

// A quantity that cannot be parsed. The message names what was expected and what was found, e.g.
// `expected a bandwidth like "400Gbps", got "400"`.
class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Units: ps, ns, us, ms, s. Negative values, values finer than 1 ps and bare numbers are rejected
// (a bare "0" is accepted: zero needs no unit).
Time parse_time(std::string_view text);
// Units: B; KB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (powers of 1024). The result must
// be a whole number of bytes ("1.5B" is rejected, "1.5KiB" is 1536 B).
Bytes parse_bytes(std::string_view text);
// Bit rates: bps, Kbps, Mbps, Gbps, Tbps (or b/s, Kb/s, ...); byte rates: Bps, KBps, MBps, GBps,
// TBps (or B/s, KB/s, ...), multiplied by 8. Prefixes are decimal; "Gbps" and "GBps" differ by 8x.
Bandwidth parse_bandwidth(std::string_view text);

// Human-readable forms that parse back to the same value: "1.5 us", "64 MiB", "3.2 Tbps". Time and
// bandwidth are printed exactly; sizes use the largest unit (binary or decimal) that shows them
// exactly within 3 decimals ("64 MiB", "1.5 KiB", "1234.567 KB", "999 B").
std::string format_time(Time t);
std::string format_bytes(Bytes b);
std::string format_bandwidth(Bandwidth bw);

}  // namespace syncsim::app
