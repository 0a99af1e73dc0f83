#pragma once
// DCQCN reaction point (Zhu et al., SIGCOMM 2015; references.md section 5): a pure per-flow state
// machine with no events of its own. The Network drives it: a CNP arrival calls on_cnp(), the
// flow's rate-increase timer calls on_rate_timer(), and every byte the flow sends while
// rate-limited goes through on_bytes_sent() (the byte counter).
//
//   Before the first CNP the flow has no congestion state (ConnectX allocates a rate limiter on
//   the first CNP): it sends at line rate and alpha does not decay. The first CNP starts alpha at
//   `initial_alpha` (ConnectX initial_alpha_value), whenever in the run it arrives.
//   On a CNP:   RT = RC (see the clamp below);
//               RC = max(min_rate, RC * max(min_decrease_factor, 1 - alpha/alpha_divisor));
//               alpha = (1 - g) alpha + g.
//               The rate is cut at most once per `decrease_period` (ConnectX's
//               rate_reduce_monitor_period); alpha is updated on every CNP, as in the paper.
//               `first_cnp_rate` (ConnectX rate_to_set_on_first_cnp), when set, replaces the first
//               cut: RC = that rate.
//   Target clamp: clamp_target_rate sets RT = RC on every cut (the paper). Without it (ConnectX
//               clamp_tgt_rate = 0), RT = RC only if the rate was raised since the previous cut:
//               by the byte counter, or by the timer when clamp_target_after_timer_increase
//               (clamp_tgt_rate_after_time_inc = 1). A burst of back-to-back cuts thus keeps the
//               target at the rate before the burst.
//   No CNP:     alpha = (1 - g) alpha once per `alpha_period` without a CNP. The decay is evaluated
//               lazily from the time of the last CNP (equivalent to the paper's timer that restarts
//               at each CNP), so it costs no events.
//   Increase:   a timer event (every `rate_period`) or a byte-counter event (every `byte_counter`
//               bytes sent) counts in T or BC respectively, both reset by a rate cut. Then
//                 max(T, BC) <= F       fast recovery     RC = (RT + RC) / 2
//                 min(T, BC) >  F       hyper increase    RT += i * R_HAI, i = min(T, BC) - F;
//                                                         RC = (RT + RC) / 2
//                 otherwise             additive increase RT += R_AI;  RC = (RT + RC) / 2
//               RT and RC are clamped at the line rate. R_AI and R_HAI are multiplied by
//               line rate / `increase_reference_rate` when that is set (HPCC's simulator scales the
//               ConnectX 5 / 50 Mb/s by line rate / 25 Gb/s), else used as given.
//               With the byte counter disabled (B = 0, as in HPCC's ns-3 model of the Mellanox
//               NIC), the timer alone steps the stages: T <= F fast recovery, T = F + 1 additive,
//               T > F + 1 hyper increase by one R_HAI per event.
#include <cstdint>
#include <string_view>

#include "sim/core/field_error.hpp"
#include "sim/core/units.hpp"

namespace syncsim::net {

enum class DcqcnPreset : uint8_t { Paper, ConnectX };

// The unit of ConnectX's rpg_byte_reset: 64 bytes, so the firmware default 32767 (the largest
// value of the 15-bit field) is an increase event every 2,097,088 bytes sent. Google's isekai
// simulator, whose DCQCN follows NVIDIA's parameter list, counts it in 64-byte units
// (isekai/host/rdma/rdma_roce_cc_dcqcn.cc: `byte_reset * 64`, asserted by its unit test). NVIDIA's
// parameter text says "Given in Bytes", but that sentence is the IEEE 802.1Qau managed object's
// (linux/dcbnl.h), and mstflint's description of the field, with that same sentence, gives its
// default as 150: the standard's 150 KB byte counter, not 150 bytes. HPCC's ns-3 model of the
// Mellanox NIC leaves the byte counter out, which a counter of megabytes allows (an event every
// 168 us at 100G, next to the 300 us timer) and a 32 KB one would not (every 2.6 us at 100G and
// 0.65 us at 400G: several per 4 us decrease period, so every cut is undone within microseconds).
// Read as bytes, the stock preset holds a 16:1 100G incast at the PFC threshold
// (tests/run/test_dcqcn.cpp; docs/model.md, "The stock settings on a 16:1 incast").
inline constexpr int64_t kConnectXByteCounterUnit = 64;

struct DcqcnParams {
  bool enabled = false;
  double g = 1.0 / 256.0;                      // alpha EWMA gain
  double initial_alpha = 1.0;                  // alpha before the first CNP
  Time alpha_period = Time::us(55);            // alpha decays once per quiet period
  Time rate_period = Time::us(55);             // rate-increase timer T
  int64_t byte_counter = 10'000'000;           // rate-increase byte counter B (bytes); 0: disabled
  uint32_t fast_recovery_steps = 5;            // F
  Bandwidth rai = Bandwidth::bps(40'000'000);  // additive increase step R_AI
  Bandwidth rhai = Bandwidth::bps(400'000'000);  // hyper increase step R_HAI
  Bandwidth min_rate = Bandwidth::bps(1'000'000);
  Time decrease_period = Time::zero();  // minimum time between two rate cuts (0: every CNP)
  Time cnp_interval = Time::us(50);     // notification point: at most one CNP per flow per interval
  // true: every cut sets RT = RC (the paper's algorithm). false (ConnectX clamp_tgt_rate = 0 with
  // clamp_tgt_rate_after_time_inc = 1): RT = RC only if the rate timer has raised the rate since
  // the previous cut, so a burst of back-to-back cuts keeps the target at the rate before the burst
  // and fast recovery returns halfway to it instead of to the last, already-cut rate.
  bool clamp_target_rate = true;
  // Without clamp_target_rate: also set RT = RC on a cut after a timer increase (a byte-counter
  // increase always does).
  bool clamp_target_after_timer_increase = true;
  double alpha_divisor = 2.0;        // cut = alpha / divisor (ConnectX rpg_gd = 11: 2^11 / 1024)
  double min_decrease_factor = 0.0;  // a cut keeps at least this fraction of RC (0: no floor)
  Bandwidth first_cnp_rate = Bandwidth::bps(0);  // 0: the first CNP cuts by alpha like any other
  Bandwidth increase_reference_rate = Bandwidth::bps(0);  // 0: R_AI, R_HAI as given

  // DCQCN paper (section 5.3): g = 1/256, 55 us timers, B = 10 MB, F = 5, R_AI = 40 Mb/s, CNPs at
  // most every 50 us. The paper gives no R_HAI: we use 10 x R_AI = 400 Mb/s (htsim uses rate/10).
  // No decrease period of its own: the NP's 50 us CNP interval already spaces the cuts.
  static DcqcnParams paper();
  // ConnectX-4+ firmware defaults (NVIDIA DOCA "DCQCN CC Parameters", Linux mlx5 cc_params;
  // references.md 5.2): g = 5/1024 from dce_tcp_g = 1019 (alpha = (1019/1024) alpha + 5/1024 on a
  // CNP: the vendor's own documented default, preferred over the 1/256 of HPCC's simulator),
  // initial alpha 1023/1024 at the first CNP, alpha period 1 us (dce_tcp_rtt), rate cut at most
  // every 4 us (rate_reduce_monitor_period), cut alpha/2 (rpg_gd = 11) but never below 50% of the
  // rate (rpg_min_dec_fac = 50), rate timer 300 us (rpg_time_reset), byte counter rpg_byte_reset =
  // 32767 counted in 64-byte units, 2,097,088 B (kConnectXByteCounterUnit below), F = 1
  // (rpg_threshold), R_AI = 5 Mb/s, R_HAI = 50 Mb/s (rpg_ai_rate,
  // rpg_hai_rate: fixed, not scaled with link speed by the firmware), min rate 1 Mb/s
  // (rpg_min_rate), no first-CNP rate (rate_to_set_on_first_cnp = 0), target clamped only after an
  // increase (clamp_tgt_rate = 0, clamp_tgt_rate_after_time_inc = 1), CNPs at most every 4 us per
  // flow (min_time_between_cnps).
  static DcqcnParams connectx();
  static DcqcnParams preset(DcqcnPreset p) {
    return p == DcqcnPreset::Paper ? paper() : connectx();
  }

  // Range rules (dcqcn.cpp): g and initial_alpha in (0, 1]; positive alpha and rate periods,
  // non-negative decrease period and CNP interval; positive R_AI, R_HAI and min rate;
  // alpha_divisor in [1, 1024], min_decrease_factor in [0, 1).
  FieldErrors check() const;
};

class DcqcnRateController {
 public:
  DcqcnRateController() = default;
  DcqcnRateController(const DcqcnParams& params, Bandwidth line_rate);

  // A CNP arrived at `now`. Returns true if the rate was cut (false inside the decrease period).
  bool on_cnp(Time now);
  // One expiry of the rate-increase timer.
  void on_rate_timer();
  // Counts sent bytes; returns the number of byte-counter increase events this caused.
  uint32_t on_bytes_sent(int64_t bytes);

  double rate_bps() const { return rc_; }    // current rate RC
  double target_bps() const { return rt_; }  // target rate RT
  double line_rate_bps() const { return line_; }
  // alpha as of `now`, with the quiet-period decay applied.
  double alpha(Time now) const;
  // True while RC or RT is below the line rate: the flow is paced and its increase timer runs.
  bool limited() const { return rc_ < line_ || rt_ < line_; }
  // True once the first CNP has created the flow's congestion state.
  bool active() const { return active_; }
  uint32_t timer_events() const { return timer_count_; }
  uint32_t byte_events() const { return byte_count_; }

 private:
  void increase();
  void finish_increase();  // RC = (RT + RC) / 2 with the line-rate clamps

  const DcqcnParams* params_ = nullptr;
  double rai_ = 0;  // R_AI and R_HAI for this line rate (b/s)
  double rhai_ = 0;
  bool active_ = false;  // the first CNP arrived
  double line_ = 0;
  double rc_ = 0;
  double rt_ = 0;
  double alpha_ = 1.0;
  int64_t alpha_ref_ps_ = 0;  // alpha_ holds alpha as of this time (last CNP; unused before one)
  int64_t last_decrease_ps_ = INT64_MIN;
  int64_t bytes_ = 0;         // bytes since the last byte-counter event
  uint32_t timer_count_ = 0;  // T
  uint32_t byte_count_ = 0;   // BC
};

}  // namespace syncsim::net
