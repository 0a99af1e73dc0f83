#include "sim/net/link_impairment.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <utility>

#include "sim/core/simulation.hpp"
#include "sim/net/network_spec.hpp"

namespace syncsim::net {

FieldErrors ImpairmentParams::check() const {
  FieldErrors errors;
  const auto time = [&](const char* field, Time t) {
    if (t < Time::zero()) errors.push_back({field, "expected a non-negative time", time_text(t)});
  };
  const auto fraction = [&](const char* field, double v) {
    if (!(v >= 0.0 && v <= 100.0)) {
      errors.push_back(
          {field, "expected a fraction of the link delay in [0, 100]", number_text(v)});
    }
  };
  time("jitter_mean", jitter_mean);
  time("jitter_stddev", jitter_stddev);
  fraction("jitter_mean_fraction", jitter_mean_fraction);
  fraction("jitter_stddev_fraction", jitter_stddev_fraction);
  if (!(loss_probability >= 0.0 && loss_probability < 1.0)) {
    errors.push_back(
        {"loss_probability", "expected a probability in [0, 1)", number_text(loss_probability)});
  }
  return errors;
}

bool ImpairmentParams::impairs(const LinkParams& link) const {
  return link_classes.empty()
             ? link.name != "nvlink"
             : std::find(link_classes.begin(), link_classes.end(), link.name) != link_classes.end();
}

namespace {
// The mean and standard deviation of the extra delay on a link of class `link`, in picoseconds.
std::pair<double, double> jitter_moments(const ImpairmentParams& imp, const LinkParams& link) {
  const auto delay = static_cast<double>(link.delay.picoseconds());
  return {
      static_cast<double>(imp.jitter_mean.picoseconds()) + imp.jitter_mean_fraction * delay,
      static_cast<double>(imp.jitter_stddev.picoseconds()) + imp.jitter_stddev_fraction * delay};
}
}  // namespace

Time ImpairmentParams::least_delay(const LinkParams& link) const {
  if (!impairs(link) || jitter != JitterDistribution::Normal) return link.delay;
  const auto [mean_ps, stddev_ps] = jitter_moments(*this, link);
  // The delay is an integer count of picoseconds, rounded as apply() rounds.
  const double least =
      static_cast<double>(link.delay.picoseconds()) +
      static_cast<double>(std::llround(mean_ps - kNormalJitterLowestZ * stddev_ps));
  return Time::ps(static_cast<int64_t>(std::max(0.0, least)));
}

std::unique_ptr<LinkImpairment> LinkImpairment::make(const ImpairmentParams& imp,
                                                     const LinkParams& link, uint8_t lossless_mask,
                                                     const Simulation& sim, uint32_t port) {
  if (!imp.impairs(link)) return nullptr;
  auto st = std::make_unique<LinkImpairment>();
  st->jitter_ = imp.jitter;
  std::tie(st->mean_ps_, st->stddev_ps_) = jitter_moments(imp, link);
  if (st->mean_ps_ == 0.0 && st->stddev_ps_ == 0.0) st->jitter_ = JitterDistribution::None;
  st->loss_probability_ = imp.loss_probability;
  st->lossless_mask_ = lossless_mask;
  // Streams per port (one direction of one cable), so adding a link never shifts another's draws.
  st->jitter_rng_ = sim.rng(RngStreamKind::Jitter, (uint64_t{1} << 40) + 2 * uint64_t{port});
  st->loss_rng_ = sim.rng(RngStreamKind::Jitter, (uint64_t{1} << 40) + 2 * uint64_t{port} + 1);
  return st;
}

bool LinkImpairment::apply(const Packet& p, Time now, Time& arrival) {
  if (loss_probability_ > 0.0 && p.kind != PacketKind::Pause && p.kind != PacketKind::Cnp &&
      ((static_cast<uint32_t>(lossless_mask_) >> p.priority) & 1U) == 0 &&
      loss_rng_.uniform() < loss_probability_) {
    return false;
  }
  int64_t at = arrival.picoseconds();
  if (jitter_ != JitterDistribution::None) {
    double extra = 0.0;
    if (jitter_ == JitterDistribution::Normal) {
      // Box-Muller on our own uniforms (std:: distributions differ between standard libraries).
      const double u1 = 1.0 - jitter_rng_.uniform();  // (0, 1]
      const double u2 = jitter_rng_.uniform();
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
      extra = mean_ps_ + stddev_ps_ * std::max(z, -kNormalJitterLowestZ);
    } else {
      extra = mean_ps_ * -std::log(1.0 - jitter_rng_.uniform());
    }
    at = std::max(now.picoseconds(), at + static_cast<int64_t>(std::llround(extra)));
  }
  // FIFO: a link delivers in order, so a packet waits for the one ahead of it.
  at = std::max(at, last_arrival_ps_);
  last_arrival_ps_ = at;
  arrival = Time::ps(at);
  return true;
}

}  // namespace syncsim::net
