// PFC on its own: the buffer accounting's XOFF/XON thresholds and headroom, and the headroom a port
// needs (the incast scenarios are in tests/run/test_pfc.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/net/network_spec.hpp"
#include "sim/net/pfc.hpp"
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

TEST_CASE("pfc mmu: a lossy packet may take the room of bytes leaving at its instant") {
  // The switch's tie rule (sim/net/switch.hpp): bytes whose last bit leaves as this packet arrives
  // count as free for it, to the byte, and the buffer holds the sum until their release runs.
  SharedBufferMmu mmu(Bytes{100'000}, 2, 8, static_pfc(10'000, 3'000, {5'000, 5'000}));
  CHECK(mmu.admit(0, 0, Bytes{90'000}).admission == Admission::Admitted);
  CHECK(mmu.admit(1, 0, Bytes{4'160}, Bytes{4'159}).admission == Admission::DroppedBufferFull);
  CHECK(mmu.admit(1, 0, Bytes{4'160}, Bytes{4'160}).admission == Admission::Admitted);
  CHECK(mmu.shared_used() == Bytes{94'160});
  CHECK(mmu.release(0, 0, Bytes{4'160}) == PfcSignal::None);
  CHECK(mmu.shared_used() == Bytes{90'000});
}

TEST_CASE("pfc mmu: a lossless admission that may be deferred is decided below XOFF only") {
  // A switch holding releases not yet applied asks with may_defer: a packet that stays below XOFF
  // on the bytes held now is admitted as without it; one that would PAUSE (or go to headroom)
  // changes nothing and comes back Deferred, and the switch asks again with the releases applied.
  MmuPfcConfig c = static_pfc(0, 1'000, {10'000, 10'000});
  c.dynamic = true;
  c.alpha = 0.5;
  SharedBufferMmu mmu(Bytes{120'000}, 2, 8, c);
  const AdmitResult below = mmu.admit(0, 3, Bytes{10'000}, Bytes{0}, true);
  CHECK(below.admission == Admission::Admitted);
  CHECK(below.pfc == PfcSignal::None);
  CHECK(mmu.ingress_bytes(0, 3) == Bytes{10'000});
  // 10,000 + 25,000 = 35,000 against 0.5 x (100,000 - 35,000) = 32,500 after it: would PAUSE.
  const AdmitResult near = mmu.admit(0, 3, Bytes{25'000}, Bytes{0}, true);
  CHECK(near.admission == Admission::Deferred);
  CHECK(near.pfc == PfcSignal::None);
  CHECK(mmu.ingress_bytes(0, 3) == Bytes{10'000});
  CHECK(mmu.used() == Bytes{10'000});
  CHECK_FALSE(mmu.xoff(0, 3));
  // With 8,000 of the pair's bytes released first: 27,000 against 0.5 x 73,000: admitted.
  mmu.release(0, 3, Bytes{8'000});
  const AdmitResult settled = mmu.admit(0, 3, Bytes{25'000}, Bytes{0}, true);
  CHECK(settled.admission == Admission::Admitted);
  CHECK(settled.pfc == PfcSignal::None);
  // Asked without may_defer, the crossing packet goes to headroom and PAUSEs, as always.
  const AdmitResult crossing = mmu.admit(0, 3, Bytes{10'000});
  CHECK(crossing.pfc == PfcSignal::Pause);
  // A paused pair defers every packet while may_defer is set.
  CHECK(mmu.admit(0, 3, Bytes{100}, Bytes{0}, true).admission == Admission::Deferred);
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

TEST_CASE("pfc mmu: a port whose sender bounds itself is never dropped for headroom") {
  // An engine inside the switch (in_switch_engine.hpp) is never paused: past XOFF its packets land
  // in headroom without a limit, while the other port's headroom still overflows; the shared part
  // keeps the reservation made for both.
  SharedBufferMmu mmu(Bytes{100'000}, 2, 8, static_pfc(10'000, 3'000, {5'000, 5'000}));
  mmu.unbounded_headroom(1);
  CHECK(mmu.shared_capacity() == Bytes{90'000});
  for (int i = 0; i < 20; ++i) {
    CHECK(mmu.admit(1, 3, Bytes{4'000}).admission == Admission::Admitted);
  }
  // Two packets below XOFF in the shared part, the other 18 in headroom (5,000 B for port 0).
  CHECK(mmu.headroom_used(1, 3) == Bytes{72'000});
  CHECK(mmu.admit(0, 3, Bytes{10'000}).admission == Admission::Admitted);
  CHECK(mmu.admit(0, 3, Bytes{5'000}).admission == Admission::Admitted);
  CHECK(mmu.admit(0, 3, Bytes{1}).admission == Admission::DroppedHeadroomExceeded);
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
  CHECK(required_headroom(link, Time::us(1)) == 8'320 + 12'500 + 12'500 + 64);
  CHECK(required_headroom(link, Time::zero()) == 8'320 + 12'500 + 64);
}
