#pragma once
// Seeded random streams. Each component draws from its own stream derived from (scenario seed,
// stream id), so adding a component never perturbs another's draws. xoshiro256** with our own
// conversions: std:: distributions are implementation-defined and would break bit-identical results
// across standard libraries.
#include <cstdint>

#include "sim/core/units.hpp"

namespace syncsim {

constexpr uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A stateless 64-bit mix, for hashing (ECMP) and for deriving stream seeds.
constexpr uint64_t mix64(uint64_t a, uint64_t b) {
  uint64_t s = a ^ (b * 0xD6E8FEB86659FD93ull);
  return splitmix64(s);
}

class RngStream {
 public:
  RngStream(uint64_t scenario_seed, uint64_t stream_id) {
    uint64_t s = mix64(scenario_seed, stream_id);
    for (auto& w : state_) w = splitmix64(s);
  }
  uint64_t next_u64() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n) without modulo bias (Lemire's method).
  uint64_t below(uint64_t n) {
    using u128 = uint128;
    u128 m = static_cast<u128>(next_u64()) * n;
    auto low = static_cast<uint64_t>(m);
    if (low < n) {
      const uint64_t threshold = (0 - n) % n;
      while (low < threshold) {
        m = static_cast<u128>(next_u64()) * n;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

}  // namespace syncsim
