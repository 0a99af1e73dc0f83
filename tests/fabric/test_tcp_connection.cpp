// TCP connections (sim/net/tcp_connection.hpp): the messages of a persistent queue pair share one
// congestion window that outlives them, restarted after idle as Linux does; other flows keep a
// window of their own. Timings against the slow-start rounds computed by hand.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <vector>

#include "sim/net/network.hpp"
#include "sim/net/tcp.hpp"
#include "sim/net/tcp_connection.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

// Two hosts under one leaf, 100G, 25 us cables: a round trip (~100 us) far longer than a window's
// serialization, so slow start proceeds in separate rounds. TCP (Reno, no ECN), IW 10, RTOmin 1 ms.
net::NetworkSpec two_hosts() {
  topo::FabricParams p = testing::spine_leaf_100g(1, 2, 1);
  p.links.host.delay = Time::us(25);
  p.links.fabric.delay = Time::us(25);
  net::NetworkSpec spec = topo::build_fabric(p);
  spec.transport.kind = net::TransportKind::Tcp;
  spec.transport.tcp.cc = net::TcpCongestionControl::Reno;
  spec.transport.tcp.initial_window = 10;
  spec.transport.tcp.rto_min = Time::ms(1);
  return spec;
}

constexpr int64_t kMtu = 4096;
constexpr uint32_t kQp = 7;

// Closed form, written independently of the model. s: a data packet's serialization (4096 + 64 B at
// 100 Gb/s), a: an ACK's (64 B), d: one cable. The first packet of a window leaves the NIC at t,
// reaches the receiver at t + 2s + 2d (store and forward at the leaf); its ACK is back at
// t + s + (s + 4d + 2a). In slow start every ACK opens the window by 2 packets while ACKs arrive
// one packet time apart, so each round goes out back to back and the next round starts one (s +
// rtt0) after the previous one. A message sent in rounds W_1..W_k (the last one partial) is
// delivered (k - 1)(s + rtt0) + W_k s + s + 2d after it starts.
struct Rounds {
  int64_t s = Bandwidth::gbps(100).tx_time(Bytes{kMtu + 64}).picoseconds();
  int64_t a = Bandwidth::gbps(100).tx_time(Bytes{64}).picoseconds();
  int64_t d = Time::us(25).picoseconds();
  int64_t rtt0() const { return s + 4 * d + 2 * a; }
  // Delivery time of `packets` sent in slow start from window `window`, doubling per round.
  int64_t fct_ps(int64_t packets, int64_t window) const {
    int64_t rounds = 0;
    int64_t last = 0;
    while (packets > 0) {
      last = std::min(window, packets);
      packets -= last;
      window *= 2;
      ++rounds;
    }
    return (rounds - 1) * (s + rtt0()) + last * s + s + 2 * d;
  }
};

class Recorder : public net::FlowCompletionHandler {
 public:
  std::function<void(net::FlowId)> then;
  std::vector<Time> finish;
  void on_flow_complete(net::FlowId flow, const net::FlowRecord& r) override {
    if (finish.size() <= flow) finish.resize(flow + 1, Time::max());
    finish[flow] = r.finish;
    if (then) then(flow);
  }
};

const net::Tcp& tcp_of(const net::Network& n) {
  const auto* tcp = dynamic_cast<const net::Tcp*>(n.transport());
  REQUIRE(tcp != nullptr);
  return *tcp;
}

}  // namespace

TEST_CASE("tcp connection: Linux's restart after idle, by hand") {
  const int64_t rto = Time::ms(1).picoseconds();
  net::TcpConnection c;
  c.cwnd = 160.7;
  c.ssthresh = 50;
  net::restart_after_idle(c, rto, rto, 10);  // not longer than the RTO: untouched
  CHECK(c.cwnd == 160.7);
  CHECK(c.ssthresh == 50);
  // 2.5 RTOs: ssthresh >= 160 / 2 + 160 / 4 = 120, then 160 -> 80 -> 40 (delta 1.5, 0.5 RTO > 0).
  net::restart_after_idle(c, rto * 5 / 2, rto, 10);
  CHECK(c.cwnd == 40);
  CHECK(c.ssthresh == 120);
  // 10 RTOs: 40 -> 20 -> 10, stopped at the restart window min(IW, cwnd) = 10.
  net::restart_after_idle(c, 10 * rto, rto, 10);
  CHECK(c.cwnd == 10);
  CHECK(c.ssthresh == 120);
  // A window below IW restarts at itself (min(IW, cwnd)); ssthresh keeps the larger value.
  c.cwnd = 6;
  c.ssthresh = 2;
  net::restart_after_idle(c, 5 * rto, rto, 10);
  CHECK(c.cwnd == 6);
  CHECK(c.ssthresh == 4);  // 6 / 2 + 6 / 4 = 3 + 1
}

TEST_CASE("tcp connection: a persistent connection's next message starts with the grown window") {
  const Rounds r;
  const int64_t packets = 150;  // IW 10: rounds of 10, 20, 40, 80
  for (const bool persistent : {true, false}) {
    CAPTURE(persistent);
    const net::NetworkSpec spec = two_hosts();
    Simulation sim(1);
    net::Network n(sim, spec);
    Recorder rec;
    Time second_start = Time::max();
    rec.then = [&](net::FlowId f) {
      if (f != 0) return;
      second_start = sim.now();  // back to back: idle far below the RTO
      n.start_flow(spec.gpus[0].nic, spec.gpus[1].nic, Bytes{packets * kMtu}, 0, kQp, persistent);
    };
    n.set_completion_handler(&rec);
    n.start_flow(spec.gpus[0].nic, spec.gpus[1].nic, Bytes{packets * kMtu}, 0, kQp, persistent);
    sim.queue().run();
    REQUIRE(rec.finish.size() == 2);
    const int64_t first = rec.finish[0].picoseconds();
    const int64_t second = rec.finish[1].picoseconds() - second_start.picoseconds();
    const int64_t slack = 3 * r.s;  // event ordering at round boundaries
    CHECK(std::abs(first - r.fct_ps(packets, 10)) <= slack);
    if (persistent) {
      // When B starts, A's last round (80 packets) is in flight and fills A's window (10 + 70);
      // each of its ACKs then opens 2 packets for B, so B's 150 go out back to back from A's
      // first last-round ACK on: the two messages are one 300-packet slow start, rounds 10, 20,
      // 40, 80 and 150 of 160 (a fresh window would take B another four rounds).
      CHECK(std::abs(rec.finish[1].picoseconds() - r.fct_ps(2 * packets, 10)) <= slack);
      CHECK(second < first / 2);
      CHECK(tcp_of(n).connection_of(1).cwnd == 10 + 2 * packets);
    } else {
      CHECK(second == first);  // a fresh connection: the same slow start, to the picosecond
    }
    CHECK(n.counters().retransmitted_packets == 0);
  }
}

TEST_CASE("tcp connection: after idle longer than the RTO the window restarts as Linux's") {
  const Rounds r;
  const int64_t packets = 150;  // cwnd 160 after the first message (IW 10 + 150 ACKed)
  // idle (from the first message's last packet sent to the second's start) -> the second's window:
  // 2.5 ms = 2.5 RTOs -> 160 / 4 = 40 (rounds 40, 80, 30); 10 ms -> IW 10 (rounds 10, 20, 40, 80).
  struct Case {
    Time gap;
    int64_t window;
  };
  for (const Case k : {Case{Time::us(2500), 40}, Case{Time::ms(10), 10}}) {
    CAPTURE(k.gap.picoseconds());
    const net::NetworkSpec spec = two_hosts();
    Simulation sim(1);
    net::Network n(sim, spec);
    Recorder rec;
    Time second_start = Time::max();
    rec.then = [&](net::FlowId f) {
      if (f != 0) return;
      second_start = sim.now() + k.gap;
      sim.queue().schedule_fn(second_start, [&] {
        n.start_flow(spec.gpus[0].nic, spec.gpus[1].nic, Bytes{packets * kMtu}, 0, kQp, true);
        // The restarted window, before anything is sent.
        CHECK(tcp_of(n).connection_of(1).cwnd == static_cast<double>(k.window));
      });
    };
    n.set_completion_handler(&rec);
    n.start_flow(spec.gpus[0].nic, spec.gpus[1].nic, Bytes{packets * kMtu}, 0, kQp, true);
    sim.queue().run();
    REQUIRE(rec.finish.size() == 2);
    const int64_t second = rec.finish[1].picoseconds() - second_start.picoseconds();
    CHECK(std::abs(second - r.fct_ps(packets, k.window)) <= 3 * r.s);
  }
}

TEST_CASE("tcp connection: concurrent messages on one connection share its window") {
  const Rounds r;
  // Each; together 130 = rounds 10, 20, 40, 60; alone 10, 20, 35. The connection sends its
  // messages in order (sim/net/send_queue.hpp): the second starts in round 3, after the first's
  // last packet, and shares that round's window with it.
  const int64_t packets = 65;
  for (const bool persistent : {true, false}) {
    CAPTURE(persistent);
    const net::NetworkSpec spec = two_hosts();
    Simulation sim(1);
    net::Network n(sim, spec);
    Recorder rec;
    n.set_completion_handler(&rec);
    n.start_flow(spec.gpus[0].nic, spec.gpus[1].nic, Bytes{packets * kMtu}, 0, kQp, persistent);
    n.start_flow(spec.gpus[0].nic, spec.gpus[1].nic, Bytes{packets * kMtu}, 0, kQp, persistent);
    const net::Tcp& tcp = tcp_of(n);
    CHECK((&tcp.connection_of(0) == &tcp.connection_of(1)) == persistent);
    // Every 100 ns: the packets sent and not yet delivered (FlowTable's counts, not the
    // transport's) of both messages together never exceed the shared window.
    int samples_both = 0;
    int samples_full = 0;
    int64_t worst_excess = INT64_MIN;
    for (int64_t t = 0; t < Time::ms(1).picoseconds(); t += 100'000) {
      sim.queue().schedule_fn(Time::ps(t), [&] {
        int64_t on_wire = 0;
        int busy = 0;
        for (net::FlowId f = 0; f < 2; ++f) {
          const net::FlowRecord& fr = n.flow(f);
          const int64_t w = (fr.sent_bytes - fr.delivered_bytes) / kMtu;
          on_wire += w;
          busy += w > 0 ? 1 : 0;
        }
        const auto cwnd = static_cast<int64_t>(tcp.connection_of(0).cwnd);
        // The flight the connection keeps as PSNs move is the one counted afresh.
        CHECK(tcp.connection_of(0).in_flight == tcp.count_in_flight(tcp.connection_of(0)));
        if (persistent) {
          worst_excess = std::max(worst_excess, on_wire - cwnd);
          if (busy == 2) ++samples_both;
          if (on_wire >= cwnd - 1) ++samples_full;
        }
      });
    }
    sim.queue().run();
    REQUIRE(rec.finish.size() == 2);
    const int64_t last = std::max(rec.finish[0], rec.finish[1]).picoseconds();
    if (persistent) {
      CHECK(worst_excess <= 0);
      CHECK(samples_both > 10);  // both messages were on the wire together
      CHECK(samples_full > 10);  // and the window held them back
      // One window for 130 packets: four rounds.
      CHECK(std::abs(last - r.fct_ps(2 * packets, 10)) <= 3 * r.s);
      CHECK(tcp.connection_of(0).cwnd == 10 + 2 * packets);
      CHECK(tcp.connection_of(0).messages.empty());
    } else {
      // Two windows of 10, interleaved on the NIC: rounds of 20, 40 and 80 packets, one round
      // fewer.
      CHECK(std::abs(last - r.fct_ps(2 * packets, 20)) <= 3 * r.s);
    }
  }
}

TEST_CASE("tcp connection: shared windows under loss and ECN deliver every message once") {
  // Four senders under leaf 1 -> host 0 under leaf 0 (an incast through one 100G port), each with
  // 6 messages in flight at once on one persistent connection, plus 6 more started as each of the
  // first finishes; 2% of packets lost on every link, ECN marking, DCTCP. Losses hit messages of a
  // shared window (fast retransmit, partial ACKs, timeouts with the others' packets in flight): all
  // must complete, every byte delivered once, and the connection's flight must end at zero.
  topo::FabricParams p = testing::spine_leaf_100g(2, 4, 1, Bytes{1 << 20});
  net::NetworkSpec spec = topo::build_fabric(p);
  spec.transport.kind = net::TransportKind::Tcp;
  spec.transport.tcp.rto_min = Time::ms(1);
  spec.ecn.enabled = true;
  spec.ecn.kmin_auto = spec.ecn.kmax_auto = false;
  spec.ecn.kmin = Bytes{20'000};
  spec.ecn.kmax = Bytes{60'000};
  spec.impairments.loss_probability = 0.02;
  Simulation sim(3);
  net::Network n(sim, spec);
  Recorder rec;
  const net::NodeId dst = spec.gpus[0].nic;
  int64_t started_bytes = 0;
  int second_wave = 0;
  auto start = [&](uint32_t sender, int64_t size) {
    started_bytes += size;
    n.start_flow(spec.gpus[4 + sender].nic, dst, Bytes{size}, 0, kQp + sender, true);
  };
  rec.then = [&](net::FlowId f) {
    if (f < 24) {
      ++second_wave;
      start(f % 4, 300'000 + 1000 * static_cast<int64_t>(f));
    }
  };
  n.set_completion_handler(&rec);
  for (uint32_t i = 0; i < 6; ++i) {
    for (uint32_t sender = 0; sender < 4; ++sender) start(sender, 200'000 + 4096 * i);
  }
  sim.queue().run();
  REQUIRE(n.flow_count() == 48);
  CHECK(second_wave == 24);
  for (net::FlowId f = 0; f < 48; ++f) CHECK(n.flow(f).done);
  const net::NetworkCounters& c = n.counters();
  MESSAGE("retransmitted " << c.retransmitted_packets << ", fast retransmits " << c.fast_retransmits
                           << ", timeouts " << c.timeouts << ", ECN marks " << c.ecn_marks);
  CHECK(c.bytes_delivered == started_bytes);
  CHECK(c.retransmitted_packets > 0);
  CHECK(c.fast_retransmits > 0);
  CHECK(c.ecn_marks > 0);
  const net::Tcp& tcp = tcp_of(n);
  for (net::FlowId f = 0; f < 4; ++f) {
    const net::TcpConnection& conn = tcp.connection_of(f);
    CHECK(conn.messages.empty());
    CHECK(conn.in_flight == 0);
    CHECK(conn.finished_packets == conn.acked);
    CHECK(conn.alpha < 1.0);  // DCTCP's alpha moved over the connection's messages
  }
}
