// Range rules of the mechanisms' own parameter structs (ETS, link impairments, transports).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/net/ets_scheduler.hpp"
#include "sim/net/link_impairment.hpp"
#include "sim/net/transport.hpp"

using syncsim::Bandwidth;
using syncsim::FieldErrors;
using syncsim::Time;

namespace {

std::vector<std::string> fields(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.field);
  return out;
}

}  // namespace

TEST_CASE("EtsParams::check: the RoCE default passes; weights sum to 100, strict xor weighted") {
  using syncsim::net::EtsParams;
  CHECK(EtsParams{}.check().empty());
  EtsParams e;
  e.weight_percent = {50, 0, 0, 40, 0, 0, 0, 0};
  CHECK(e.check().front().text() ==
        "expected weights (percent of the port) that sum to 100, got 90");
  e.weight_percent = {50, 0, 0, 50, 0, 0, 0, 0};
  e.strict_mask = 1U << 6;  // the CNP class of 8, unweighted: fine
  CHECK(e.check().empty());
  e.strict_mask = (1U << 6) | (1U << 3);
  const auto errors = e.check();
  CHECK(fields(errors) == std::vector<std::string>{"strict_mask"});
  CHECK(errors.front().text() ==
        "expected each class either strict or weighted, got class 3 in both");
}

TEST_CASE("ImpairmentParams::check: none by default; jitter and loss ranges") {
  using syncsim::net::ImpairmentParams;
  using syncsim::net::JitterDistribution;
  CHECK(ImpairmentParams{}.check().empty());
  ImpairmentParams p{.jitter = JitterDistribution::Normal,
                     .jitter_mean = Time::ns(-1),
                     .jitter_stddev = Time::ns(-1),
                     .jitter_mean_fraction = -0.1,
                     .jitter_stddev_fraction = 101,
                     .loss_probability = 1.0};
  const auto errors = p.check();
  CHECK(fields(errors) == std::vector<std::string>{"jitter_mean", "jitter_stddev",
                                                   "jitter_mean_fraction", "jitter_stddev_fraction",
                                                   "loss_probability"});
  CHECK(errors.back().text() == "expected a probability in [0, 1), got 1");
  p = ImpairmentParams{.jitter_mean_fraction = 100, .loss_probability = 0.999};
  CHECK(p.check().empty());
}

TEST_CASE("TransportParams::check: defaults pass; each transport's rules under its prefix") {
  using syncsim::net::TransportParams;
  CHECK(TransportParams{}.check().empty());
  TransportParams t;
  t.gbn.timeout = Time::zero();
  t.gbn.lossless_timeout = Time::ns(-1);
  t.tcp.dctcp_g = 0;
  t.tcp.stack_latency = Time::ns(-1);
  t.tcp.cpu_ps_per_byte = -1;
  t.staging.pcie = Bandwidth::bps(0);
  t.staging.host_memory = Bandwidth::bps(0);
  t.staging.copy_latency = Time::ns(-1);
  const auto errors = t.check();
  CHECK(fields(errors) == std::vector<std::string>{"gbn.timeout", "gbn.lossless_timeout",
                                                   "tcp.dctcp_g", "tcp.stack_latency",
                                                   "tcp.cpu_ps_per_byte", "staging.pcie",
                                                   "staging.host_memory", "staging.copy_latency"});
  CHECK(errors[0].text() == "expected a positive time, got 0 ps");
  CHECK(errors[4].text() == "expected a non-negative time per byte, got -1 ps");
  // RTO bounds: each positive, then ordered.
  t = TransportParams{};
  t.tcp.rto_min = Time::ms(2);
  t.tcp.rto_max = Time::ms(1);
  CHECK(t.check().front().field == "tcp.rto_max");
  CHECK(t.check().front().text() == "expected rto_max >= rto_min");
  t.tcp.rto_min = Time::zero();
  CHECK(fields(t.check()) == std::vector<std::string>{"tcp.rto_min"});
  t.tcp.rto_min = Time::ms(1);
  CHECK(t.check().empty());
}
