// A persistent queue pair's send queue (sim/net/send_queue.hpp): its messages leave in the order
// they were posted, each after the last new packet of the previous one, with PSNs running on across
// them; messages of different queue pairs (and flows of their own) interleave at the NIC as before.
#include <doctest/doctest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "sim/net/network.hpp"
#include "sim/net/send_queue.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

constexpr int64_t kMtu = 4096;
constexpr uint8_t kLossless = 3;       // PfcParams' default lossless class
constexpr std::size_t kMessages = 12;  // the loss test's

// The transports a queue pair's messages can run on between two hosts under one leaf.
enum class Path { Plain, GoBackN, Lossless, Infiniband, Tcp };
const char* name(Path p) {
  switch (p) {
    case Path::Plain:
      return "plain (no transport)";
    case Path::GoBackN:
      return "go-back-N, lossy class";
    case Path::Lossless:
      return "RC on a PFC class";
    case Path::Infiniband:
      return "InfiniBand RC";
    case Path::Tcp:
      return "TCP";
  }
  return "?";
}

net::NetworkSpec two_hosts(Path path) {
  net::NetworkSpec spec = topo::build_fabric(testing::spine_leaf_100g(1, 2, 1));
  switch (path) {
    case Path::Plain:
      spec.transport.gbn.enabled = false;
      break;
    case Path::GoBackN:
      break;
    case Path::Lossless:
      spec.pfc.enabled = true;
      break;
    case Path::Infiniband:
      spec.link_layer = net::LinkLayer::Infiniband;
      break;
    case Path::Tcp:
      spec.transport.kind = net::TransportKind::Tcp;
      spec.transport.tcp.initial_window = 1000;  // the window never holds a message back here
      break;
  }
  return spec;
}

uint8_t priority_of(Path path) { return path == Path::Lossless ? kLossless : 0; }

class Recorder : public net::FlowCompletionHandler {
 public:
  std::vector<Time> finish;
  void on_flow_complete(net::FlowId flow, const net::FlowRecord& r) override {
    if (finish.size() <= flow) finish.resize(flow + 1, Time::max());
    finish[flow] = r.finish;
  }
};

// Samples the flows' sent bytes every `period` until `until`: when each first sent a packet and
// when each first had sent every byte (Time::max() if never seen).
struct SendTimes {
  std::vector<Time> first;
  std::vector<Time> all;
};
void watch(Simulation& sim, const net::Network& n, std::size_t flows, Time period, Time until,
           SendTimes& t) {
  t.first.assign(flows, Time::max());
  t.all.assign(flows, Time::max());
  for (Time at = Time::zero(); at < until; at = at + period) {
    sim.queue().schedule_fn(at, [&n, &sim, &t] {
      for (net::FlowId f = 0; f < t.first.size() && f < n.flow_count(); ++f) {
        const net::FlowRecord& r = n.flow(f);
        if (r.sent_bytes > 0 && t.first[f] == Time::max()) t.first[f] = sim.now();
        if (r.sent_bytes == r.size_bytes && t.all[f] == Time::max()) t.all[f] = sim.now();
      }
    });
  }
}

// A data packet's serialization at 100 Gb/s (4096 B + 64 B of header).
const int64_t kPacketPs = Bandwidth::gbps(100).tx_time(Bytes{kMtu + 64}).picoseconds();

}  // namespace

TEST_CASE("send queue: two messages posted at once on one queue pair leave in order") {
  // 50 packets each, both posted at t = 0. In order, the first is delivered 50 packet times (plus
  // one hop's serialization and the two cables) after it starts and the second 50 packet times
  // later; interleaved by the NIC, the first would finish one packet before the second.
  constexpr int64_t kPackets = 50;
  const int64_t wire = 2 * Time::us(1).picoseconds() + kPacketPs;  // leaf hop + two cables
  for (const Path path :
       {Path::Plain, Path::GoBackN, Path::Lossless, Path::Infiniband, Path::Tcp}) {
    CAPTURE(std::string(name(path)));
    const net::NetworkSpec spec = two_hosts(path);
    Simulation sim(1);
    net::Network n(sim, spec);
    Recorder rec;
    n.set_completion_handler(&rec);
    const net::NodeId a = spec.gpus[0].nic;
    const net::NodeId b = spec.gpus[1].nic;
    n.start_flow(a, b, Bytes{kPackets * kMtu}, priority_of(path), 7, true);
    n.start_flow(a, b, Bytes{kPackets * kMtu}, priority_of(path), 7, true);
    SendTimes t;
    watch(sim, n, 2, Time::ps(kPacketPs / 4), Time::us(20), t);
    sim.queue().run();
    REQUIRE(rec.finish.size() == 2);
    CHECK(n.flow(0).done);
    CHECK(n.flow(1).done);
    // The second message's first packet leaves only once the first has sent its last one.
    CHECK(t.all[0] < Time::max());
    CHECK(t.first[1] >= t.all[0]);
    const int64_t f0 = rec.finish[0].picoseconds();
    const int64_t f1 = rec.finish[1].picoseconds();
    CHECK(std::abs(f0 - (kPackets * kPacketPs + wire)) < kPacketPs / 2);
    CHECK(std::abs(f1 - (2 * kPackets * kPacketPs + wire)) < kPacketPs / 2);
    // PSNs run on across the queue pair's messages.
    CHECK(n.flow(0).first_psn == 0);
    CHECK(n.flow(1).first_psn == kPackets);
    CHECK(n.send_queues().size() == 1);
  }
}

TEST_CASE("send queue: other queue pairs and flows of their own interleave as before") {
  // The same two messages on two persistent queue pairs, or as two flows without one (naming the
  // same number): the NIC's round robin alternates their packets, so both finish together.
  constexpr int64_t kPackets = 50;
  const int64_t wire = 2 * Time::us(1).picoseconds() + kPacketPs;
  for (const Path path : {Path::Plain, Path::GoBackN, Path::Tcp}) {
    for (const bool persistent : {true, false}) {
      CAPTURE(std::string(name(path)));
      CAPTURE(persistent);
      const net::NetworkSpec spec = two_hosts(path);
      Simulation sim(1);
      net::Network n(sim, spec);
      Recorder rec;
      n.set_completion_handler(&rec);
      const net::NodeId a = spec.gpus[0].nic;
      const net::NodeId b = spec.gpus[1].nic;
      n.start_flow(a, b, Bytes{kPackets * kMtu}, 0, 7, persistent);
      n.start_flow(a, b, Bytes{kPackets * kMtu}, 0, persistent ? 8 : 7, persistent);
      SendTimes t;
      watch(sim, n, 2, Time::ps(kPacketPs / 4), Time::us(20), t);
      sim.queue().run();
      REQUIRE(rec.finish.size() == 2);
      CHECK(t.first[1] < t.all[0]);
      CHECK(std::abs(rec.finish[0].picoseconds() - ((2 * kPackets - 1) * kPacketPs + wire)) <
            kPacketPs / 2);
      CHECK(std::abs(rec.finish[1].picoseconds() - (2 * kPackets * kPacketPs + wire)) <
            kPacketPs / 2);
      CHECK(n.flow(1).first_psn == 0);
      CHECK(n.send_queues().size() == (persistent ? 2U : 0U));
    }
  }
}

TEST_CASE("send queue: losses on a lossless class with messages queued; the same run twice") {
  // RC on a PFC class with 2 % of packets lost on every link (a faulty cable: PFC cannot prevent
  // it): 6 messages posted at once on one queue pair, and as each finishes another one. Go-back-N
  // recovers every loss (NAK or the RC ACK timeout, 100 us here); every message completes, each
  // starts only after its predecessor sent its packets, and a second run with the same seed is
  // bit-identical.
  struct Run {
    std::vector<Time> finish;
    SendTimes sends;
    net::NetworkCounters counters;
  };
  auto run = [] {
    net::NetworkSpec spec = two_hosts(Path::Lossless);
    spec.impairments.loss_probability = 0.02;
    spec.impairments.loss_on_lossless = true;
    spec.transport.gbn.lossless_timeout = Time::us(100);
    spec.transport.gbn.lossless_retry_count = 1000;
    Simulation sim(5);
    net::Network n(sim, spec);
    Recorder rec;
    const net::NodeId a = spec.gpus[0].nic;
    const net::NodeId b = spec.gpus[1].nic;
    auto post = [&](int64_t packets) {
      n.start_flow(a, b, Bytes{packets * kMtu - 100}, kLossless, 7, true);
    };
    struct Then : net::FlowCompletionHandler {
      Recorder* rec = nullptr;
      std::function<void()> post_next;
      void on_flow_complete(net::FlowId flow, const net::FlowRecord& r) override {
        rec->on_flow_complete(flow, r);
        if (flow < kMessages / 2) post_next();
      }
    } then;
    then.rec = &rec;
    int64_t next_size = 30;
    then.post_next = [&] { post(next_size++); };
    n.set_completion_handler(&then);
    for (int i = 0; i < 6; ++i) post(20 + 5 * i);
    Run r;
    watch(sim, n, kMessages, Time::ps(kPacketPs / 4), Time::ms(5), r.sends);
    sim.queue().run();
    REQUIRE(n.flow_count() == kMessages);
    for (net::FlowId f = 0; f < kMessages; ++f) CHECK(n.flow(f).done);
    r.finish = rec.finish;
    r.counters = n.counters();
    return r;
  };
  const Run first = run();
  const net::NetworkCounters& c = first.counters;
  MESSAGE("retransmitted " << c.retransmitted_packets << ", timeouts " << c.timeouts
                           << ", RC recoveries " << c.rc_recoveries);
  CHECK(c.retransmitted_packets > 0);
  CHECK(c.rc_recoveries > 0);
  CHECK(c.rc_retry_exceeded == 0);
  // The first six were posted together: each starts only after its predecessor has had a packet
  // time for each of its packets (20 + 5 m). Interleaved, all six would start in the first
  // microseconds. (Sampling when the predecessor had sent everything is not exact under loss: a
  // NAK can rewind it right after its last new packet.)
  for (std::size_t m = 1; m < 6; ++m) {
    CAPTURE(m);
    const int64_t predecessor_packets = 20 + 5 * static_cast<int64_t>(m - 1);
    CHECK(first.sends.first[m].picoseconds() - first.sends.first[m - 1].picoseconds() >=
          (predecessor_packets - 1) * kPacketPs);
  }
  const Run second = run();
  CHECK(second.finish == first.finish);
  CHECK(second.counters.retransmitted_packets == c.retransmitted_packets);
  CHECK(second.counters.bytes_delivered == c.bytes_delivered);
}

TEST_CASE("send queue: PSNs run on across a queue pair's messages and wrap at 24 bits") {
  net::FlowTable flows;
  for (int i = 0; i < 4; ++i) flows.add(net::FlowRecord{});
  net::SendQueueTable t;
  const uint32_t q = t.open(0, 1, 3, 7);
  CHECK(t.open(0, 1, 3, 7) == q);
  CHECK(t.open(1, 0, 3, 7) != q);  // the reverse direction
  CHECK(t.open(0, 1, 0, 7) != q);  // another class
  CHECK(t.open(0, 1, 3, 8) != q);  // another number
  const uint64_t big = (uint64_t{1} << 23) + 5;
  CHECK(t.post(q, 0, big, flows));
  CHECK_FALSE(t.post(q, 1, big, flows));
  CHECK_FALSE(t.post(q, 2, 3, flows));
  CHECK(flows[0].first_psn == 0);
  CHECK(flows[1].first_psn == big);
  CHECK(flows[2].first_psn == 10);  // 2^24 + 10 wraps to 10
  CHECK(flows[1].queued);
  CHECK(t.advance(0, flows) == 1);
  CHECK_FALSE(flows[1].queued);
  CHECK(flows[2].queued);
  CHECK(t.advance(1, flows) == 2);
  CHECK(t.advance(2, flows) == net::kNoFlow);
  CHECK(t[q].head == net::kNoFlow);
  // An idle queue pair's next message is its head at once, its PSNs where the last one left them.
  CHECK(t.post(q, 3, 1, flows));
  CHECK(flows[3].first_psn == 13);
}
