// ETS (802.1Qaz) transmission selection: DWRR shares against the configured weights, strict
// classes first, work conservation when a class cannot send, and the plain strict fallback.
#include <doctest/doctest.h>

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "sim/net/ets_scheduler.hpp"

using namespace syncsim::net;

namespace {

EtsParams weights(std::array<uint8_t, kMaxPriorities> percent, uint8_t strict = 0) {
  EtsParams p;
  p.weight_percent = percent;
  p.strict_mask = strict;
  return p;
}

// Wire bytes served per class over `picks` picks, every class in `ready` always backlogged with
// packets of the given sizes.
std::array<int64_t, kMaxPriorities> serve(EtsScheduler& s, uint32_t ready, int picks,
                                          const std::array<uint32_t, kMaxPriorities>& head) {
  std::array<int64_t, kMaxPriorities> bytes{};
  for (int i = 0; i < picks; ++i) {
    const int c = s.pick(ready, head);
    REQUIRE(c >= 0);
    REQUIRE(((ready >> c) & 1U) != 0);
    bytes[static_cast<std::size_t>(c)] += head[static_cast<std::size_t>(c)];
  }
  return bytes;
}

constexpr std::array<uint32_t, kMaxPriorities> kMtu{4160, 4160, 4160, 4160, 4160, 4160, 4160, 4160};

}  // namespace

TEST_CASE("ets: two backlogged classes at 70/30 get 70/30 of the bytes") {
  EtsScheduler s(weights({30, 0, 0, 70, 0, 0, 0, 0}), 8, 7);
  const auto bytes = serve(s, (1U << 0) | (1U << 3), 100'000, kMtu);
  const double total = static_cast<double>(bytes[0] + bytes[3]);
  CHECK(static_cast<double>(bytes[3]) / total == doctest::Approx(0.70).epsilon(0.01));
  CHECK(static_cast<double>(bytes[0]) / total == doctest::Approx(0.30).epsilon(0.01));
}

TEST_CASE("ets: the shares are in bytes, not packets, and hold with a 1% class") {
  // Class 0 sends 64 B packets, class 3 full MTUs: DWRR charges bytes.
  std::array<uint32_t, kMaxPriorities> head = kMtu;
  head[0] = 64;
  EtsScheduler s(weights({50, 0, 0, 50, 0, 0, 0, 0}), 8, 7);
  const auto bytes = serve(s, (1U << 0) | (1U << 3), 200'000, head);
  CHECK(static_cast<double>(bytes[0]) / static_cast<double>(bytes[0] + bytes[3]) ==
        doctest::Approx(0.5).epsilon(0.01));
  EtsScheduler small(weights({1, 0, 0, 99, 0, 0, 0, 0}), 8, 7);
  const auto b = serve(small, (1U << 0) | (1U << 3), 200'000, kMtu);
  CHECK(static_cast<double>(b[0]) / static_cast<double>(b[0] + b[3]) ==
        doctest::Approx(0.01).epsilon(0.05));
}

TEST_CASE("ets: a class that cannot send (empty or paused) gives its share to the others") {
  EtsScheduler s(weights({30, 0, 0, 70, 0, 0, 0, 0}), 8, 7);
  // Class 3 paused: class 0 gets every pick, not 30 %.
  const auto alone = serve(s, 1U << 0, 1000, kMtu);
  CHECK(alone[0] == 1000 * 4160);
  // Class 3 back: no credit was banked while it waited, and the shares resume at once.
  const auto both = serve(s, (1U << 0) | (1U << 3), 10'000, kMtu);
  CHECK(static_cast<double>(both[3]) / static_cast<double>(both[0] + both[3]) ==
        doctest::Approx(0.70).epsilon(0.01));
  // Classes without a weight get what the weighted ones leave (higher first), never ahead of them.
  EtsScheduler leftover(weights({50, 0, 0, 50, 0, 0, 0, 0}), 8, 7);
  CHECK(leftover.pick((1U << 5) | (1U << 0), kMtu) == 0);
  CHECK(leftover.pick((1U << 5) | (1U << 2), kMtu) == 5);
  CHECK(leftover.pick(0, kMtu) == -1);
}

TEST_CASE("ets: strict classes and the CNP class go first, higher first") {
  EtsScheduler s(weights({50, 0, 0, 50, 0, 0, 0, 0}, /*strict=*/1U << 5), 8, 7);
  CHECK(s.strict_mask() == ((1U << 5) | (1U << 7)));
  CHECK(s.weighted_mask() == ((1U << 0) | (1U << 3)));
  const uint32_t data = (1U << 0) | (1U << 3);
  for (int i = 0; i < 100; ++i) {
    CHECK(s.pick(data | (1U << 7), kMtu) == 7);
    CHECK(s.pick(data | (1U << 5), kMtu) == 5);
    CHECK(s.pick(data | (1U << 5) | (1U << 7), kMtu) == 7);
  }
  // A weight on a strict class is ignored: strict wins.
  EtsScheduler cnp_weighted(weights({50, 0, 0, 50, 0, 0, 0, 0}), 4, 3);
  CHECK(cnp_weighted.strict_mask() == (1U << 3));
  CHECK(cnp_weighted.weighted_mask() == (1U << 0));
}

TEST_CASE("ets: disabled (or default-constructed) is plain strict priority") {
  EtsParams off = weights({30, 0, 0, 70, 0, 0, 0, 0});
  off.enabled = false;
  EtsScheduler s(off, 8, 7);
  EtsScheduler plain;
  for (uint32_t ready = 1; ready < 256; ++ready) {
    const int highest = static_cast<int>(std::bit_width(ready)) - 1;
    CHECK(s.pick(ready, kMtu) == highest);
    CHECK(plain.pick(ready, kMtu) == highest);
  }
}

TEST_CASE("ets: the pick sequence is deterministic") {
  const auto sequence = [] {
    EtsScheduler s(weights({20, 30, 0, 50, 0, 0, 0, 0}), 8, 7);
    std::vector<int> out;
    std::array<uint32_t, kMaxPriorities> head = kMtu;
    for (int i = 0; i < 5000; ++i) {
      head[1] = 64U + static_cast<uint32_t>(i % 7) * 600U;
      const uint32_t ready = (i % 13 == 0) ? 0b1011U : 0b0011U;
      out.push_back(s.pick(ready, head));
    }
    return out;
  };
  CHECK(sequence() == sequence());
}

namespace {

// DWRR as ets_scheduler.hpp states it, round by round: idle weighted classes lose their deficit;
// the turn walks the classes, a fresh turn adds the class's quantum, and a ready class whose
// deficit covers its head packet is served.
struct ReferenceDwrr {
  std::array<int64_t, kMaxPriorities> quantum{};
  std::array<int64_t, kMaxPriorities> deficit{};
  uint32_t weighted_mask = 0;
  uint32_t current = 0;
  bool fresh = true;
  int pick(uint32_t ready, const std::array<uint32_t, kMaxPriorities>& head) {
    const uint32_t weighted = ready & weighted_mask;
    for (uint32_t c = 0; c < kMaxPriorities; ++c) {
      if (((weighted_mask >> c) & 1U) != 0 && ((weighted >> c) & 1U) == 0) deficit[c] = 0;
    }
    for (;;) {
      if (((weighted >> current) & 1U) != 0) {
        if (fresh) {
          deficit[current] += quantum[current];
          fresh = false;
        }
        if (deficit[current] >= head[current]) {
          deficit[current] -= head[current];
          return static_cast<int>(current);
        }
      }
      current = (current + 1) % kMaxPriorities;
      fresh = true;
    }
  }
};

}  // namespace

TEST_CASE("ets: picks as the round-by-round DWRR does, one class ready or several") {
  // A 1 % class (a 1 KiB quantum: several rounds per 4 KiB packet) and a 99 % one; readiness and
  // packet sizes vary pick by pick, so the scheduler's one-class shortcut and its full round
  // alternate and must leave the same state.
  EtsScheduler s(weights({1, 0, 0, 99, 0, 0, 0, 0}), 8, 7);
  ReferenceDwrr ref;
  ref.weighted_mask = (1U << 0) | (1U << 3);
  ref.quantum[0] = 1 * EtsScheduler::kQuantumPerPercent;
  ref.quantum[3] = 99 * EtsScheduler::kQuantumPerPercent;
  constexpr std::array<uint32_t, 4> kSizes{64, 1500, 4160, 9000};
  constexpr std::array<uint32_t, 3> kReady{1U << 0, 1U << 3, (1U << 0) | (1U << 3)};
  uint64_t state = 12345;
  int both = 0;
  for (int i = 0; i < 100'000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint32_t ready = kReady[(state >> 33) % kReady.size()];
    std::array<uint32_t, kMaxPriorities> head = kMtu;
    head[0] = kSizes[(state >> 40) % kSizes.size()];
    head[3] = kSizes[(state >> 50) % kSizes.size()];
    const int expected = ref.pick(ready, head);
    const int got = s.pick(ready, head);
    if (got != expected) {
      FAIL("pick " << i << ": " << got << " against " << expected);
    }
    if (std::popcount(ready) == 2) ++both;
  }
  CHECK(both > 30'000);
}
