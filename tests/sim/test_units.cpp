#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "sim/core/units.hpp"

using namespace syncsim;

TEST_CASE("units: tx_time is exact at 100G to 3.2T") {
  // 4160 B = 33,280 bits.
  CHECK(Bandwidth::gbps(100).tx_time(Bytes{4160}).picoseconds() == 332'800);
  CHECK(Bandwidth::gbps(200).tx_time(Bytes{4160}).picoseconds() == 166'400);
  CHECK(Bandwidth::gbps(400).tx_time(Bytes{4160}).picoseconds() == 83'200);
  CHECK(Bandwidth::gbps(800).tx_time(Bytes{4160}).picoseconds() == 41'600);
  CHECK(Bandwidth::bps(3'200'000'000'000).tx_time(Bytes{4160}).picoseconds() == 10'400);
  // 1 byte at 3.2 Tb/s is 2.5 ps: rounded up, never truncated to 2 (which would run 25% fast).
  CHECK(Bandwidth::bps(3'200'000'000'000).tx_time(Bytes{1}).picoseconds() == 3);
  // A million bytes at 3.2T in one go is exact: 2.5 us.
  CHECK(Bandwidth::bps(3'200'000'000'000).tx_time(Bytes{1'000'000}) == Time::ns(2500));
  // Odd rates: 25 Gb/s, 1500 B = 480 ns; 56 Gb/s, 1 B = 142.857 ps -> 143.
  CHECK(Bandwidth::gbps(25).tx_time(Bytes{1500}) == Time::ns(480));
  CHECK(Bandwidth::gbps(56).tx_time(Bytes{1}).picoseconds() == 143);
  // Large sizes do not overflow: 8 GiB at 100G.
  CHECK(Bandwidth::gbps(100).tx_time(Bytes{int64_t{8} << 30}).picoseconds() ==
        int64_t{687'194'767'360});
}

TEST_CASE("units: bytes_in inverts tx_time") {
  const Bandwidth b = Bandwidth::gbps(400);
  CHECK(b.bytes_in(Time::us(1)).count() == 50'000);
  CHECK(b.bytes_in(b.tx_time(Bytes{123'456})).count() == 123'456);
}

TEST_CASE("units: time arithmetic and conversions") {
  CHECK(Time::us(1) + Time::ns(500) == Time::ps(1'500'000));
  CHECK(Time::ms(2) - Time::us(1) == Time::ns(1'999'000));
  CHECK(Time::from_seconds(1.5e-6) == Time::ns(1500));
  CHECK(Time::s(1).seconds() == doctest::Approx(1.0));
  CHECK(Time::ns(3) * 4 == Time::ns(12));
  CHECK(Time::ns(12) / 4 == Time::ns(3));
  CHECK(Time::ns(1) < Time::ns(2));
  CHECK(Bytes{10} + Bytes{5} == Bytes{15});
  CHECK(Bytes{3}.bits() == 24);
}

TEST_CASE("units: time that leaves int64 picoseconds throws TimeOverflow instead of wrapping") {
  // About 106 days is the whole range; these used to wrap to negative times (undefined behaviour),
  // surfacing as "an event was scheduled in the past".
  const Time big = Time::max() - Time::ps(10);
  CHECK(big + Time::ps(10) == Time::max());
  CHECK_THROWS_AS(big + Time::ps(11), TimeOverflow);
  CHECK_THROWS_AS(Time::zero() - Time::max() - Time::ps(2), TimeOverflow);
  Time t = big;
  CHECK_THROWS_AS(t += Time::s(1), TimeOverflow);
  CHECK(t == big);                                         // unchanged when the sum does not fit
  CHECK_THROWS_AS(Time::s(1) * 10'000'000, TimeOverflow);  // 116 days
  CHECK(Time::s(1) * 9'000'000 == Time::s(9'000'000));     // 104 days
  CHECK_THROWS_AS(Time::s(10'000'000), TimeOverflow);
  CHECK_THROWS_AS(Time::from_seconds(1e7), TimeOverflow);
  CHECK_THROWS_AS(Time::from_seconds(std::numeric_limits<double>::quiet_NaN()), TimeOverflow);
  CHECK(Time::from_seconds(9e6) == Time::s(9'000'000));
  // 2 TB at 1 Mb/s is 185 days of serialization.
  CHECK_THROWS_AS(Bandwidth::bps(1'000'000).tx_time(Bytes{2'000'000'000'000}), TimeOverflow);
  CHECK(Bandwidth::bps(1'000'000).tx_time(Bytes{1'000'000'000'000}) == Time::s(8'000'000));
  try {
    static_cast<void>(big + Time::s(1));
  } catch (const TimeOverflow& e) {
    CHECK(std::string(e.what()).find("simulated time overflowed") != std::string::npos);
  }
}
