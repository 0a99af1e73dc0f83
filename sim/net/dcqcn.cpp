#include "sim/net/dcqcn.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/check.hpp"

namespace syncsim::net {

DcqcnParams DcqcnParams::paper() {
  DcqcnParams p;
  p.enabled = true;
  return p;  // the member defaults are the paper's values
}

DcqcnParams DcqcnParams::connectx() {
  DcqcnParams p;
  p.enabled = true;
  p.g = 5.0 / 1024.0;
  p.initial_alpha = 1023.0 / 1024.0;
  p.alpha_period = Time::us(1);
  p.rate_period = Time::us(300);
  p.byte_counter = 32767 * kConnectXByteCounterUnit;  // rpg_byte_reset = 32767
  p.fast_recovery_steps = 1;
  p.rai = Bandwidth::bps(5'000'000);
  p.rhai = Bandwidth::bps(50'000'000);
  p.min_rate = Bandwidth::bps(1'000'000);
  p.decrease_period = Time::us(4);
  p.cnp_interval = Time::us(4);
  p.clamp_target_rate = false;
  p.clamp_target_after_timer_increase = true;
  p.alpha_divisor = 2.0;
  p.min_decrease_factor = 0.5;
  return p;
}

FieldErrors DcqcnParams::check() const {
  FieldErrors errors;
  const auto fraction = [&](const char* field, double v) {
    if (!(v > 0.0 && v <= 1.0))
      errors.push_back({field, "expected a number in (0, 1]", number_text(v)});
  };
  const auto period = [&](const char* field, Time t, bool allow_zero) {
    if (t < Time::zero() || (!allow_zero && t == Time::zero())) {
      errors.push_back({field,
                        allow_zero ? "expected a non-negative time" : "expected a positive time",
                        time_text(t)});
    }
  };
  const auto rate = [&](const char* field, Bandwidth b) {
    if (b.bits_per_second() <= 0) {
      errors.push_back({field, "expected a positive rate, got " +
                                   (b.bits_per_second() == 0 ? std::string("0") : rate_text(b))});
    }
  };
  fraction("g", g);
  fraction("initial_alpha", initial_alpha);
  period("alpha_period", alpha_period, false);
  period("rate_period", rate_period, false);
  period("decrease_period", decrease_period, true);
  period("cnp_interval", cnp_interval, true);
  rate("rai", rai);
  rate("rhai", rhai);
  rate("min_rate", min_rate);
  if (!(alpha_divisor >= 1.0 && alpha_divisor <= 1024.0)) {
    errors.push_back(
        {"alpha_divisor", "expected a number in [1, 1024]", number_text(alpha_divisor)});
  }
  if (!(min_decrease_factor >= 0.0 && min_decrease_factor < 1.0)) {
    errors.push_back(
        {"min_decrease_factor", "expected a number in [0, 1)", number_text(min_decrease_factor)});
  }
  return errors;
}

DcqcnRateController::DcqcnRateController(const DcqcnParams& params, Bandwidth line_rate)
    : params_(&params),
      line_(static_cast<double>(line_rate.bits_per_second())),
      rc_(line_),
      rt_(line_),
      alpha_(params.initial_alpha) {
  SIM_CHECK(line_ > 0, "DCQCN needs a positive line rate");
  SIM_CHECK(params.g > 0 && params.g <= 1, "DCQCN needs 0 < g <= 1");
  SIM_CHECK(params.alpha_period > Time::zero() && params.rate_period > Time::zero(),
            "DCQCN timers must be positive");
  SIM_CHECK(params.byte_counter >= 0, "DCQCN byte counter must not be negative");
  SIM_CHECK(params.alpha_divisor >= 1.0, "DCQCN alpha divisor must be at least 1");
  SIM_CHECK(params.min_decrease_factor >= 0.0 && params.min_decrease_factor < 1.0,
            "DCQCN minimum decrease factor must be in [0, 1)");
  const double scale =
      params.increase_reference_rate.bits_per_second() > 0
          ? line_ / static_cast<double>(params.increase_reference_rate.bits_per_second())
          : 1.0;
  rai_ = static_cast<double>(params.rai.bits_per_second()) * scale;
  rhai_ = static_cast<double>(params.rhai.bits_per_second()) * scale;
}

double DcqcnRateController::alpha(Time now) const {
  if (!active_) return alpha_;  // no state yet: the first CNP will find initial_alpha
  const int64_t quiet = now.picoseconds() - alpha_ref_ps_;
  if (quiet <= 0) return alpha_;
  const int64_t periods = quiet / params_->alpha_period.picoseconds();
  if (periods == 0) return alpha_;
  return alpha_ * std::pow(1.0 - params_->g, static_cast<double>(periods));
}

bool DcqcnRateController::on_cnp(Time now) {
  const bool first = !active_;
  const double a = alpha(now);
  active_ = true;
  bool cut = false;
  const int64_t t = now.picoseconds();
  if (last_decrease_ps_ == INT64_MIN ||
      t - last_decrease_ps_ >= params_->decrease_period.picoseconds()) {
    const bool raised =
        byte_count_ > 0 || (params_->clamp_target_after_timer_increase && timer_count_ > 0);
    if (params_->clamp_target_rate || raised) rt_ = rc_;
    const double min_rate = static_cast<double>(params_->min_rate.bits_per_second());
    if (first && params_->first_cnp_rate.bits_per_second() > 0) {
      rc_ = std::min(rc_, static_cast<double>(params_->first_cnp_rate.bits_per_second()));
    } else {
      const double factor =
          std::max(params_->min_decrease_factor, 1.0 - a / params_->alpha_divisor);
      rc_ *= factor;
    }
    rc_ = std::max(min_rate, rc_);
    last_decrease_ps_ = t;
    timer_count_ = 0;
    byte_count_ = 0;
    bytes_ = 0;
    cut = true;
  }
  alpha_ = (1.0 - params_->g) * a + params_->g;
  alpha_ref_ps_ = t;
  return cut;
}

void DcqcnRateController::on_rate_timer() {
  ++timer_count_;
  increase();
}

uint32_t DcqcnRateController::on_bytes_sent(int64_t bytes) {
  if (params_->byte_counter == 0) return 0;
  bytes_ += bytes;
  uint32_t events = 0;
  while (bytes_ >= params_->byte_counter) {
    bytes_ -= params_->byte_counter;
    ++byte_count_;
    ++events;
    increase();
  }
  return events;
}

void DcqcnRateController::increase() {
  const uint32_t f = params_->fast_recovery_steps;
  if (params_->byte_counter == 0) {
    if (timer_count_ == f + 1) {
      rt_ += rai_;
    } else if (timer_count_ > f + 1) {
      rt_ += rhai_;
    }
    finish_increase();
    return;
  }
  const uint32_t hi = std::max(timer_count_, byte_count_);
  const uint32_t lo = std::min(timer_count_, byte_count_);
  if (hi <= f) {
    // Fast recovery: RT stays.
  } else if (lo > f) {
    rt_ += static_cast<double>(lo - f) * rhai_;
  } else {
    rt_ += rai_;
  }
  finish_increase();
}

void DcqcnRateController::finish_increase() {
  rt_ = std::min(rt_, line_);
  rc_ = std::min((rt_ + rc_) / 2.0, line_);
  // Halving the gap never closes it in floating point: within 0.01% of the line rate, the flow is
  // back at line rate (no longer paced, its timer stops).
  if (rt_ == line_ && line_ - rc_ < 1e-4 * line_) rc_ = line_;
}

}  // namespace syncsim::net
