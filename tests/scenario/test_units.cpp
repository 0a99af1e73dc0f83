#include <doctest/doctest.h>

#include <string>

#include "scenario/units.hpp"

using syncsim::Bandwidth;
using syncsim::Bytes;
using syncsim::Time;
using syncsim::app::format_bandwidth;
using syncsim::app::format_bytes;
using syncsim::app::format_time;
using syncsim::app::parse_bandwidth;
using syncsim::app::parse_bytes;
using syncsim::app::parse_time;
using syncsim::app::UnitError;

namespace {

// The message of the UnitError thrown by `f`, or "<no error>".
template <typename F>
std::string unit_error(F f) {
  try {
    f();
  } catch (const UnitError& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("units: time parses exactly in every unit") {
  CHECK(parse_time("1.5us") == Time::ps(1'500'000));
  CHECK(parse_time("250ns") == Time::ps(250'000));
  CHECK(parse_time("7ps") == Time::ps(7));
  CHECK(parse_time("2ms") == Time::ms(2));
  CHECK(parse_time("1s") == Time::s(1));
  CHECK(parse_time("0.000001s") == Time::us(1));
  CHECK(parse_time("1.500000us") == Time::ps(1'500'000));  // trailing zeros carry no precision
  CHECK(parse_time("1.5 us") == Time::ps(1'500'000));      // the form format_time prints
  CHECK(parse_time("0us") == Time::zero());
  CHECK(parse_time("0") == Time::zero());  // zero needs no unit
}

TEST_CASE("units: sizes use decimal and binary prefixes and must be whole bytes") {
  CHECK(parse_bytes("4096B") == Bytes{4096});
  CHECK(parse_bytes("64MiB") == Bytes{64 * 1024 * 1024});
  CHECK(parse_bytes("1.5KiB") == Bytes{1536});
  CHECK(parse_bytes("1KB") == Bytes{1000});
  CHECK(parse_bytes("2.5GB") == Bytes{2'500'000'000});
  CHECK(parse_bytes("1TiB") == Bytes{int64_t{1} << 40});
  CHECK(parse_bytes("3TB") == Bytes{3'000'000'000'000});
  CHECK(unit_error([] { parse_bytes("1.5B"); }) == "\"1.5B\" is not a whole number of bytes");
  CHECK(unit_error([] { parse_bytes("0.1KiB"); }) == "\"0.1KiB\" is not a whole number of bytes");
}

TEST_CASE("units: bandwidth parses bit and byte rates exactly") {
  CHECK(parse_bandwidth("400Gbps") == Bandwidth::gbps(400));
  CHECK(parse_bandwidth("3.2Tbps").bits_per_second() == 3'200'000'000'000);
  CHECK(parse_bandwidth("2.5Gbps").bits_per_second() == 2'500'000'000);
  CHECK(parse_bandwidth("100Gb/s") == Bandwidth::gbps(100));
  CHECK(parse_bandwidth("10Mbps").bits_per_second() == 10'000'000);
  CHECK(parse_bandwidth("1Kbps").bits_per_second() == 1'000);
  CHECK(parse_bandwidth("1bps").bits_per_second() == 1);
  // Byte rates are 8x: NVLink4's 900 GB/s is 7.2 Tb/s.
  CHECK(parse_bandwidth("900GB/s").bits_per_second() == 7'200'000'000'000);
  CHECK(parse_bandwidth("1GBps") == Bandwidth::gbps(8));
  CHECK(parse_bandwidth("3.2Tbps").tx_time(Bytes{4096}) == Time::ps(10'240));
}

TEST_CASE("units: a bare number is the wrong-units error") {
  CHECK(unit_error([] { parse_bandwidth("400"); }) ==
        "expected a bandwidth like \"400Gbps\", got \"400\"");
  CHECK(unit_error([] { parse_time("1.5"); }) == "expected a time like \"1.5us\", got \"1.5\"");
  CHECK(unit_error([] { parse_bytes("4096"); }) == "expected a size like \"64MiB\", got \"4096\"");
}

TEST_CASE("units: malformed, negative, unknown and overflowing values are rejected") {
  CHECK(unit_error([] { parse_time("-1us"); }) ==
        "expected a non-negative time like \"1.5us\", got \"-1us\"");
  CHECK(unit_error([] { parse_bandwidth("-400Gbps"); }) ==
        "expected a non-negative bandwidth like \"400Gbps\", got \"-400Gbps\"");
  CHECK(unit_error([] { parse_time(""); }) == "expected a time like \"1.5us\", got \"\"");
  CHECK(unit_error([] { parse_time("us"); }) == "expected a time like \"1.5us\", got \"us\"");
  CHECK(unit_error([] { parse_time("1.us"); }) == "expected a time like \"1.5us\", got \"1.us\"");
  CHECK(unit_error([] { parse_time(".5us"); }) == "expected a time like \"1.5us\", got \".5us\"");
  CHECK(unit_error([] { parse_time("1.5ps"); }) ==
        "\"1.5ps\" is not a whole number of picoseconds");
  CHECK(unit_error([] { parse_bandwidth("400Gbit"); })
            .starts_with("expected a bandwidth like \"400Gbps\", got \"400Gbit\" (unknown unit "
                         "\"Gbit\"; use one of: bps, Kbps"));
  CHECK(unit_error([] { parse_time("1e3us"); }).find("unknown unit \"e3us\"") != std::string::npos);
  // Units are case-sensitive: "gbps" is neither Gbps nor GBps.
  CHECK(unit_error([] { parse_bandwidth("1gbps"); }).find("unknown unit") != std::string::npos);
  // int64 picoseconds end at ~106 days; 1e7 s is past that.
  CHECK(unit_error([] { parse_time("10000000s"); }) == "\"10000000s\" is too large for a time");
  CHECK(parse_time("9000000s") == Time::s(9'000'000));
  CHECK(unit_error([] { parse_bandwidth("10000000Tbps"); }) ==
        "\"10000000Tbps\" is too large for a bandwidth");
  CHECK(unit_error([] { parse_bytes("100000000000000000000000000000B"); }) ==
        "\"100000000000000000000000000000B\" is too large for a size");
  CHECK(unit_error([] { parse_time("1.00000000000000000000000000000000001s"); }) ==
        "\"1.00000000000000000000000000000000001s\" has too many digits");
}

TEST_CASE("units: formatting is exact and parses back") {
  CHECK(format_time(Time::ps(1'500'000)) == "1.5 us");
  CHECK(format_time(Time::ns(250)) == "250 ns");
  CHECK(format_time(Time::ps(1'234)) == "1.234 ns");
  CHECK(format_time(Time::s(2)) == "2 s");
  CHECK(format_time(Time::zero()) == "0 s");
  CHECK(format_time(Time::ps(-1'500)) == "-1.5 ns");
  CHECK(format_bytes(Bytes{64 * 1024 * 1024}) == "64 MiB");
  CHECK(format_bytes(Bytes{1536}) == "1.5 KiB");
  CHECK(format_bytes(Bytes{1'000'000}) == "1 MB");
  CHECK(format_bytes(Bytes{1500}) == "1.5 KB");
  CHECK(format_bytes(Bytes{1234567}) == "1234.567 KB");
  CHECK(format_bytes(Bytes{999}) == "999 B");
  CHECK(format_bytes(Bytes{0}) == "0 B");
  CHECK(format_bandwidth(Bandwidth::gbps(400)) == "400 Gbps");
  CHECK(format_bandwidth(parse_bandwidth("3.2Tbps")) == "3.2 Tbps");
  for (const char* t : {"1.5us", "123.456789ms", "7ps", "3s"}) {
    CHECK(parse_time(format_time(parse_time(t))) == parse_time(t));
  }
  for (const char* b : {"64MiB", "1.5KiB", "1234567B", "3TB", "999B"}) {
    CHECK(parse_bytes(format_bytes(parse_bytes(b))) == parse_bytes(b));
  }
}
