#pragma once
// Per-link impairments: extra one-way delay (jitter) and random loss on the links of chosen
// classes. Parameters come from the scenario (`fabric.impairments`); each impaired link direction
// holds a LinkImpairment with its own random streams, so adding a link never shifts another link's
// draws.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/field_error.hpp"
#include "sim/core/rng.hpp"
#include "sim/core/units.hpp"
#include "sim/net/packet.hpp"

namespace syncsim {
class Simulation;
}

namespace syncsim::net {

struct LinkParams;

enum class JitterDistribution : uint8_t { None, Normal, Exponential };

struct ImpairmentParams {
  // Link classes to impair ("host", "fabric", "core"); empty = every class but "nvlink".
  std::vector<std::string> link_classes{};
  // Extra one-way delay per packet and hop. Normal: mean + stddev * z, z drawn from the standard
  // normal with its lower tail cut at -kNormalJitterLowestZ (the total delay is clipped at zero);
  // Exponential: mean * Exp(1) (its stddev is the mean). Each is an absolute time plus a fraction
  // of the link class's propagation delay: extra = time + fraction * delay.
  JitterDistribution jitter = JitterDistribution::None;
  Time jitter_mean = Time::zero();
  Time jitter_stddev = Time::zero();
  double jitter_mean_fraction = 0.0;
  double jitter_stddev_fraction = 0.0;
  // Probability that a packet of a lossy priority is lost on a link (CNPs and PFC frames excepted).
  double loss_probability = 0.0;
  // Lose lossless (PFC) classes' packets too: bit errors (an FCS mismatch) drop a frame of any
  // class, PFC only prevents congestion loss. Off by default: a link's loss models congestion-free
  // drops of the lossy classes.
  bool loss_on_lossless = false;
  // Whether packets get any extra delay at all.
  bool jitters() const {
    return jitter != JitterDistribution::None &&
           (jitter_mean > Time::zero() || jitter_stddev > Time::zero() ||
            jitter_mean_fraction > 0.0 || jitter_stddev_fraction > 0.0);
  }
  bool active() const { return loss_probability > 0.0 || jitters(); }

  // Range rules (link_impairment.cpp): non-negative jitter times, fractions in [0, 100], a loss
  // probability in [0, 1).
  FieldErrors check() const;

  // Whether links of class `link` are impaired (every class but "nvlink" when link_classes is
  // empty).
  bool impairs(const LinkParams& link) const;
  // The least one-way delay a packet can take on a link of class `link` (its delay when the class
  // is not impaired or has no jitter; never below zero): what a windowed run may look ahead over
  // such a link (fabric_partition.hpp).
  Time least_delay(const LinkParams& link) const;
};

// Normal jitter's z is cut at -6 standard deviations: the draws below it (a probability of 1e-9
// per packet and hop) take -6. This is what gives a link with normal jitter a least delay, and a
// windowed run its lookahead; above it the distribution is the normal's.
inline constexpr double kNormalJitterLowestZ = 6.0;

// One impaired link direction.
class LinkImpairment {
 public:
  // The impairment of egress port `port`'s link (class `link`), or null when `params` leave that
  // class alone. Priorities in `lossless_mask` (PFC-protected) are never randomly lost.
  static std::unique_ptr<LinkImpairment> make(const ImpairmentParams& params,
                                              const LinkParams& link, uint8_t lossless_mask,
                                              const Simulation& sim, uint32_t port);
  // A packet sent `now` that would arrive at `arrival`: false when it is lost on the link; else
  // `arrival` moves by the jitter (never before `now`, never ahead of the previous packet).
  bool apply(const Packet& packet, Time now, Time& arrival);

 private:
  JitterDistribution jitter_ = JitterDistribution::None;
  double mean_ps_ = 0;
  double stddev_ps_ = 0;
  double loss_probability_ = 0;
  uint8_t lossless_mask_ = 0;
  int64_t last_arrival_ps_ = 0;  // FIFO: a packet never overtakes the previous one
  RngStream jitter_rng_{0, 0};
  RngStream loss_rng_{0, 0};
};

}  // namespace syncsim::net
