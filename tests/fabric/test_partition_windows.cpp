// Windowed execution of a partitioned packet network (sim/net/partition_windows.hpp,
// sim/net/fabric_partition.hpp): the partition rule, results identical for every thread count,
// conservation with drops and retransmissions crossing partitions, and the runs that stay on one
// queue.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fault_fixture.hpp"
#include "sim/backends/packet_backend.hpp"
#include "sim/net/fabric_partition.hpp"
#include "spine_leaf_fixture.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {

struct Outcome {
  std::vector<int64_t> finish_ps;  // by transfer
  net::NetworkCounters counters;
  uint32_t partitions = 0;
  uint64_t windows = 0;
  uint64_t threaded_windows = 0;
  double sim_time_s = 0;
};

// A finished run: every transfer done, its finish times and the network's figures.
Outcome outcome_of(const PacketBackend& b, const Simulation& sim) {
  Outcome o;
  for (const TransferRecord& r : b.transfers()) {
    REQUIRE(r.done);
    o.finish_ps.push_back(r.finish.picoseconds());
  }
  o.counters = b.counters();
  o.partitions = b.execution().partitions;
  o.windows = b.execution().windows;
  o.threaded_windows = b.execution().threaded_windows;
  o.sim_time_s = sim.now().seconds();
  return o;
}

// Every host sends `size` to the host `shift` places on, all at t = 0, and two more messages start
// later (a start between windows); `threads` run the partitions when `partitioned`, every window
// on every thread unless `min_window_events_per_thread` says otherwise.
Outcome run_shift(net::NetworkSpec spec, bool partitioned, unsigned threads, Bytes size,
                  uint32_t shift, uint64_t min_window_events_per_thread = 0) {
  spec.execution.partitioned = partitioned;
  spec.execution.threads = threads;
  spec.execution.min_window_events_per_thread = min_window_events_per_thread;
  Simulation sim(7);
  PacketBackend b(sim, spec);
  const auto n = static_cast<uint32_t>(spec.gpus.size());
  for (uint32_t g = 0; g < n; ++g) b.start(TransferRequest{g, (g + shift) % n, size, 0});
  sim.queue().schedule_fn(Time::us(37), [&] {
    b.start(TransferRequest{0, n - 1, Bytes{300'000}, 0});
    b.start(TransferRequest{n - 1, 1, Bytes{50'000}, 0});
  });
  sim.queue().run();
  return outcome_of(b, sim);
}

void check_same(const Outcome& a, const Outcome& b) {
  CHECK(a.finish_ps == b.finish_ps);
  CHECK(a.partitions == b.partitions);
  CHECK(a.windows == b.windows);
  CHECK(a.sim_time_s == b.sim_time_s);
  const net::NetworkCounters& x = a.counters;
  const net::NetworkCounters& y = b.counters;
  CHECK(x.packet_hops == y.packet_hops);
  CHECK(x.bytes_injected == y.bytes_injected);
  CHECK(x.bytes_delivered == y.bytes_delivered);
  CHECK(x.bytes_dropped == y.bytes_dropped);
  CHECK(x.bytes_discarded == y.bytes_discarded);
  CHECK(x.max_queue_bytes == y.max_queue_bytes);
  CHECK(x.retransmitted_packets == y.retransmitted_packets);
  CHECK(x.timeouts == y.timeouts);
  CHECK(x.naks == y.naks);
  CHECK(x.acks == y.acks);
  CHECK(x.packets_dropped == y.packets_dropped);
  CHECK(x.fast_retransmits == y.fast_retransmits);
  CHECK(x.ecn_marks == y.ecn_marks);
}

double mean_finish(const Outcome& o) {
  double sum = 0;
  for (const int64_t f : o.finish_ps) sum += static_cast<double>(f);
  return sum / static_cast<double>(o.finish_ps.size());
}

constexpr Bytes kShiftSize{1'500'000};

// run_shift on 4 leaves of 3 hosts, each host to the one 3 places on: on 2 and 3 threads it is the
// 1-thread run (returned), which drops packets, retransmits them and delivers every byte.
Outcome check_shift_on_threads(const net::NetworkSpec& spec) {
  Outcome one = run_shift(spec, true, 1, kShiftSize, 3);
  REQUIRE(one.partitions == 4);
  const net::NetworkCounters& c = one.counters;
  CHECK(c.bytes_dropped > 0);
  CHECK(c.retransmitted_packets > 0);
  CHECK(c.bytes_delivered == 12 * kShiftSize.count() + 350'000);
  CHECK(c.bytes_injected == c.bytes_delivered + c.bytes_dropped + c.bytes_discarded);
  CHECK(c.flows_completed == 14);
  for (const unsigned threads : {2U, 3U}) {
    CAPTURE(threads);
    check_same(one, run_shift(spec, true, threads, kShiftSize, 3));
  }
  return one;
}

}  // namespace

TEST_CASE("fabric partition: leaves in runs, hosts with their leaf, spines spread") {
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 2, 2));
  const net::FabricPartition p = net::partition_fabric(spec);
  REQUIRE(p.count == 4);
  CHECK(p.lookahead == Time::us(1));
  std::set<uint32_t> spine_parts;
  std::vector<uint32_t> leaf_parts;
  for (net::NodeId id = 0; id < spec.nodes.size(); ++id) {
    const net::NodeSpec& node = spec.nodes[id];
    REQUIRE(p.of_node[id] < p.count);
    if (node.role == net::SwitchRole::Leaf) leaf_parts.push_back(p.of_node[id]);
    if (node.role == net::SwitchRole::Spine) spine_parts.insert(p.of_node[id]);
    if (node.kind == net::NodeKind::Nic) {
      // A host's NIC is in its leaf's partition.
      CHECK(p.of_node[id] == p.of_node[spec.attachment_of_nic[id]]);
    }
  }
  CHECK(leaf_parts == std::vector<uint32_t>{0, 1, 2, 3});
  CHECK(spine_parts.size() == 2);  // round robin: not both in one partition

  // At most two partitions: consecutive leaves share one.
  const net::FabricPartition two = net::partition_fabric(spec, 2);
  REQUIRE(two.count == 2);
  std::vector<uint32_t> grouped;
  for (net::NodeId id = 0; id < spec.nodes.size(); ++id) {
    if (spec.nodes[id].role == net::SwitchRole::Leaf) grouped.push_back(two.of_node[id]);
  }
  CHECK(grouped == std::vector<uint32_t>{0, 0, 1, 1});

  // One leaf: nothing to split.
  const auto one_leaf = topo::build_fabric(testing::spine_leaf_100g(1, 4, 1));
  CHECK(net::partition_fabric(one_leaf).count == 1);
}

TEST_CASE("windowed run: the same on 1, 2 and 3 threads, and conserved") {
  // Shallow buffers: ECMP collisions drop packets, go-back-N NAKs and retransmits them across
  // partitions, and ACKs cross back.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{256 << 10}));
  spec.transport.gbn.timeout = Time::us(200);
  const Outcome one = check_shift_on_threads(spec);
  CHECK(one.windows > 10);
}

TEST_CASE("windowed run: small windows on fewer threads, the same results") {
  // Which thread runs a partition changes nothing: windows expected to hold few events run on fewer
  // threads or on the caller's alone, the rest on all, and the run is the one-thread run
  // throughout.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{256 << 10}));
  spec.transport.gbn.timeout = Time::us(200);
  const Outcome one = run_shift(spec, true, 1, kShiftSize, 3);
  CHECK(one.threaded_windows == 0);
  const Outcome every = run_shift(spec, true, 2, kShiftSize, 3, 0);
  CHECK(every.threaded_windows == every.windows);
  check_same(one, every);
  const Outcome none = run_shift(spec, true, 2, kShiftSize, 3, UINT64_MAX / 4);
  CHECK(none.threaded_windows == 0);
  check_same(one, none);
  // A threshold that splits them: some windows on threads, some not; on 3 threads some on 2.
  for (const unsigned threads : {2U, 3U}) {
    CAPTURE(threads);
    const Outcome mixed = run_shift(spec, true, threads, kShiftSize, 3, 40);
    CHECK(mixed.threaded_windows > 0);
    CHECK(mixed.threaded_windows < mixed.windows);
    check_same(one, mixed);
  }
}

TEST_CASE("windowed run: TCP across partitions, the same on 1, 2 and 3 threads") {
  // The same collisions under TCP (NewReno): duplicate ACKs cross back to the senders'
  // partitions, fast retransmits and timeouts resend; a connection's window is its sender's.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{256 << 10}));
  spec.transport.kind = net::TransportKind::Tcp;
  spec.transport.tcp.cc = net::TcpCongestionControl::Reno;
  spec.transport.tcp.rto_min = Time::us(200);
  const Outcome one = check_shift_on_threads(spec);
  CHECK(one.counters.fast_retransmits > 0);
  CHECK(one.counters.acks > 0);
  // Against one queue: the same run to the picosecond. (Before packets taken in late kept their
  // one-queue place, Link::accept, ties moved which packet a full buffer dropped: 2,097,152 bytes
  // against 2,084,864.)
  const Outcome single = run_shift(spec, false, 1, kShiftSize, 3);
  CHECK(single.partitions == 1);
  CHECK(single.finish_ps == one.finish_ps);
  CHECK(single.counters.bytes_dropped == one.counters.bytes_dropped);
  CHECK(single.counters.fast_retransmits == one.counters.fast_retransmits);

  // DCTCP: switches mark by RED in the receivers' and spines' partitions, the ACKs echo the marks
  // to the senders', whose connections cut their windows once per window of data.
  spec.transport.tcp.cc = net::TcpCongestionControl::Dctcp;
  spec.ecn.enabled = true;
  const Outcome dctcp = check_shift_on_threads(spec);
  CHECK(dctcp.counters.ecn_marks > 0);
}

TEST_CASE("windowed run: agrees with the one-queue run where no two events tie") {
  // One flow per leaf pair and no collisions: nothing happens at the same picosecond in two
  // places that could be ordered differently, so the partitioned run is the one-queue run.
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 1, 4));
  const Outcome windowed = run_shift(spec, true, 2, Bytes{2'000'000}, 1);
  const Outcome single = run_shift(spec, false, 1, Bytes{2'000'000}, 1);
  REQUIRE(windowed.partitions == 4);
  CHECK(single.partitions == 1);
  CHECK(single.windows == 0);
  CHECK(windowed.finish_ps == single.finish_ps);
  CHECK(windowed.sim_time_s == single.sim_time_s);
  CHECK(windowed.counters.packet_hops == single.counters.packet_hops);
  CHECK(windowed.counters.acks == single.counters.acks);

  // The same under TCP, whose ACKs (one per segment) and windows cross between partitions.
  net::NetworkSpec tcp = spec;
  tcp.transport.kind = net::TransportKind::Tcp;
  const Outcome tcp_windowed = run_shift(tcp, true, 2, Bytes{2'000'000}, 1);
  const Outcome tcp_single = run_shift(tcp, false, 1, Bytes{2'000'000}, 1);
  REQUIRE(tcp_windowed.partitions == 4);
  CHECK(tcp_windowed.finish_ps == tcp_single.finish_ps);
  CHECK(tcp_windowed.sim_time_s == tcp_single.sim_time_s);
  CHECK(tcp_windowed.counters.packet_hops == tcp_single.counters.packet_hops);
  CHECK(tcp_windowed.counters.acks == tcp_single.counters.acks);
}

namespace {

// On 4 leaves of 3 hosts, at priority 3: hosts 1..11 send to host 0 (an incast across every
// partition) while each host also sends to the host 4 places on; a second wave starts between
// windows. run_lossless runs it as operators run lossless RoCE: PFC on priority 3, ECN at the
// defaults, DCQCN at the NICs.
// `cut_every`: events that do nothing outside the partitions at every multiple of it up to 300 us,
// so that windows end there too (a window never runs past the next event outside them).
Outcome run_incast(net::NetworkSpec spec, bool partitioned, unsigned threads,
                   Time cut_every = Time::zero()) {
  spec.execution.partitioned = partitioned;
  spec.execution.threads = threads;
  spec.execution.min_window_events_per_thread = 0;  // every window on the threads
  Simulation sim(11);
  PacketBackend b(sim, spec);
  if (cut_every > Time::zero()) {
    for (Time t = cut_every; t < Time::us(300); t = t + cut_every)
      sim.queue().schedule_fn(t, [] {});
  }
  const auto n = static_cast<uint32_t>(spec.gpus.size());
  constexpr uint8_t kLossless = 3;
  for (uint32_t g = 1; g < n; ++g) b.start(TransferRequest{g, 0, Bytes{400'000}, kLossless});
  for (uint32_t g = 0; g < n; ++g) {
    b.start(TransferRequest{g, (g + 4) % n, Bytes{700'000}, kLossless});
  }
  sim.queue().schedule_fn(Time::us(90), [&] {
    for (uint32_t g = 2; g < n; g += 3) b.start(TransferRequest{g, 1, Bytes{200'000}, kLossless});
  });
  sim.queue().run();
  return outcome_of(b, sim);
}

Outcome run_lossless(net::NetworkSpec spec, bool partitioned, unsigned threads) {
  spec.pfc.enabled = true;
  spec.ecn.enabled = true;
  spec.nic.dcqcn.enabled = true;
  return run_incast(spec, partitioned, threads);
}

void check_same_lossless(const Outcome& a, const Outcome& b) {
  check_same(a, b);
  CHECK(a.counters.pause_frames == b.counters.pause_frames);
  CHECK(a.counters.nic_pause_frames == b.counters.nic_pause_frames);
  CHECK(a.counters.cnps == b.counters.cnps);
  CHECK(a.counters.rate_cuts == b.counters.rate_cuts);
  CHECK(a.counters.ecn_marks == b.counters.ecn_marks);
  CHECK(a.counters.rc_recoveries == b.counters.rc_recoveries);
  CHECK(a.counters.rc_recovery_time_ps == b.counters.rc_recovery_time_ps);
}

constexpr int64_t kIncastBytes = 11 * 400'000 + 12 * 700'000 + 4 * 200'000;

// `run(partitioned, threads)` runs the incast: on 2 and 3 threads it is the 1-thread run `one`; on
// one queue (returned) it delivers every byte as well, drops none, and its mean completion time is
// within `tolerance` of the partitioned one's.
template <class Run>
Outcome check_lossless_incast(const Outcome& one, Run run, double tolerance) {
  for (const unsigned threads : {2U, 3U}) {
    CAPTURE(threads);
    check_same_lossless(one, run(true, threads));
  }
  Outcome single = run(false, 1U);
  CHECK(single.partitions == 1);
  for (const Outcome* o : {&one, static_cast<const Outcome*>(&single)}) {
    CHECK(o->counters.bytes_delivered == kIncastBytes);
    CHECK(o->counters.bytes_dropped == 0);
  }
  CHECK(mean_finish(one) == doctest::Approx(mean_finish(single)).epsilon(tolerance));
  return single;
}

}  // namespace

TEST_CASE("windowed run: PFC, ECN and DCQCN across partitions, the same on 1, 2 and 3 threads") {
  const auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{2 << 20}));
  const Outcome one = run_lossless(spec, true, 1);
  REQUIRE(one.partitions == 4);
  const net::NetworkCounters& c = one.counters;
  // Pauses, marks and CNPs all happen, and go between partitions (every leaf sends to leaf 0).
  CHECK(c.pause_frames > 0);
  CHECK(c.ecn_marks > 0);
  CHECK(c.cnps > 0);
  CHECK(c.rate_cuts > 0);
  // Lossless: nothing dropped, every byte delivered, the same on any thread count. Against one
  // queue only events at one picosecond in two partitions may be ordered differently, but under
  // random ECN marking that reorders marks, cuts and pauses, and single flows end up far apart (as
  // with another seed: seeds 11, 12 and 13 of the one-queue run give mean FCTs of 326, 351 and
  // 345 us and maxima of 686, 1095 and 1405 us). So the aggregates are compared, with the seed's
  // spread as the tolerance.
  const Outcome single = check_lossless_incast(
      one,
      [&](bool partitioned, unsigned threads) { return run_lossless(spec, partitioned, threads); },
      0.1);
  CHECK(static_cast<double>(c.rate_cuts) ==
        doctest::Approx(static_cast<double>(single.counters.rate_cuts)).epsilon(0.2));
  CHECK(static_cast<double>(c.pause_frames) ==
        doctest::Approx(static_cast<double>(single.counters.pause_frames)).epsilon(0.2));
}

TEST_CASE("windowed run: where windows end changes nothing, with PFC pausing across partitions") {
  // PFC alone on shallow buffers: pauses go back and forth between partitions, and synchronised
  // senders tie at the spines all the time. Windows cut at 0.3, 0.7 and 1.1 us (the lookahead is
  // 1 us) change which window takes a packet in, never the run: a packet that left behind another
  // still on the wire takes the place one queue gives it in that one's arrival event
  // (Link::accept), in whichever window it is taken in.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{1 << 20}));
  spec.pfc.enabled = true;
  const Outcome plain = run_incast(spec, true, 1);
  REQUIRE(plain.partitions == 4);
  CHECK(plain.counters.pause_frames > 0);
  for (const Time cut : {Time::ns(300), Time::ns(700), Time::ns(1100)}) {
    CAPTURE(cut.picoseconds());
    const Outcome cut_run = run_incast(spec, true, 2, cut);
    CHECK(cut_run.windows > plain.windows);
    CHECK(cut_run.finish_ps == plain.finish_ps);
    CHECK(cut_run.counters.pause_frames == plain.counters.pause_frames);
    CHECK(cut_run.counters.packet_hops == plain.counters.packet_hops);
    CHECK(cut_run.counters.max_queue_bytes == plain.counters.max_queue_bytes);
  }
  // Against one queue only the ties of packets sent onto idle cables at one picosecond in two
  // partitions remain (schedule_as_of): 429 pauses against 435, the same bytes, mean FCT within 1
  // %.
  const Outcome single = run_incast(spec, false, 1);
  CHECK(single.counters.bytes_delivered == plain.counters.bytes_delivered);
  CHECK(mean_finish(single) == doctest::Approx(mean_finish(plain)).epsilon(0.01));
}

TEST_CASE("windowed run: lossless losses recover across partitions, the same on 1 and 2 threads") {
  // Headroom far too small: lossless packets overflow it and are dropped at ingress, go-back-N's
  // RC recovery resends them (its loss notice crosses to the receiver's partition, its off-wire
  // ACKs back to the sender's).
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{2 << 20}));
  spec.pfc.headroom_auto = false;
  spec.pfc.headroom = Bytes{5'000};
  spec.transport.gbn.lossless_timeout = Time::us(300);
  const Outcome one = run_lossless(spec, true, 1);
  REQUIRE(one.partitions == 4);
  const net::NetworkCounters& c = one.counters;
  CHECK(c.bytes_dropped > 0);
  CHECK(c.rc_recoveries > 0);
  CHECK(c.rc_recovery_time_ps > 0);
  CHECK(c.bytes_delivered == kIncastBytes);
  CHECK(c.bytes_injected == c.bytes_delivered + c.bytes_dropped + c.bytes_discarded);
  check_same_lossless(one, run_lossless(spec, true, 2));
}

TEST_CASE("windowed run: InfiniBand credits and congestion control across partitions") {
  // Credits go back upstream over links between partitions, BECNs from host 0's partition to the
  // senders'; small VL buffers make the credits bind.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2));
  spec.link_layer = net::LinkLayer::Infiniband;
  spec.infiniband.vl_buffer_auto = false;
  spec.infiniband.vl_buffer = Bytes{16 * 1024};
  spec.infiniband.congestion_control.enabled = true;
  const Outcome one = run_incast(spec, true, 1);
  REQUIRE(one.partitions == 4);
  const net::NetworkCounters& c = one.counters;
  CHECK(c.cnps > 0);  // BECNs
  CHECK(c.rate_cuts > 0);
  // Credits: lossless. Against one queue only events scheduled at the same picosecond in two
  // partitions may run in another order; but which of two equal flows a switch serves first then
  // changes, queue depths and with them the BECNs follow, and single flows finish far apart (up to
  // 2.6x here). The aggregates agree: mean FCT 760 against 741 us, the last flow 1,293 against
  // 1,299 us, 487 BECNs against 515.
  const Outcome single = check_lossless_incast(
      one,
      [&](bool partitioned, unsigned threads) { return run_incast(spec, partitioned, threads); },
      0.05);
  CHECK(static_cast<double>(*std::max_element(one.finish_ps.begin(), one.finish_ps.end())) ==
        doctest::Approx(static_cast<double>(
                            *std::max_element(single.finish_ps.begin(), single.finish_ps.end())))
            .epsilon(0.05));
  CHECK(static_cast<double>(c.cnps) ==
        doctest::Approx(static_cast<double>(single.counters.cnps)).epsilon(0.2));
}

TEST_CASE("windowed run: every mechanism runs partitioned; a fabric without lookahead, one queue") {
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 1, 2));
  spec.execution.partitioned = true;
  // What the backend does with `spec`: its partitions, or why it keeps one queue.
  const auto run_as = [&spec] {
    Simulation sim(1);
    const PacketBackend b(sim, spec);
    return std::pair{b.execution().partitions, b.execution().refusal};
  };
  CHECK(run_as() == std::pair{4U, std::string{}});
  // Per-packet load balancing reads only the packet, the routing and the deciding switch's own
  // ports (windowed run: per-packet load balancing).
  for (const auto mode : {net::LoadBalancing::PacketSpray, net::LoadBalancing::Flowlet,
                          net::LoadBalancing::Adaptive}) {
    spec.load_balancing.mode = mode;
    CHECK(run_as().first == 4);
  }
  // TCP's ACKs are packets and a connection's window is its sender's.
  spec.transport.kind = net::TransportKind::Tcp;
  CHECK(run_as().first == 4);
  // PFC, DCQCN and InfiniBand are split by side and partition.
  spec.transport.kind = net::TransportKind::Roce;
  spec.pfc.enabled = true;
  spec.nic.dcqcn.enabled = true;
  CHECK(run_as().first == 4);
  spec.link_layer = net::LinkLayer::Infiniband;
  CHECK(run_as().first == 4);
  spec.link_layer = net::LinkLayer::Roce;
  // Random loss and jitter draw in the sender's partition; the lookahead is the least delay jitter
  // leaves a link between partitions (1 us here).
  spec.impairments.loss_probability = 1e-4;
  spec.impairments.jitter = net::JitterDistribution::Exponential;
  spec.impairments.jitter_mean = Time::ns(200);
  CHECK(net::partition_fabric(spec).lookahead == Time::us(1));
  spec.impairments.jitter = net::JitterDistribution::Normal;
  CHECK(net::partition_fabric(spec).lookahead == Time::ns(1200));  // no spread: a fixed delay
  spec.impairments.jitter_mean = Time::zero();
  spec.impairments.jitter_stddev_fraction = 0.05;  // 50 ns: 300 ns off at the most
  CHECK(net::partition_fabric(spec).lookahead == Time::ns(700));
  CHECK(run_as().first == 4);
  // A spread that reaches zero delay leaves no lookahead: one queue, and the refusal says why.
  spec.impairments.jitter_stddev_fraction = 0.2;
  const auto [partitions, why] = run_as();
  CHECK(partitions == 1);
  CHECK(why.find("normal link jitter") != std::string::npos);
  // So does a fabric of one leaf.
  auto one_leaf = topo::build_fabric(testing::spine_leaf_100g(1, 4, 2));
  const net::FabricPartition single = net::partition_fabric(one_leaf);
  CHECK(single.count == 1);
  CHECK(single.why_one.find("fewer than two leaf switches") != std::string::npos);
}

TEST_CASE("windowed run: random loss and exponential jitter, the same on 1, 2 and 3 threads") {
  // Each impaired link draws from its own streams in its sender's partition; jitter only lengthens
  // a link's delay, so nothing arrives inside the lookahead. Loss drops packets on links into
  // other partitions as well as inside them; go-back-N resends them.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2));
  spec.transport.gbn.timeout = Time::us(200);
  spec.impairments.loss_probability = 2e-3;
  spec.impairments.jitter = net::JitterDistribution::Exponential;
  spec.impairments.jitter_mean = Time::ns(150);
  const Outcome one = check_shift_on_threads(spec);
  CHECK(one.counters.dropped(net::DropReason::LinkLoss) > 0);
  // Against one queue: every link draws the same numbers in the same order (per link, in the
  // order its packets leave), and the jitter leaves no two events of two partitions tied here, so
  // the runs are the same to the picosecond.
  const Outcome single = run_shift(spec, false, 1, kShiftSize, 3);
  CHECK(single.partitions == 1);
  CHECK(single.finish_ps == one.finish_ps);
  CHECK(single.counters.dropped(net::DropReason::LinkLoss) ==
        one.counters.dropped(net::DropReason::LinkLoss));
  CHECK(single.counters.retransmitted_packets == one.counters.retransmitted_packets);
}

TEST_CASE("windowed run: normal jitter, the same on 1, 2 and 3 threads and as one queue") {
  // Normal jitter can shorten a link's delay: the lookahead is the least delay it leaves a link
  // between partitions, 1 us - 6 x 50 ns here.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2));
  spec.transport.gbn.timeout = Time::us(200);
  spec.impairments.loss_probability = 2e-3;
  spec.impairments.jitter = net::JitterDistribution::Normal;
  spec.impairments.jitter_stddev_fraction = 0.05;
  REQUIRE(net::partition_fabric(spec).lookahead == Time::ns(700));
  const Outcome one = check_shift_on_threads(spec);
  CHECK(one.counters.dropped(net::DropReason::LinkLoss) > 0);
  const Outcome single = run_shift(spec, false, 1, kShiftSize, 3);
  CHECK(single.partitions == 1);
  CHECK(single.finish_ps == one.finish_ps);
  CHECK(single.counters.retransmitted_packets == one.counters.retransmitted_packets);
}

TEST_CASE("windowed run: per-packet load balancing, the same on 1, 2 and 3 threads") {
  // Spraying and flowlets pick the next hop from the packet's entropy, set by its sender NIC in
  // that NIC's partition; adaptive routing reads the deciding switch's own queues. The collisions
  // of run_shift drop packets, and out-of-order arrivals are NAKed across partitions.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{256 << 10}));
  spec.transport.gbn.timeout = Time::us(200);
  for (const auto mode : {net::LoadBalancing::PacketSpray, net::LoadBalancing::Flowlet,
                          net::LoadBalancing::Adaptive}) {
    CAPTURE(static_cast<int>(mode));
    spec.load_balancing.mode = mode;
    const Outcome one = check_shift_on_threads(spec);
    const Outcome single = run_shift(spec, false, 1, kShiftSize, 3);
    CHECK(single.partitions == 1);
    if (mode == net::LoadBalancing::Adaptive) {
      // Adaptive routing decides on a switch's queue depth at that picosecond, so a tie between
      // two partitions' packets ordered the other way (by sending partition, where one queue
      // goes by when each was scheduled) can turn a choice and, with it, the rest of the run:
      // 15.8 MB dropped here against 17.8 MB on one queue. Seen over six link delays of
      // load-balancing.yaml (docs/performance.md) the two are within each other's spread.
      CHECK(single.counters.bytes_delivered == one.counters.bytes_delivered);
      continue;
    }
    // Spraying and flowlets: the same run to the picosecond as one queue (packets taken in late
    // keep their one-queue place, Link::accept).
    CHECK(single.finish_ps == one.finish_ps);
    CHECK(single.counters.bytes_dropped == one.counters.bytes_dropped);
    CHECK(single.counters.retransmitted_packets == one.counters.retransmitted_packets);
  }
}

TEST_CASE("windowed run: a SHARP fabric's engines join their switches' partitions") {
  // Every fabric switch has an aggregation engine on a zero-delay link; traffic never reduces
  // through them, so the run is the same as without them, partitioned as the leaves are.
  topo::FabricParams params = testing::spine_leaf_100g(4, 3, 2, Bytes{256 << 10});
  params.sharp.enabled = true;
  auto spec = topo::build_fabric(params);
  REQUIRE(spec.sharp_engines.size() == 6);
  const net::FabricPartition plan = net::partition_fabric(spec);
  CHECK(plan.count == 4);
  CHECK(plan.lookahead == Time::us(1));
  for (std::size_t k = 0; k < spec.sharp_engines.size(); ++k) {
    CHECK(plan.of_node[spec.sharp_engines[k].nic] == plan.of_node[spec.sharp_engine_switch[k]]);
  }
  spec.transport.gbn.timeout = Time::us(200);
  const Outcome one = check_shift_on_threads(spec);
  auto plain = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{256 << 10}));
  plain.transport.gbn.timeout = Time::us(200);
  check_same(one, run_shift(plain, true, 1, kShiftSize, 3));
}

namespace {

// run_shift's traffic on `spec` with timed `faults` (routing converging 20 us after each change).
Outcome run_faulted(net::NetworkSpec spec, bool partitioned, unsigned threads,
                    const std::vector<net::NetFault>& faults, uint8_t priority = 0) {
  spec.execution.partitioned = partitioned;
  spec.execution.threads = threads;
  spec.execution.min_window_events_per_thread = 0;  // every window on the threads
  Simulation sim(7);
  PacketBackend b(sim, spec);
  const auto n = static_cast<uint32_t>(spec.gpus.size());
  for (uint32_t g = 0; g < n; ++g) {
    b.start(TransferRequest{g, (g + 3) % n, kShiftSize, priority});
  }
  b.schedule_faults(faults, {Time::us(20)});
  sim.queue().run();
  return outcome_of(b, sim);
}

// The cable between switches `a` and `b` (by name).
uint32_t cable_between(const net::NetworkSpec& spec, const std::string& a, const std::string& b) {
  for (uint32_t l = 0; l < spec.links.size(); ++l) {
    const std::string& x = spec.nodes[spec.links[l].a].name;
    const std::string& y = spec.nodes[spec.links[l].b].name;
    if ((x == a && y == b) || (x == b && y == a)) return l;
  }
  FAIL("no cable between " << a << " and " << b);
  return 0;
}

}  // namespace

TEST_CASE("windowed run: link faults between windows, the same on 1, 2 and 3 threads") {
  // A leaf's uplink goes down mid-transfer (packets on the wire into the spine's partition and
  // queued at the leaf are lost; routing converges 20 us later), comes back, and another runs at a
  // quarter of its rate: faults run on the simulation's queue, between windows, on the whole
  // fabric at once.
  auto spec = topo::build_fabric(testing::spine_leaf_100g(4, 3, 2, Bytes{4 << 20}));
  spec.transport.gbn.timeout = Time::us(200);
  const uint32_t down = cable_between(spec, "leaf1", "spine0");
  const uint32_t slow = cable_between(spec, "leaf2", "spine1");
  // Both cables join two partitions.
  const net::FabricPartition plan = net::partition_fabric(spec);
  for (const uint32_t cable : {down, slow}) {
    CHECK(plan.of_node[spec.links[cable].a] != plan.of_node[spec.links[cable].b]);
  }
  const std::vector<net::NetFault> faults = {
      testing::link_fault(Time::us(40), net::NetFaultKind::LinkDown, down),
      testing::link_fault(Time::us(30), net::NetFaultKind::LinkRate, slow, 0.25),
      testing::link_fault(Time::us(160), net::NetFaultKind::LinkUp, down)};
  const Outcome one = run_faulted(spec, true, 1, faults);
  REQUIRE(one.partitions == 4);
  const net::NetworkCounters& c = one.counters;
  CHECK(c.dropped(net::DropReason::LinkDown) > 0);
  CHECK(c.route_convergences == 2);
  CHECK(c.flows_rerouted > 0);
  CHECK(c.bytes_delivered == 12 * kShiftSize.count());
  CHECK(c.bytes_injected == c.bytes_delivered + c.bytes_dropped + c.bytes_discarded);
  for (const unsigned threads : {2U, 3U}) {
    CAPTURE(threads);
    check_same(one, run_faulted(spec, true, threads, faults));
  }
  const Outcome single = run_faulted(spec, false, 1, faults);
  CHECK(single.partitions == 1);
  CHECK(single.counters.dropped(net::DropReason::LinkDown) == c.dropped(net::DropReason::LinkDown));
  CHECK(single.finish_ps == one.finish_ps);

  // A PFC storm: a NIC stuck sending PAUSE from 20 to 120 us (its PAUSE frame made in its own
  // partition); the pause spreads upstream across partitions, and the run waits it out.
  spec.pfc.enabled = true;
  net::NetFault storm;
  storm.at = Time::us(20);
  storm.kind = net::NetFaultKind::PfcStormStart;
  storm.nic = spec.gpus[4].nic;
  storm.priority = 3;
  net::NetFault calm = storm;
  calm.at = Time::us(120);
  calm.kind = net::NetFaultKind::PfcStormEnd;
  const Outcome stormed = run_faulted(spec, true, 1, {storm, calm}, 3);
  CHECK(stormed.counters.nic_pause_frames == 1);
  CHECK(stormed.counters.pause_frames > 0);
  CHECK(stormed.counters.bytes_delivered == 12 * kShiftSize.count());
  for (const unsigned threads : {2U, 3U}) {
    CAPTURE(threads);
    check_same_lossless(stormed, run_faulted(spec, true, threads, {storm, calm}, 3));
  }
  const Outcome stormed_single = run_faulted(spec, false, 1, {storm, calm}, 3);
  CHECK(stormed_single.finish_ps == stormed.finish_ps);
  CHECK(stormed_single.counters.pause_frames == stormed.counters.pause_frames);
}
