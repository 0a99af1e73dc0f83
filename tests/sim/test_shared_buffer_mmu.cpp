#include <doctest/doctest.h>

#include "sim/core/check.hpp"
#include "sim/net/shared_buffer_mmu.hpp"

using namespace syncsim;
using namespace syncsim::net;

TEST_CASE("shared buffer: admits up to capacity, then tail-drops; release frees space") {
  SharedBufferMmu mmu(Bytes{10'000}, 4, 8);
  CHECK(mmu.admit(0, 3, Bytes{4'000}).admission == Admission::Admitted);
  CHECK(mmu.admit(1, 3, Bytes{4'000}).admission == Admission::Admitted);
  CHECK(mmu.admit(2, 0, Bytes{4'000}).admission == Admission::DroppedBufferFull);
  CHECK(mmu.used() == Bytes{8'000});
  CHECK(mmu.ingress_bytes(0, 3) == Bytes{4'000});
  CHECK(mmu.ingress_bytes(2, 0) == Bytes{0});
  mmu.release(0, 3, Bytes{4'000});
  CHECK(mmu.admit(2, 0, Bytes{2'000}).admission == Admission::Admitted);
  CHECK(mmu.used() == Bytes{6'000});
  CHECK(mmu.peak() == Bytes{8'000});
}

TEST_CASE("shared buffer: releasing more than was admitted is an internal error") {
  SharedBufferMmu mmu(Bytes{10'000}, 2, 8);
  CHECK(mmu.admit(0, 1, Bytes{100}).admission == Admission::Admitted);
  CHECK_THROWS_AS(mmu.release(0, 1, Bytes{200}), InternalError);
  CHECK_THROWS_AS(mmu.release(1, 1, Bytes{1}), InternalError);
}
