// PFC accounting, ECN marking and the lossless incast (issue 3, phenomenon 1).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/core/rng.hpp"
#include "sim/net/ecn.hpp"
#include "sim/net/network.hpp"
#include "sim/net/shared_buffer_mmu.hpp"

using namespace syncsim;
using namespace syncsim::net;

namespace {

MmuPfcConfig static_pfc(int64_t xoff, int64_t xon_offset, std::vector<int64_t> headroom) {
  MmuPfcConfig c;
  c.enabled = true;
  c.lossless_mask = 1U << 3;
  c.dynamic = false;
  c.static_xoff = xoff;
  c.xon_offset = xon_offset;
  c.headroom = std::move(headroom);
  return c;
}

}  // namespace

TEST_CASE("pfc mmu: static XOFF signals PAUSE, later bytes go to headroom, overflow drops") {
  SharedBufferMmu mmu(Bytes{100'000}, 2, 8, static_pfc(10'000, 3'000, {5'000, 5'000}));
  // Headroom is reserved out of the buffer for each lossless (port, priority).
  CHECK(mmu.shared_capacity() == Bytes{90'000});
  CHECK(mmu.lossless(3));
  CHECK_FALSE(mmu.lossless(0));

  AdmitResult r = mmu.admit(0, 3, Bytes{4'000});
  CHECK(r.admission == Admission::Admitted);
  CHECK(r.pfc == PfcSignal::None);
  r = mmu.admit(0, 3, Bytes{4'000});
  CHECK(r.pfc == PfcSignal::None);
  CHECK_FALSE(mmu.xoff(0, 3));
  // 12 000 would cross XOFF: the packet lands in headroom and PAUSE is due.
  r = mmu.admit(0, 3, Bytes{4'000});
  CHECK(r.admission == Admission::Admitted);
  CHECK(r.pfc == PfcSignal::Pause);
  CHECK(mmu.xoff(0, 3));
  CHECK(mmu.headroom_used(0, 3) == Bytes{4'000});
  CHECK(mmu.ingress_bytes(0, 3) == Bytes{12'000});
  // While paused, arrivals fill headroom without a second PAUSE...
  r = mmu.admit(0, 3, Bytes{1'000});
  CHECK(r.admission == Admission::Admitted);
  CHECK(r.pfc == PfcSignal::None);
  // ...until it overflows: a lossless drop, with its own reason.
  r = mmu.admit(0, 3, Bytes{1});
  CHECK(r.admission == Admission::DroppedHeadroomExceeded);
  // The other port is independent.
  CHECK(mmu.admit(1, 3, Bytes{4'000}).pfc == PfcSignal::None);
  CHECK(mmu.used() == Bytes{17'000});

  // Release drains headroom first; RESUME only once headroom is empty and ingress <= XOFF - offset.
  CHECK(mmu.release(0, 3, Bytes{4'000}) == PfcSignal::None);  // headroom 1000 left
  CHECK(mmu.release(0, 3, Bytes{1'000}) == PfcSignal::None);  // headroom 0, shared 8000 > 7000
  CHECK(mmu.headroom_used(0, 3) == Bytes{0});
  CHECK(mmu.xoff(0, 3));
  CHECK(mmu.release(0, 3, Bytes{1'000}) == PfcSignal::Resume);  // 7000 + 3000 <= 10000
  CHECK_FALSE(mmu.xoff(0, 3));
  CHECK(mmu.release(0, 3, Bytes{7'000}) == PfcSignal::None);
  CHECK(mmu.ingress_bytes(0, 3) == Bytes{0});
}

TEST_CASE("pfc mmu: lossy priorities tail-drop at the shared capacity and never pause") {
  SharedBufferMmu mmu(Bytes{100'000}, 2, 8, static_pfc(10'000, 3'000, {5'000, 5'000}));
  CHECK(mmu.admit(0, 0, Bytes{90'000}).admission == Admission::Admitted);
  const AdmitResult r = mmu.admit(1, 0, Bytes{1});
  CHECK(r.admission == Admission::DroppedBufferFull);
  CHECK(r.pfc == PfcSignal::None);
  // A lossless packet still has its headroom when the shared part is full, and pauses.
  const AdmitResult l = mmu.admit(1, 3, Bytes{2'000});
  CHECK(l.admission == Admission::Admitted);
  CHECK(l.pfc == PfcSignal::Pause);
  CHECK(mmu.headroom_used(1, 3) == Bytes{2'000});
}

TEST_CASE("pfc mmu: the dynamic threshold is alpha times the free shared buffer") {
  MmuPfcConfig c = static_pfc(0, 1'000, {10'000, 10'000});
  c.dynamic = true;
  c.alpha = 0.5;
  SharedBufferMmu mmu(Bytes{120'000}, 2, 8, c);
  CHECK(mmu.shared_capacity() == Bytes{100'000});
  CHECK(mmu.xoff_threshold() == 50'000);
  // Lossy traffic fills the shared buffer: the lossless threshold shrinks with it.
  CHECK(mmu.admit(1, 0, Bytes{60'000}).admission == Admission::Admitted);
  CHECK(mmu.xoff_threshold() == 20'000);
  CHECK(mmu.admit(0, 3, Bytes{10'000}).pfc == PfcSignal::None);  // 10000 < 0.5 * 30000
  CHECK(mmu.xoff_threshold() == 15'000);
  CHECK(mmu.admit(0, 3, Bytes{6'000}).pfc == PfcSignal::Pause);  // 16000 > 15000: headroom
  CHECK(mmu.headroom_used(0, 3) == Bytes{6'000});
  // Freeing the lossy bytes raises the threshold: RESUME once headroom drains.
  mmu.release(1, 0, Bytes{60'000});
  CHECK(mmu.xoff_threshold() == 45'000);
  CHECK(mmu.release(0, 3, Bytes{6'000}) == PfcSignal::Resume);  // 10000 + 1000 <= 45000
}

TEST_CASE("pfc mmu: PFC off keeps the plain shared buffer") {
  SharedBufferMmu mmu(Bytes{10'000}, 2, 8);
  CHECK_FALSE(mmu.lossless(3));
  CHECK(mmu.shared_capacity() == Bytes{10'000});
  CHECK(mmu.admit(0, 3, Bytes{10'000}).pfc == PfcSignal::None);
  CHECK(mmu.admit(0, 3, Bytes{1}).admission == Admission::DroppedBufferFull);
}

TEST_CASE("pfc headroom: auto headroom follows MTU, cable and response time") {
  LinkParams link;
  link.bandwidth = Bandwidth::gbps(100);
  link.delay = Time::ns(500);
  link.mtu = Bytes{4096};
  link.header = Bytes{64};
  // 2 x 4160 (MTU_R + MTU_S) + 2 x 6250 (cable both ways) + 12500 (1 us response) + 64 (PAUSE).
  CHECK(Network::required_headroom(link, Time::us(1)) == 8'320 + 12'500 + 12'500 + 64);
  CHECK(Network::required_headroom(link, Time::zero()) == 8'320 + 12'500 + 64);
}

TEST_CASE("ecn: RED probability is exact outside [Kmin, Kmax] and linear inside") {
  const EcnMarker m(20'000, 60'000, 0.2);
  CHECK(m.probability(0) == 0.0);
  CHECK(m.probability(20'000) == 0.0);
  CHECK(m.probability(40'000) == doctest::Approx(0.1));
  CHECK(m.probability(60'000) == doctest::Approx(0.2));
  CHECK(m.probability(60'001) == 1.0);
  RngStream rng(7, 1);
  for (int i = 0; i < 1000; ++i) {
    CHECK_FALSE(m.mark(19'999, rng));
    CHECK(m.mark(70'000, rng));
  }
  // Statistically at the midpoint (p = 0.1): 200 000 draws, 5 sigma is about 0.0034.
  int marks = 0;
  const int n = 200'000;
  for (int i = 0; i < n; ++i) marks += m.mark(40'000, rng) ? 1 : 0;
  CHECK(static_cast<double>(marks) / n == doctest::Approx(0.1).epsilon(0.035));
  const EcnMarker scaled = EcnMarker(0, 1'000, 1.0);
  CHECK(scaled.probability(250) == doctest::Approx(0.25));
}

TEST_CASE("ecn: default thresholds scale with link speed (HPCC: 100/400 KB per 25 Gb/s)") {
  EcnParams e;
  const auto [kmin, kmax] = Network::ecn_thresholds(e, Bandwidth::gbps(100));
  CHECK(kmin == 400'000);
  CHECK(kmax == 1'600'000);
}

namespace {

app::Scenario incast(std::vector<app::Override> overrides = {}) {
  app::LoadOptions o;
  o.overrides = std::move(overrides);
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/incast-pfc.yaml", o);
}

uint64_t total_drops(const app::RunResult& r) {
  uint64_t n = 0;
  for (const auto& d : r.drops) n += d.second;
  return n;
}

uint64_t drops_of(const app::RunResult& r, const std::string& reason) {
  for (const auto& d : r.drops) {
    if (d.first == reason) return d.second;
  }
  return 0;
}

}  // namespace

TEST_CASE("pfc incast: lossless with PFC, lossy without it on the same buffer") {
  const app::RunResult on = app::run_scenario(incast());
  CHECK(total_drops(on) == 0);
  CHECK(on.counters.bytes_dropped == 0);
  CHECK(on.pause_frames >= 1);
  CHECK(on.resume_frames >= 1);
  CHECK(on.paused_time_s > 0);
  CHECK(on.messages_completed == on.messages);
  CHECK(on.counters.bytes_delivered == on.counters.bytes_injected);
  CHECK(on.ecn_marks > 0);
  CHECK(on.warnings.empty());

  // Pauses propagate upstream: the spine and the senders' NICs get paused, not just leaf0's peer.
  const auto paused_owner = [&](const std::string& prefix) {
    return std::any_of(on.paused_ports.begin(), on.paused_ports.end(),
                       [&](const auto& p) { return p.first.rfind(prefix, 0) == 0; });
  };
  CHECK(paused_owner("spine"));
  CHECK(paused_owner("host"));

  const app::RunResult off = app::run_scenario(incast({app::parse_override("fabric.switch.pfc.enabled=false")}));
  CHECK(drops_of(off, "buffer_full") > 0);
  CHECK(off.pause_frames == 0);
  // Without PFC the class is lossy: go-back-N retransmits, so messages complete, late.
  CHECK(off.retransmitted_packets > 0);
  CHECK(off.messages_completed == off.messages);
  // Byte conservation holds either way (out-of-order arrivals are discarded by go-back-N).
  CHECK(off.counters.bytes_injected ==
        off.counters.bytes_delivered + off.counters.bytes_dropped + off.bytes_discarded);
}

TEST_CASE("pfc incast: the victim flow is slowed by congestion spreading") {
  app::Scenario s = incast();
  const app::RunResult with = app::run_scenario(s);
  s.traffic.resize(1);  // the victim alone
  const app::RunResult alone = app::run_scenario(s);
  REQUIRE(alone.fct_by_message_s.size() == 1);
  REQUIRE(!with.fct_by_message_s.empty());
  const double victim = with.fct_by_message_s.back();  // messages in start order: the victim starts last
  MESSAGE("victim alone " << alone.fct_by_message_s[0] * 1e6 << " us, in the incast " << victim * 1e6
                          << " us");
  CHECK(victim > 2.0 * alone.fct_by_message_s[0]);
}

TEST_CASE("pfc incast: same seed twice gives identical results") {
  const app::RunResult a = app::run_scenario(incast());
  const app::RunResult b = app::run_scenario(incast());
  CHECK(a.events == b.events);
  CHECK(a.sim_time_s == b.sim_time_s);
  CHECK(a.pause_frames == b.pause_frames);
  CHECK(a.ecn_marks == b.ecn_marks);
  CHECK(a.paused_time_s == b.paused_time_s);
  CHECK(a.fct_by_message_s == b.fct_by_message_s);
}

TEST_CASE("pfc incast: headroom too small drops lossless packets loudly and warns") {
  const app::RunResult r =
      app::run_scenario(incast({app::parse_override("fabric.switch.pfc.headroom=2KB")}));
  CHECK(drops_of(r, "lossless_headroom_exceeded") > 0);
  REQUIRE(!r.warnings.empty());
  CHECK(r.warnings[0].find("headroom") != std::string::npos);
}

TEST_CASE("pfc incast: ECN thresholds above XOFF are flagged") {
  const app::RunResult r = app::run_scenario(
      incast({app::parse_override("fabric.switch.ecn={enabled: true}")}));  // 400 KB+ at 100G
  const bool flagged = std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
    return w.find("XOFF") != std::string::npos;
  });
  CHECK(flagged);
}

TEST_CASE("pfc incast: marking at enqueue also marks, and --json carries drops, pfc, ecn, warnings") {
  const app::RunResult r =
      app::run_scenario(incast({app::parse_override("fabric.switch.ecn.mark_on=enqueue")}));
  CHECK(r.ecn_marks > 0);
  CHECK(total_drops(r) == 0);
  const nlohmann::json j = app::to_json(r);
  CHECK(j["drops"]["buffer_full"] == 0);
  CHECK(j["drops"]["buffer_full_packets"] == 0);
  CHECK(j["drops"]["lossless_headroom_exceeded"] == 0);
  CHECK(j["pfc"]["pause_frames"].get<uint64_t>() == r.pause_frames);
  CHECK(j["pfc"]["paused_time_s"].get<double>() > 0);
  CHECK(j["pfc"]["top_paused_ports"].size() == 5);
  CHECK(j["pfc"]["top_paused_ports"][0]["paused_time_s"].get<double>() ==
        r.paused_ports[0].second);
  CHECK(j["ecn_marks"].get<uint64_t>() == r.ecn_marks);
  CHECK(j["warnings"].is_array());
}

TEST_CASE("pfc: with PFC and ECN off the packet model is unchanged (no pauses, no marks)") {
  const app::RunResult r = app::run_scenario(incast({app::parse_override("fabric.switch.pfc.enabled=false"),
                                                     app::parse_override("fabric.switch.ecn.enabled=false"),
                                                     app::parse_override("fabric.switch.buffer=64MiB")}));
  CHECK(total_drops(r) == 0);
  CHECK(r.pause_frames == 0);
  CHECK(r.ecn_marks == 0);
  CHECK(r.paused_time_s == 0);
  CHECK(r.messages_completed == r.messages);
}

TEST_CASE("headroom-too-small scenario: lossless drops are reported with a warning") {
  app::LoadOptions o;
  const app::RunResult r = app::run_scenario(app::load_scenario_file(
      std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/headroom-too-small.yaml", o));
  CHECK(drops_of(r, "lossless_headroom_exceeded") > 0);
  CHECK(r.counters.bytes_injected == r.counters.bytes_delivered + r.counters.bytes_dropped);
  const bool warned = std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
    return w.find("fabric.switch.pfc.headroom") != std::string::npos;
  });
  CHECK(warned);
  const std::string text = app::to_text(r);
  CHECK(text.find("lossless_headroom_exceeded") != std::string::npos);
  CHECK(text.find("warning") != std::string::npos);
}
