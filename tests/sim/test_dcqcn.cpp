// The DCQCN reaction point against hand-computed sequences (the DCQCN incast scenarios are in
// tests/run/test_dcqcn.cpp).
#include <doctest/doctest.h>

#include <cmath>

#include "sim/net/dcqcn.hpp"

using namespace syncsim;
using namespace syncsim::net;

namespace {
constexpr double kG = 1e9;
}  // namespace

TEST_CASE("dcqcn: a CNP cuts the rate to RC * (1 - alpha/2) and moves alpha towards 1") {
  DcqcnParams p = DcqcnParams::paper();
  p.initial_alpha = 0.5;
  DcqcnRateController c(p, Bandwidth::gbps(100));
  CHECK_FALSE(c.limited());
  CHECK(c.on_cnp(Time::us(10)));
  CHECK(c.rate_bps() == doctest::Approx(100 * kG * (1 - 0.25)));
  CHECK(c.target_bps() == doctest::Approx(100 * kG));
  const double a1 = (1 - p.g) * 0.5 + p.g;
  CHECK(c.alpha(Time::us(10)) == doctest::Approx(a1));
  CHECK(c.limited());
  // A second CNP (the paper has no decrease period: every CNP cuts) uses the updated alpha.
  CHECK(c.on_cnp(Time::us(20)));
  CHECK(c.target_bps() == doctest::Approx(75 * kG));
  CHECK(c.rate_bps() == doctest::Approx(75 * kG * (1 - a1 / 2)));
  CHECK(c.alpha(Time::us(20)) == doctest::Approx((1 - p.g) * a1 + p.g));
}

TEST_CASE("dcqcn: five fast-recovery steps from 50 to 100 Gb/s land at 100 - 50/2^5 Gb/s") {
  const DcqcnParams p = DcqcnParams::paper();  // initial alpha 1: the first CNP halves the rate
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());
  REQUIRE(c.rate_bps() == doctest::Approx(50 * kG));
  double expect = 50 * kG;
  for (int i = 0; i < 5; ++i) {
    c.on_rate_timer();
    expect = (100 * kG + expect) / 2;
    CHECK(c.rate_bps() == doctest::Approx(expect));
    CHECK(c.target_bps() == doctest::Approx(100 * kG));
  }
  CHECK(c.rate_bps() == doctest::Approx(100 * kG - 50 * kG / 32));
}

TEST_CASE("dcqcn: additive then hyper increase follow the timer and byte counters") {
  const DcqcnParams p = DcqcnParams::paper();
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());  // RT 100, RC 50, alpha stays 1 ((1-g) * 1 + g)
  c.on_cnp(Time::us(50));  // RT 50, RC 25
  REQUIRE(c.target_bps() == doctest::Approx(50 * kG));
  REQUIRE(c.rate_bps() == doctest::Approx(25 * kG));
  for (int i = 0; i < 5; ++i) c.on_rate_timer();  // fast recovery: RT stays 50
  double rc = 50 * kG - 25 * kG / 32;
  CHECK(c.rate_bps() == doctest::Approx(rc));
  double rt = 50 * kG;
  c.on_rate_timer();  // T = 6 > F, BC = 0: additive
  rt += 40e6;
  rc = (rt + rc) / 2;
  CHECK(c.target_bps() == doctest::Approx(rt));
  CHECK(c.rate_bps() == doctest::Approx(rc));
  // Five byte-counter events: T = 6 > F but BC <= F, still additive.
  CHECK(c.on_bytes_sent(5 * p.byte_counter) == 5);
  for (int i = 0; i < 5; ++i) {
    rt += 40e6;
    rc = (rt + rc) / 2;
  }
  CHECK(c.target_bps() == doctest::Approx(rt));
  CHECK(c.rate_bps() == doctest::Approx(rc));
  // The sixth byte event makes min(T, BC) = 6 > F: hyper increase with i = 1, then i = 2 (timer).
  CHECK(c.on_bytes_sent(p.byte_counter - 1) == 0);
  CHECK(c.on_bytes_sent(1) == 1);
  rt += 400e6;
  rc = (rt + rc) / 2;
  CHECK(c.target_bps() == doctest::Approx(rt));
  CHECK(c.rate_bps() == doctest::Approx(rc));
  c.on_rate_timer();  // T = 7, BC = 6: i = 1 again
  rt += 400e6;
  rc = (rt + rc) / 2;
  CHECK(c.target_bps() == doctest::Approx(rt));
  c.on_bytes_sent(p.byte_counter);  // T = 7, BC = 7: i = 2
  rt += 2 * 400e6;
  rc = (rt + rc) / 2;
  CHECK(c.target_bps() == doctest::Approx(rt));
  CHECK(c.rate_bps() == doctest::Approx(rc));
  // A cut resets both counters: the next event is fast recovery again.
  c.on_cnp(Time::us(100));
  const double rt_after_cut = c.target_bps();
  c.on_rate_timer();
  CHECK(c.target_bps() == doctest::Approx(rt_after_cut));
}

TEST_CASE("dcqcn: increases clamp at line rate and the flow stops being limited") {
  const DcqcnParams p = DcqcnParams::paper();
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());
  for (int i = 0; i < 40; ++i) c.on_rate_timer();
  CHECK(c.target_bps() == 100 * kG);
  CHECK(c.rate_bps() == 100 * kG);
  CHECK_FALSE(c.limited());
}

TEST_CASE("dcqcn: alpha decays by (1 - g) per quiet alpha period") {
  const DcqcnParams p = DcqcnParams::paper();
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::us(100));
  const double a = c.alpha(Time::us(100));
  // No decay before the first CNP (the flow had no congestion state): initial alpha 1, then the
  // update (1 - g) * 1 + g = 1.
  CHECK(a == doctest::Approx(1.0));
  CHECK(c.alpha(Time::us(154)) == doctest::Approx(a));  // less than one 55 us period
  CHECK(c.alpha(Time::us(155)) == doctest::Approx(a * (1 - p.g)));
  CHECK(c.alpha(Time::us(100 + 3 * 55 + 1)) == doctest::Approx(a * std::pow(1 - p.g, 3)));
  // The next CNP cuts with the decayed alpha and restarts the quiet period.
  const double decayed = a * std::pow(1 - p.g, 10);
  const double rc = c.rate_bps();
  c.on_cnp(Time::us(100 + 10 * 55));
  CHECK(c.rate_bps() == doctest::Approx(rc * (1 - decayed / 2)));
  CHECK(c.alpha(Time::us(100 + 10 * 55)) == doctest::Approx((1 - p.g) * decayed + p.g));
}

TEST_CASE("dcqcn: ConnectX preset cuts at most once per 4 us and never below the minimum rate") {
  const DcqcnParams p = DcqcnParams::connectx();
  CHECK(p.g == doctest::Approx(5.0 / 1024));
  CHECK(p.fast_recovery_steps == 1);
  CHECK(p.rate_period == Time::us(300));
  // rpg_byte_reset = 32767 in 64-byte units.
  CHECK(p.byte_counter == 2'097'088);
  CHECK(p.byte_counter == 32767 * kConnectXByteCounterUnit);
  CHECK(p.cnp_interval == Time::us(4));
  DcqcnRateController c(p, Bandwidth::gbps(100));
  CHECK(c.on_cnp(Time::zero()));
  const double rc = c.rate_bps();
  CHECK(rc == doctest::Approx(100 * kG * (1 - (1023.0 / 1024) / 2)));
  const double a1 = c.alpha(Time::zero());
  // Inside the decrease period: alpha moves (after 3 quiet 1 us periods of decay), the rate does
  // not.
  CHECK_FALSE(c.on_cnp(Time::us(3)));
  CHECK(c.rate_bps() == rc);
  CHECK(c.alpha(Time::us(3)) == doctest::Approx((1 - p.g) * (a1 * std::pow(1 - p.g, 3)) + p.g));
  CHECK(c.on_cnp(Time::us(4)));
  CHECK(c.rate_bps() < rc);
  for (int i = 0; i < 2000; ++i) c.on_cnp(Time::us(4 + 4 * (i + 1)));
  CHECK(c.rate_bps() == doctest::Approx(1e6));
  // clamp_tgt_rate = 0: back-to-back cuts with no timer increase in between leave RT where it was
  // before the burst (the line rate here), so the first timer event (fast recovery, F = 1) returns
  // halfway to it.
  CHECK(c.target_bps() == doctest::Approx(100 * kG));
  c.on_rate_timer();
  CHECK(c.rate_bps() == doctest::Approx((100 * kG + 1e6) / 2));
  // With F = 1 the second increase event is already additive (+5 Mb/s, clamped at line rate).
  c.on_rate_timer();
  CHECK(c.target_bps() == doctest::Approx(100 * kG));
  // After a timer increase, the next cut does set RT = RC.
  const double before = c.rate_bps();
  CHECK(c.on_cnp(Time::ms(100)));
  CHECK(c.target_bps() == doctest::Approx(before));
}

TEST_CASE(
    "dcqcn: the paper's clamp sets RT = RC on every cut; a disabled byte counter steps by timer") {
  DcqcnParams p = DcqcnParams::paper();
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());  // alpha 1: 100 -> 50, RT = 100
  c.on_cnp(Time::us(60));  // RT = 50
  CHECK(c.target_bps() == doctest::Approx(50 * kG));
  p.clamp_target_rate = false;  // the same cuts without the clamp keep RT at 100
  DcqcnRateController u(p, Bandwidth::gbps(100));
  u.on_cnp(Time::zero());
  u.on_cnp(Time::us(60));
  CHECK(u.target_bps() == doctest::Approx(100 * kG));
  CHECK(u.rate_bps() == doctest::Approx(c.rate_bps()));

  // Byte counter disabled (HPCC's model of the Mellanox NIC): F = 1, timer events 1, 2, 3, 4 give
  // fast recovery, additive (+R_AI), then hyper (+R_HAI each).
  DcqcnParams t = DcqcnParams::connectx();
  t.byte_counter = 0;
  DcqcnRateController h(t, Bandwidth::gbps(100));
  h.on_cnp(Time::zero());
  h.on_cnp(Time::us(10));
  const double rt = h.target_bps();
  CHECK(h.on_bytes_sent(10'000'000) == 0);
  double rc = h.rate_bps();
  h.on_rate_timer();
  CHECK(h.target_bps() == doctest::Approx(rt));
  CHECK(h.rate_bps() == doctest::Approx((rt + rc) / 2));
  // From here RT is below the line rate: take it down first to see the steps.
  h.on_cnp(Time::us(400));  // timer fired since the last cut: RT = RC
  const double rt2 = h.target_bps();
  h.on_rate_timer();  // T = 1: fast recovery
  CHECK(h.target_bps() == doctest::Approx(rt2));
  h.on_rate_timer();  // T = 2: additive
  CHECK(h.target_bps() == doctest::Approx(rt2 + 5e6));
  h.on_rate_timer();  // T = 3: hyper
  CHECK(h.target_bps() == doctest::Approx(rt2 + 5e6 + 50e6));
  h.on_rate_timer();  // T = 4: hyper
  CHECK(h.target_bps() == doctest::Approx(rt2 + 5e6 + 100e6));
  rc = h.rate_bps();
  CHECK(rc < h.target_bps());
}

TEST_CASE("dcqcn: the first CNP finds the initial alpha whenever it arrives") {
  const DcqcnParams p = DcqcnParams::connectx();
  DcqcnRateController early(p, Bandwidth::gbps(400));
  DcqcnRateController late(p, Bandwidth::gbps(400));
  CHECK_FALSE(late.active());
  CHECK(late.alpha(Time::ms(1)) == doctest::Approx(1023.0 / 1024));  // no decay without state
  early.on_cnp(Time::zero());
  late.on_cnp(Time::ms(1));
  CHECK(late.active());
  // 400 * (1 - (1023/1024) / 2) = 200.2 Gb/s at 0 and at 1 ms alike (alpha decayed from time 0
  // would have cut 400 -> 398.6).
  CHECK(early.rate_bps() == doctest::Approx(400 * kG * (1 - (1023.0 / 1024) / 2)));
  CHECK(late.rate_bps() == early.rate_bps());
  CHECK(late.alpha(Time::ms(1)) == early.alpha(Time::zero()));
  // From then on alpha decays from the CNP: 10 quiet 1 us periods later.
  CHECK(late.alpha(Time::ms(1) + Time::us(10)) ==
        doctest::Approx(early.alpha(Time::zero()) * std::pow(1 - p.g, 10)));
}

TEST_CASE("dcqcn: ConnectX clamps the target after a byte-counter increase, not after cuts alone") {
  const DcqcnParams p = DcqcnParams::connectx();
  DcqcnRateController c(p, Bandwidth::gbps(400));
  c.on_cnp(Time::zero());  // 400 -> ~200, RT stays 400 (no increase before: the pre-burst rate)
  REQUIRE(c.target_bps() == doctest::Approx(400 * kG));
  // One byte-counter event (32767 x 64 B): fast recovery (F = 1) halfway back to 400.
  CHECK(c.on_bytes_sent(p.byte_counter) == 1);
  CHECK(c.rate_bps() == doctest::Approx((400 * kG + 400 * kG * (1 - (1023.0 / 1024) / 2)) / 2));
  // The next cut (4 us later) clamps RT to the recovered rate: the rate was raised since the cut.
  const double before = c.rate_bps();
  const double a = c.alpha(Time::us(4));
  CHECK(c.on_cnp(Time::us(4)));
  CHECK(c.target_bps() == doctest::Approx(before));
  CHECK(c.rate_bps() == doctest::Approx(before * (1 - a / 2)));
  // A cut right after that one, with no increase in between, leaves RT where it is.
  CHECK(c.on_cnp(Time::us(8)));
  CHECK(c.target_bps() == doctest::Approx(before));

  // clamp_target_after_timer_increase = false: a timer increase alone does not clamp.
  DcqcnParams q = DcqcnParams::connectx();
  q.clamp_target_after_timer_increase = false;
  DcqcnRateController u(q, Bandwidth::gbps(400));
  u.on_cnp(Time::zero());
  u.on_rate_timer();
  const double raised = u.rate_bps();
  u.on_cnp(Time::us(300));
  CHECK(u.target_bps() == doctest::Approx(400 * kG));
  DcqcnRateController v(p, Bandwidth::gbps(400));  // the preset's ati = 1 does
  v.on_cnp(Time::zero());
  v.on_rate_timer();
  v.on_cnp(Time::us(300));
  CHECK(v.target_bps() == doctest::Approx(raised));
}

TEST_CASE("dcqcn: the decrease floor, a first-CNP rate and increase steps scaled to the link") {
  // rpg_gd = 10 (alpha / 1) with alpha ~1 would cut to ~0: rpg_min_dec_fac = 50% keeps half.
  DcqcnParams p = DcqcnParams::connectx();
  p.alpha_divisor = 1.0;
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());
  CHECK(c.rate_bps() == doctest::Approx(50 * kG));
  p.min_decrease_factor = 0.0;
  DcqcnRateController d(p, Bandwidth::gbps(100));
  d.on_cnp(Time::zero());
  CHECK(d.rate_bps() == doctest::Approx(100 * kG / 1024));

  // rate_to_set_on_first_cnp: the first CNP sets the rate, later ones cut by alpha.
  DcqcnParams f = DcqcnParams::connectx();
  f.first_cnp_rate = Bandwidth::gbps(10);
  DcqcnRateController e(f, Bandwidth::gbps(400));
  e.on_cnp(Time::zero());
  CHECK(e.rate_bps() == doctest::Approx(10 * kG));
  const double a = e.alpha(Time::us(4));
  e.on_cnp(Time::us(4));
  CHECK(e.rate_bps() == doctest::Approx(10 * kG * (1 - a / 2)));

  // HPCC's scaling of R_AI / R_HAI by line rate / 25 Gb/s: 16x at 400G. With the byte counter
  // off, T = 2 is additive: RT += 16 x 5 Mb/s.
  DcqcnParams s = DcqcnParams::connectx();
  s.byte_counter = 0;
  s.clamp_target_rate = true;
  s.increase_reference_rate = Bandwidth::gbps(25);
  DcqcnRateController h(s, Bandwidth::gbps(400));
  h.on_cnp(Time::zero());
  h.on_cnp(Time::us(4));
  const double rt = h.target_bps();
  h.on_rate_timer();
  h.on_rate_timer();
  CHECK(h.target_bps() == doctest::Approx(rt + 16 * 5e6));
  h.on_rate_timer();
  CHECK(h.target_bps() == doctest::Approx(rt + 16 * 5e6 + 16 * 50e6));
}
