// A switch port that starts a lossy packet with nothing behind it hands it to the link at once
// (sim/net/egress_port.hpp) and releases its buffer when its last bit leaves (Switch::release_at
// pending in the port, applied before the decisions that read the buffer). The tie rule
// (sim/net/switch.hpp): a lossy packet arriving at the instant another one's last bit leaves finds
// that one's room free, handed over or not. Checked here on buffers sized to the byte, where the
// rule alone decides whether a packet is dropped.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "sim/backends/packet_backend.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

constexpr int64_t kWire = 4096 + 64;  // a full packet on the wire, as the buffer charges it

struct Outcome {
  uint64_t packets_dropped = 0;
  uint64_t events = 0;
  uint64_t packet_hops = 0;
};

// One leaf (100 Gb/s, 1 us cables: longer than a packet's 0.33 us, so each sender's packets are on
// the wire back to back); host h sends packets[h] full packets to the host after the senders, all
// at t = 0.
Outcome incast(const std::vector<int64_t>& packets, int64_t buffer_bytes) {
  const auto hosts = static_cast<uint32_t>(packets.size() + 1);
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(1, hosts, 1, Bytes{buffer_bytes}));
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  for (uint32_t h = 0; h + 1 < hosts; ++h) {
    backend.start(TransferRequest{h, hosts - 1, Bytes{4096 * packets[h]}, 0});
  }
  sim.queue().run();
  for (const auto& t : backend.transfers()) REQUIRE(t.done);
  Outcome o;
  o.packets_dropped = backend.counters().dropped(net::DropReason::BufferFull);
  o.events = sim.queue().executed();
  o.packet_hops = backend.counters().packet_hops;
  return o;
}

}  // namespace

TEST_CASE("hand-over: a packet arriving as the one handed over leaves finds its room") {
  // One sender, a buffer of one packet: each packet arrives at the instant the one before it
  // leaves, which was handed over at its start (nothing behind it). Its release is due then.
  // (Its bound is checked below: a buffer a byte short of a packet would drop every packet, and the
  // transport would retry forever.)
  CHECK(incast({4}, kWire).packets_dropped == 0);
}

TEST_CASE("hand-over: a packet arriving as one in service leaves finds its room") {
  // A sends three packets, B one, into one port (t1: the first arrivals; tx: a packet's time):
  // t1: A1 (1 held, handed over), B1 (2, waits); t1 + tx: A1 leaves (1), A2 arrives (2), B1 starts
  // with A2 behind it, so its end is an event at t1 + 2 tx, scheduled after A3's arrival at that
  // instant (A3's was scheduled as A2 arrived, before B1 started). At t1 + 2 tx: 2 - 1 + 1 = 2
  // packets. Two packets of buffer hold them only if B1's room is free for A3 before B1's end runs.
  CHECK(incast({3, 1}, 2 * kWire).packets_dropped == 0);
  // A byte less drops (A2 at t1 + tx already).
  CHECK(incast({3, 1}, 2 * kWire - 1).packets_dropped > 0);
}

TEST_CASE("hand-over: a packet with nothing behind it costs its port no event") {
  // One sender, 64 packets through one leaf: the host's port ends each packet with an event (it
  // pulls the next), the leaf's port hands each over at its start; each packet's arrival at the
  // leaf and at the host is one event. So three events per data packet, not four, plus the ACKs'
  // (one per 16 data packets by default, two hops each: the leaf hands those over too).
  const Outcome o = incast({64}, 64 << 20);
  CHECK(o.packets_dropped == 0);
  CHECK(o.packet_hops == 2 * 64 + 2 * 4);
  // Data: 64 x 3 events; ACKs: 4 x (host end + leaf arrival + host arrival) = 12; the transfer's
  // start and completion events on top.
  CHECK(o.events <= 64 * 3 + 4 * 3 + 4);
  CHECK(o.events >= 64 * 3 + 4 * 3);
}
