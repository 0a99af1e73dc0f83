// Range rules of parameter structs (check() next to the fields), without any scenario file.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "sim/net/network_spec.hpp"

using syncsim::Bytes;
using syncsim::net::EcnParams;

TEST_CASE("EcnParams::check: defaults pass, kmin/kmax order and the pmax range are rules") {
  CHECK(EcnParams{}.check().empty());
  EcnParams e;
  e.kmin_auto = false;
  e.kmax_auto = false;
  e.kmin = Bytes{400'000};
  e.kmax = Bytes{100'000};
  e.pmax = 0;
  const auto errors = e.check();
  REQUIRE(errors.size() == 2);
  CHECK(errors[0].field == "kmax");
  CHECK(errors[0].text() == "expected kmax at or above kmin (400000 B), got 100000 B");
  CHECK(errors[1].field == "pmax");
  CHECK(errors[1].text() == "expected 0 < pmax <= 1, got 0");
  e.pmax = 1.5;
  CHECK(e.check().back().text() == "expected 0 < pmax <= 1, got 1.5");
  // Auto thresholds are sized per port later, so their zero placeholders are not checked.
  CHECK(EcnParams{.enabled = true, .pmax = 1.0}.check().empty());
}

namespace {

using syncsim::Bandwidth;
using syncsim::FieldErrors;
using syncsim::Time;

// The fields of the broken rules, in order.
std::vector<std::string> fields(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.field);
  return out;
}

}  // namespace

TEST_CASE("LinkParams::check: the default classes pass; bandwidth, delay, MTU and header") {
  using syncsim::net::LinkParams;
  CHECK(LinkParams{}.check().empty());
  LinkParams l{.name = "host",
               .bandwidth = Bandwidth::bps(0),
               .delay = Time::ns(-1),
               .mtu = Bytes{0},
               .header = Bytes{-1}};
  const auto errors = l.check();
  CHECK(fields(errors) == std::vector<std::string>{"bandwidth", "delay", "mtu", "header"});
  CHECK(errors[0].text() == "expected a bandwidth > 0, got 0 bit/s");
  CHECK(errors[1].text() == "expected a delay >= 0, got -1000 ps");
  CHECK(errors[2].text() == "expected an MTU > 0 bytes, got 0");
  CHECK(errors[3].text() == "expected a header size >= 0 bytes, got -1");
}

TEST_CASE("LinkParams::check_real_rate: 1 Mb/s to 100 Tb/s; beyond is only check()'s business") {
  using syncsim::net::LinkParams;
  CHECK(LinkParams{}.check_real_rate().empty());
  const auto at = [](int64_t bps) {
    return LinkParams{.name = "host", .bandwidth = Bandwidth::bps(bps)};
  };
  CHECK(at(LinkParams::kMinBps).check_real_rate().empty());
  CHECK(at(LinkParams::kMaxBps).check_real_rate().empty());
  CHECK(at(LinkParams::kMinBps - 1)
            .check_real_rate()
            .front()
            .text()
            .ends_with("int64 picoseconds), got 999999 bit/s"));
  CHECK(fields(at(LinkParams::kMaxBps + 1).check_real_rate()) ==
        std::vector<std::string>{"bandwidth"});
  // An "infinitely fast" test network is still a link the simulator can run.
  CHECK(at(LinkParams::kMaxBps * 10).check().empty());
}

TEST_CASE("PfcParams::check: defaults pass; thresholds, XON offset, times and quanta") {
  using syncsim::net::PfcParams;
  CHECK(PfcParams{}.check().empty());
  CHECK(PfcParams{.enabled = true, .watchdog = true}.check().empty());
  PfcParams p;
  p.alpha = 0;
  CHECK(p.check().front().text() == "expected 0 < dynamic_alpha <= 16 (HPCC uses 0.125), got 0");
  p.alpha = 16;
  CHECK(p.check().empty());
  p.alpha = 16.5;
  CHECK(fields(p.check()) == std::vector<std::string>{"alpha"});
  // A static threshold: positive, and at least the XON offset so that 0 <= XON < XOFF.
  p = PfcParams{.dynamic_threshold = false};
  CHECK(fields(p.check()) == std::vector<std::string>{"static_xoff", "xon_offset"});
  p.static_xoff = Bytes{2048};
  CHECK(p.check().front().text() ==
        "expected xon_offset <= the static XOFF threshold (2048 B) so that 0 <= XON < XOFF, got "
        "3072 B");
  p.static_xoff = Bytes{3072};
  CHECK(p.check().empty());
  p.xon_offset = Bytes{0};
  CHECK(p.check().front().text() == "expected xon_offset > 0 (XON must sit below XOFF), got 0 B");
  p = PfcParams{};
  p.response_time = Time::ns(-1);
  p.pause_quanta = 65536;
  p.deadlock_detection_time = Time::ns(-1);
  p.watchdog_time = Time::zero();
  CHECK(fields(p.check()) == std::vector<std::string>{"response_time", "pause_quanta",
                                                      "deadlock_detection_time", "watchdog_time"});
  p = PfcParams{.response_time = Time::zero(), .deadlock_detection_time = Time::zero()};
  p.pause_quanta = 65535;
  CHECK(p.check().empty());  // zero: no response allowance, detection off; 65535 fits 16 bits
}

TEST_CASE("DcqcnParams::check: both presets pass; each range is a rule") {
  using syncsim::net::DcqcnParams;
  CHECK(DcqcnParams{}.check().empty());
  CHECK(DcqcnParams::paper().check().empty());
  CHECK(DcqcnParams::connectx().check().empty());
  DcqcnParams d;
  d.g = 0;
  d.initial_alpha = 1.5;
  d.alpha_period = Time::zero();
  d.rate_period = Time::ns(-1);
  d.decrease_period = Time::ns(-1);
  d.cnp_interval = Time::ns(-1);
  d.rai = Bandwidth::bps(0);
  d.rhai = Bandwidth::bps(-1);
  d.min_rate = Bandwidth::bps(0);
  d.alpha_divisor = 0.5;
  d.min_decrease_factor = 1.0;
  const auto errors = d.check();
  CHECK(fields(errors) == std::vector<std::string>{"g", "initial_alpha", "alpha_period",
                                                   "rate_period", "decrease_period", "cnp_interval",
                                                   "rai", "rhai", "min_rate", "alpha_divisor",
                                                   "min_decrease_factor"});
  CHECK(errors[0].text() == "expected a number in (0, 1], got 0");
  CHECK(errors[6].text() == "expected a positive rate, got 0");
  CHECK(errors[7].text() == "expected a positive rate, got -1 bit/s");
  // Zero periods are allowed where zero means "every CNP" or "no spacing".
  d = DcqcnParams{};
  d.decrease_period = Time::zero();
  d.cnp_interval = Time::zero();
  d.min_decrease_factor = 0.0;
  d.alpha_divisor = 1024;
  CHECK(d.check().empty());
}

TEST_CASE("NicParams::check: defaults pass; DCQCN's rules under dcqcn., receiver thresholds") {
  using syncsim::net::NicParams;
  CHECK(NicParams{}.check().empty());
  NicParams n;
  n.dcqcn.g = 2;
  n.rx_drain_rate = Bandwidth::bps(0);
  n.rx_xon = n.rx_xoff;
  CHECK(fields(n.check()) == std::vector<std::string>{"dcqcn.g", "rx_drain_rate", "rx_xoff"});
  n = NicParams{};
  n.rx_xoff = n.rx_buffer + Bytes{1};
  CHECK(n.check().front().text() == "expected xon < xoff <= buffer");
  n.rx_xoff = n.rx_buffer;
  CHECK(n.check().empty());
}

TEST_CASE("SwitchParams and FlowCcCorrection::check: defaults pass; their ranges are rules") {
  using syncsim::net::FlowCcCorrection;
  using syncsim::net::SwitchParams;
  CHECK(SwitchParams{}.check().empty());
  CHECK(fields(SwitchParams{.buffer = Bytes{0}, .priorities = 9}.check()) ==
        std::vector<std::string>{"priorities", "buffer"});
  CHECK(SwitchParams{.priorities = 0}.check().front().text() ==
        "expected 1 to 8 priorities, got 0");
  CHECK(FlowCcCorrection{}.check().empty());
  CHECK(FlowCcCorrection{.enabled = true, .contended_efficiency = 0.6}.check().empty());
  CHECK(FlowCcCorrection{.contended_efficiency = 0}.check().front().text() ==
        "expected an efficiency in (0, 1] (1 = no correction), got 0");
  CHECK(!FlowCcCorrection{.contended_efficiency = 1.01}.check().empty());
}
