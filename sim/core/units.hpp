#pragma once
// Strong unit types for simulated time, data sizes and bit rates.
//
// Time is an integer count of picoseconds: int64 gives ~106 days of range, enough for any training
// run we simulate, and integer arithmetic keeps runs bit-identical across machines. Serialization
// time is computed exactly (ceil(bits * 1e12 / bps)) in 128-bit integer math; a truncated
// ps-per-byte constant would silently run a 3.2 Tb/s link 25% fast.
//
// Time arithmetic is checked: a sum, difference or product that leaves int64 picoseconds throws
// TimeOverflow instead of wrapping (signed overflow is undefined behaviour; it used to surface as
// "an event was scheduled in the past"). The check is one add/mul with its overflow flag and a
// never-taken branch; the scenario loader keeps rates and sizes in ranges that stay far from it.
#include <compare>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace syncsim {

// Simulated time outside int64 picoseconds (about 106 days). Not an InternalError: it follows from
// the inputs (a rate, size or duration far outside what the scenario loader's ranges allow, or a
// run longer than 106 simulated days); the CLI reports its message with exit 1.
class TimeOverflow : public std::overflow_error {
 public:
  using std::overflow_error::overflow_error;
};

namespace detail {
// Out of line and cold, so the checked operators stay small enough to inline on the event path.
[[noreturn, gnu::cold, gnu::noinline]] inline void time_overflow(const char* what) {
  throw TimeOverflow(std::string("simulated time overflowed its int64 picoseconds (about 106 "
                                 "days) in ") +
                     what +
                     ": a rate, size or duration of the scenario is beyond what can be simulated");
}
constexpr int64_t checked_mul(int64_t a, int64_t b, const char* what) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) [[unlikely]]
    time_overflow(what);
  return r;
}
}  // namespace detail

// 128-bit intermediate for exact rate arithmetic; __extension__ keeps -Wpedantic quiet about it.
__extension__ typedef unsigned __int128 uint128;

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time ps(int64_t v) { return Time{v}; }
  static constexpr Time ns(int64_t v) { return Time{detail::checked_mul(v, 1'000, "Time::ns")}; }
  static constexpr Time us(int64_t v) {
    return Time{detail::checked_mul(v, 1'000'000, "Time::us")};
  }
  static constexpr Time ms(int64_t v) {
    return Time{detail::checked_mul(v, 1'000'000'000, "Time::ms")};
  }
  static constexpr Time s(int64_t v) {
    return Time{detail::checked_mul(v, 1'000'000'000'000, "Time::s")};
  }
  static constexpr Time zero() { return Time{0}; }
  static constexpr Time max() { return Time{std::numeric_limits<int64_t>::max()}; }
  // Rounds to the nearest picosecond; for configuration values, never on the hot path.
  static Time from_seconds(double seconds);

  constexpr int64_t picoseconds() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double microseconds() const { return static_cast<double>(ps_) * 1e-6; }

  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const {
    int64_t r = 0;
    if (__builtin_add_overflow(ps_, o.ps_, &r)) [[unlikely]]
      detail::time_overflow("a sum");
    return Time{r};
  }
  constexpr Time operator-(Time o) const {
    int64_t r = 0;
    if (__builtin_sub_overflow(ps_, o.ps_, &r)) [[unlikely]]
      detail::time_overflow("a difference");
    return Time{r};
  }
  constexpr Time& operator+=(Time o) { return *this = *this + o; }
  constexpr Time& operator-=(Time o) { return *this = *this - o; }
  constexpr Time operator*(int64_t k) const {
    return Time{detail::checked_mul(ps_, k, "a product")};
  }
  constexpr Time operator/(int64_t k) const { return Time{ps_ / k}; }

 private:
  constexpr explicit Time(int64_t v) : ps_(v) {}
  int64_t ps_ = 0;
};

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(int64_t v) : b_(v) {}
  constexpr int64_t count() const { return b_; }
  constexpr int64_t bits() const { return b_ * 8; }
  constexpr auto operator<=>(const Bytes&) const = default;
  constexpr Bytes operator+(Bytes o) const { return Bytes{b_ + o.b_}; }
  constexpr Bytes operator-(Bytes o) const { return Bytes{b_ - o.b_}; }
  constexpr Bytes& operator+=(Bytes o) {
    b_ += o.b_;
    return *this;
  }
  constexpr Bytes& operator-=(Bytes o) {
    b_ -= o.b_;
    return *this;
  }
  constexpr Bytes operator*(int64_t k) const { return Bytes{b_ * k}; }
  constexpr Bytes operator/(int64_t k) const { return Bytes{b_ / k}; }

 private:
  int64_t b_ = 0;
};

// A bit rate in bits per second.
class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bps(int64_t v) { return Bandwidth{v}; }
  static constexpr Bandwidth gbps(int64_t v) { return Bandwidth{v * 1'000'000'000}; }
  constexpr int64_t bits_per_second() const { return bps_; }
  constexpr double gbit_per_second() const { return static_cast<double>(bps_) * 1e-9; }
  constexpr double bytes_per_second() const { return static_cast<double>(bps_) / 8.0; }
  constexpr auto operator<=>(const Bandwidth&) const = default;

  // Exact serialization time of `size` at this rate, rounded up to the next picosecond.
  constexpr Time tx_time(Bytes size) const {
    using u128 = uint128;
    const u128 num = static_cast<u128>(size.bits()) * 1'000'000'000'000u;
    const u128 den = static_cast<u128>(bps_);
    const u128 ps = (num + den - 1) / den;
    if (ps > static_cast<u128>(std::numeric_limits<int64_t>::max())) [[unlikely]] {
      detail::time_overflow("a serialization time");
    }
    return Time::ps(static_cast<int64_t>(ps));
  }
  // Bytes that fit in `t` at this rate, rounded down.
  constexpr Bytes bytes_in(Time t) const {
    using u128 = uint128;
    const u128 bits =
        static_cast<u128>(t.picoseconds()) * static_cast<u128>(bps_) / 1'000'000'000'000u;
    return Bytes{static_cast<int64_t>(bits / 8)};
  }

 private:
  constexpr explicit Bandwidth(int64_t v) : bps_(v) {}
  int64_t bps_ = 0;
};

inline Time Time::from_seconds(double seconds) {
  const double ps = seconds * 1e12;
  // 2^63 is exactly representable; anything at or beyond it (or NaN) has no int64 value.
  if (!(ps > -9.2233720368547758e18 && ps < 9.2233720368547758e18)) {
    detail::time_overflow("a time in seconds");
  }
  return Time{static_cast<int64_t>(ps < 0 ? ps - 0.5 : ps + 0.5)};
}

}  // namespace syncsim
