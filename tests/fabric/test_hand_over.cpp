// A switch port that starts a packet with nothing behind it hands it to the link at once
// (sim/net/egress_port.hpp) and releases its buffer when its last bit leaves (Switch::release_at
// pending in the port, applied before the decisions that read the buffer). The tie rule
// (sim/net/switch.hpp): a lossy packet arriving at the instant another one's last bit leaves finds
// that one's room free, handed over or not. Checked here on buffers sized to the byte, where the
// rule alone decides whether a packet is dropped. A lossless packet is handed over while its
// ingress has no PAUSE outstanding, and a PAUSE pins its release to an event: checked against runs
// with every transmission end an event (NetworkSpec::Execution::hand_over off).
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
  net::NetworkCounters counters;
  std::vector<int64_t> finish_ps;  // per transfer
};

// PFC on priority 3 with a static XOFF of `xoff_packets` full packets (0: PFC off, priority 0).
struct Lossless {
  int64_t xoff_packets = 0;
  bool hand_over = true;
  std::vector<int64_t> host_gbps{};  // host h's cable at host_gbps[h] Gb/s (missing: 100)
};

struct Send {
  uint32_t src = 0;
  uint32_t dst = 0;
  int64_t packets = 0;
};

// One leaf of `hosts` hosts (100 Gb/s, 1 us cables: longer than a packet's 0.33 us, so each
// sender's packets are on the wire back to back); every send starts at t = 0.
Outcome run(uint32_t hosts, const std::vector<Send>& sends, int64_t buffer_bytes,
            const Lossless& pfc) {
  auto spec = topo::build_fabric(testing::spine_leaf_100g(1, hosts, 1, Bytes{buffer_bytes}));
  uint8_t priority = 0;
  if (pfc.xoff_packets > 0) {
    spec.pfc.enabled = true;  // priority 3
    spec.pfc.dynamic_threshold = false;
    spec.pfc.static_xoff = Bytes{pfc.xoff_packets * kWire};
    priority = 3;
  }
  spec.execution.hand_over = pfc.hand_over;
  for (uint32_t h = 0; h < pfc.host_gbps.size(); ++h) {
    const net::NodeId nic = spec.gpus[h].nic;
    for (net::LinkSpec& link : spec.links) {
      if (link.a != nic && link.b != nic) continue;
      net::LinkParams cable = spec.link_classes[link.link_class];
      cable.bandwidth = Bandwidth::gbps(pfc.host_gbps[h]);
      spec.link_classes.push_back(cable);
      link.link_class = static_cast<uint32_t>(spec.link_classes.size() - 1);
    }
  }
  Simulation sim(1);
  PacketBackend backend(sim, spec);
  for (const Send& send : sends) {
    backend.start(TransferRequest{send.src, send.dst, Bytes{4096 * send.packets}, priority});
  }
  sim.queue().run();
  Outcome o;
  for (const auto& t : backend.transfers()) {
    REQUIRE(t.done);
    o.finish_ps.push_back(t.finish.picoseconds());
  }
  o.packets_dropped = backend.counters().dropped(net::DropReason::BufferFull);
  o.events = sim.queue().executed();
  o.packet_hops = backend.counters().packet_hops;
  o.counters = backend.counters();
  return o;
}

// Host h sends packets[h] full packets to the host after the senders.
Outcome incast(const std::vector<int64_t>& packets, int64_t buffer_bytes,
               const Lossless& pfc = {}) {
  const auto hosts = static_cast<uint32_t>(packets.size() + 1);
  std::vector<Send> sends;
  for (uint32_t h = 0; h + 1 < hosts; ++h) sends.push_back(Send{h, hosts - 1, packets[h]});
  return run(hosts, sends, buffer_bytes, pfc);
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

TEST_CASE("hand-over: a lossless packet with nothing behind it costs its port no event either") {
  // As above on a PFC-protected priority (whose go-back-N sends no ACKs here): the leaf's port
  // hands each packet over while its ingress has no PAUSE outstanding (never, here).
  const Outcome o = incast({64}, 64 << 20, Lossless{64});
  CHECK(o.counters.pause_frames == 0);
  CHECK(o.packet_hops == 2 * 64);
  CHECK(o.events <= 64 * 3 + 4);
  const Outcome every_end = incast({64}, 64 << 20, Lossless{64, false});
  CHECK(every_end.events == o.events + 64);
  CHECK(every_end.finish_ps == o.finish_ps);
}

TEST_CASE("hand-over: a PAUSE pins its ingress's pending releases; RESUMEs as without hand-over") {
  // Host 0 sends to host 3 (alone: the leaf hands those packets over) and, with hosts 1 and 2, to
  // host 4 (three into one: queued); XOFF at 3 packets per ingress. Host 0's ingress crosses XOFF
  // on its packets queued for host 4 while one of its packets to host 3 may be leaving by
  // hand-over: that one's release must run at its last bit (a kRelease event), so that the RESUME
  // goes out when it would at a transmission end. Pausing and resuming at the same instants, the
  // run is the one with every transmission end an event: same PAUSEs, RESUMEs and finish times.
  const std::vector<Send> sends{{0, 3, 40}, {0, 4, 40}, {1, 4, 33}, {2, 4, 27}};
  const std::vector<int64_t> gbps{100, 97, 98, 60, 100};
  const Outcome handed = run(5, sends, 64 << 20, Lossless{3, true, gbps});
  const Outcome every_end = run(5, sends, 64 << 20, Lossless{3, false, gbps});
  CHECK(handed.counters.pause_frames > 0);
  CHECK(handed.counters.pinned_releases > 0);
  CHECK(every_end.counters.pinned_releases == 0);
  CHECK(handed.counters.pause_frames == every_end.counters.pause_frames);
  CHECK(handed.counters.resume_frames == every_end.counters.resume_frames);
  CHECK(handed.counters.dropped(net::DropReason::LosslessHeadroomExceeded) == 0);
  CHECK(handed.finish_ps == every_end.finish_ps);
  CHECK(handed.events < every_end.events);
}
