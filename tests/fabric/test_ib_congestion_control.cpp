// InfiniBand congestion control (sim/net/ib_congestion_control.*): the CCTI state machine by hand,
// FECN -> BECN one for one on a 2-sender incast, CCTI up to its limit, and the injection delay
// holding a switch queue down where the same incast without it builds one.
#include <doctest/doctest.h>

#include <algorithm>

#include "sim/backends/packet_backend.hpp"
#include "sim/net/ib_congestion_control.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

TEST_CASE("ib congestion control: CCTI rises per BECN to its limit, falls per timer to its min") {
  net::IbCongestionControlParams p;
  p.ccti_increase = 3;
  p.ccti_min = 1;
  p.ccti_limit = 7;
  p.cct_step = Time::ns(10);
  net::IbCcti cc(p);
  CHECK(cc.index() == 1);
  CHECK(cc.delay() == Time::ns(10));
  CHECK_FALSE(cc.above_min());
  cc.on_becn();
  CHECK(cc.index() == 4);
  cc.on_becn();
  CHECK(cc.index() == 7);
  cc.on_becn();
  CHECK(cc.index() == 7);  // at the limit
  CHECK(cc.delay() == Time::ns(70));
  for (uint32_t expected : {6U, 5U, 4U, 3U, 2U, 1U}) {
    CHECK(cc.on_timer());
    CHECK(cc.index() == expected);
  }
  CHECK_FALSE(cc.on_timer());  // not below ccti_min
  CHECK(cc.index() == 1);
}

namespace {

struct CcRun {
  net::NetworkCounters counters;
  uint32_t max_ccti[2] = {0, 0};
  Time finish = Time::zero();
};

// `senders` hosts send `size` each to host 0 on one 100G leaf with IB congestion control.
CcRun incast(uint32_t senders, int64_t size, const net::IbCongestionControlParams& cc) {
  auto p = testing::spine_leaf_100g(1, senders + 1, 1);
  auto spec = topo::build_fabric(p);
  spec.link_layer = net::LinkLayer::Infiniband;
  spec.infiniband.congestion_control = cc;
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  for (uint32_t s = 1; s <= senders; ++s) backend.start(TransferRequest{s, 0, Bytes{size}, 0});
  sim.queue().run();
  CcRun r;
  r.counters = backend.network().counters();
  if (const net::IbCongestionControl* ib = backend.network().ib_congestion_control()) {
    for (net::FlowId f = 0; f < 2 && f < backend.network().flow_count(); ++f) {
      r.max_ccti[f] = ib->max_ccti(f);
    }
  }
  for (const auto& t : backend.transfers()) {
    REQUIRE(t.done);
    r.finish = std::max(r.finish, t.finish);
  }
  return r;
}

}  // namespace

TEST_CASE("ib congestion control: every FECN gets one BECN; CCTI stops at its limit") {
  // A threshold of 1 byte marks every data packet the leaf forwards; no injection delay, so the
  // traffic itself is what it would be without congestion control.
  net::IbCongestionControlParams cc;
  cc.enabled = true;
  cc.threshold = Bytes{1};
  cc.ccti_increase = 2;
  cc.ccti_limit = 5;
  cc.ccti_timer = Time::ms(100);  // no decrease within the run
  cc.cct_step = Time::zero();
  const int64_t packets = 40;
  const CcRun r = incast(2, packets * 4096, cc);
  CHECK(r.counters.ecn_marks == 2 * packets);  // FECN on each of the 80 packets
  CHECK(r.counters.cnps == 2 * packets);       // one BECN each
  // 0 -> 2 -> 4 -> 5: both flows were still sending when their third BECN came back.
  CHECK(r.max_ccti[0] == 5);
  CHECK(r.max_ccti[1] == 5);
  CHECK(r.counters.bytes_dropped == 0);
}

TEST_CASE("ib congestion control: the injection delay keeps an 8:1 incast's queue down") {
  // The table's step scaled to 100G: a 4 KiB packet takes 333 ns here against 82 ns at 400G, so
  // 40 ns per index lets CCTI reach the 1/8 share an 8:1 incast needs (7 packet times of delay
  // per packet, 2.3 us: CCTI 58 of 127). Each flow gets a BECN only every 8th bottleneck packet
  // (2.7 us), so +4 per BECN gets there within ~40 us, before credits alone fill the leaf.
  net::IbCongestionControlParams cc;
  cc.enabled = true;
  cc.cct_step = Time::ns(40);
  cc.ccti_increase = 4;
  const int64_t size = 4'000'000;
  net::IbCongestionControlParams off = cc;
  off.enabled = false;
  const CcRun without = incast(8, size, off);
  const CcRun with = incast(8, size, cc);
  CHECK(without.counters.cnps == 0);
  CHECK(with.counters.cnps > 0);
  CHECK(with.counters.ecn_marks == with.counters.cnps);
  // Without CC the leaf's queue towards host 0 holds what the credits let in from 8 senders.
  CHECK(with.counters.max_queue_bytes < without.counters.max_queue_bytes / 2);
  MESSAGE("8:1 incast, peak queue " << with.counters.max_queue_bytes << " B with IB CC, "
                                    << without.counters.max_queue_bytes << " B without; finish "
                                    << with.finish.seconds() * 1e3 << " ms / "
                                    << without.finish.seconds() * 1e3 << " ms");
  // ... at a cost: the delays overshoot and the bottleneck idles now and then (17 % here).
  CHECK(with.finish.seconds() < 1.25 * without.finish.seconds());
}
