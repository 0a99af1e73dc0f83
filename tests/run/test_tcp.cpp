// TCP (DCTCP / NewReno) and the no-GPUDirect host staging.
#include <doctest/doctest.h>

#include <string>

#include "run/collective_cmd.hpp"
#include "sim/backends/host_staging.hpp"
#include "tests/run/lossy_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::lossy_test;

TEST_CASE("host staging: connections share a stage equally, one connection's copies in order") {
  // Rate 1 B/ps. Two connections, 1000 B and 3000 B, start together: both progress at 0.5 B/ps
  // until the first ends at 2000 ps, then the second has 2000 B left alone: done at 4000 ps.
  EventQueue q;
  std::vector<std::pair<uint32_t, int64_t>> done;
  auto record = [&](uint32_t id) { done.emplace_back(id, q.now().picoseconds()); };
  StagingLanes shared(q, 1, 1.0, 1.0, record);
  shared.add(7, StagingLane{0, 1, 0}, 0, 1000);
  shared.add(9, StagingLane{0, 1, 1}, 0, 3000);
  q.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0] == std::pair<uint32_t, int64_t>{7, 2000});
  CHECK(done[1] == std::pair<uint32_t, int64_t>{9, 4000});
  // The same two copies on one connection run one after the other: done at 1000 and 4000 ps.
  EventQueue q2;
  std::vector<std::pair<uint32_t, int64_t>> in_order;
  StagingLanes fifo(q2, 1, 1.0, 1.0,
                    [&](uint32_t id) { in_order.emplace_back(id, q2.now().picoseconds()); });
  fifo.add(7, StagingLane{0, 1, 0}, 0, 1000);
  fifo.add(9, StagingLane{0, 1, 0}, 0, 3000);
  // A second connection's copy shares the rate with the lane's head only: it and copy 7 progress
  // at 0.5 B/ps (both done at 2000 ps), then copy 9 runs alone (5000 ps).
  fifo.add(3, StagingLane{2, 1, 0}, 0, 1000);
  q2.run();
  REQUIRE(in_order.size() == 3);
  CHECK(in_order[0] == std::pair<uint32_t, int64_t>{7, 2000});
  CHECK(in_order[1] == std::pair<uint32_t, int64_t>{3, 2000});
  CHECK(in_order[2] == std::pair<uint32_t, int64_t>{9, 5000});
}

TEST_CASE("host staging: each PCIe switch has its own rate, host memory is shared by the host") {
  // Two switches of 1 B/ps each, host memory 1.5 B/ps. One lane per switch: each gets
  // min(1 / 1, 1.5 / 2) = 0.75 B/ps, so 1500 B each are done at 2000 ps (one switch alone: 1500
  // ps).
  EventQueue q;
  std::vector<std::pair<uint32_t, int64_t>> done;
  StagingLanes host(q, 2, 1.0, 1.5,
                    [&](uint32_t id) { done.emplace_back(id, q.now().picoseconds()); });
  host.add(1, StagingLane{0, 9, 0}, 0, 1500);
  host.add(2, StagingLane{2, 9, 0}, 1, 1500);
  q.run();
  REQUIRE(done.size() == 2);
  CHECK(done[0].second == 2000);
  CHECK(done[1].second == 2000);
  // Two lanes on one switch: min(1 / 2, 1.5 / 2) = 0.5 B/ps each: 3000 ps.
  EventQueue q2;
  std::vector<int64_t> at;
  StagingLanes one(q2, 2, 1.0, 1.5, [&](uint32_t) { at.push_back(q2.now().picoseconds()); });
  one.add(1, StagingLane{0, 9, 0}, 0, 1500);
  one.add(2, StagingLane{1, 9, 0}, 0, 1500);
  q2.run();
  REQUIRE(at.size() == 2);
  CHECK(at[0] == 3000);
  CHECK(at[1] == 3000);
}

TEST_CASE("host staging: one message pays a copy at each end, as the closed form says") {
  // roce_host_staged = roce + 2 x (copy latency + size / min(PCIe, host memory / 2)) for a message
  // alone on an idle fabric.
  const std::string base = incast_yaml(1, "4MB", "64MiB", 0, "");
  const app::RunResult direct = run_yaml(base);
  const app::RunResult staged =
      run_yaml(base, {app::parse_override("fabric.transport.kind=roce_host_staged"),
                      app::parse_override("fabric.transport.host_staging.pcie=256Gbps"),
                      app::parse_override("fabric.transport.host_staging.host_memory=2400Gbps"),
                      app::parse_override("fabric.transport.host_staging.copy_latency=3us")});
  const double copy_s = 3e-6 + 4e6 / (256e9 / 8);
  CHECK(staged.fct.max_s == doctest::Approx(direct.fct.max_s + 2 * copy_s).epsilon(1e-9));
  // Host memory the bottleneck: 400 Gb/s of memory stages at 200 Gb/s.
  const app::RunResult memory_bound =
      run_yaml(base, {app::parse_override("fabric.transport.kind=roce_host_staged"),
                      app::parse_override("fabric.transport.host_staging.host_memory=400Gbps"),
                      app::parse_override("fabric.transport.host_staging.copy_latency=0us")});
  CHECK(memory_bound.fct.max_s ==
        doctest::Approx(direct.fct.max_s + 2 * 4e6 / (200e9 / 8)).epsilon(1e-9));
}

TEST_CASE("host staging at flow fidelity: a NIC's staged transfers start one packet apart") {
  // Two equal messages from one GPU to one host, each its own lane: their copies share the PCIe
  // switch and finish together. A NIC sends one packet at a time, so the second transfer starts a
  // packet (4096 + 64 B at 100 Gb/s = 332.8 ns) after the first; under fair sharing the offset
  // carries through the network and the receive copies, and the first completes that much before
  // the second (fluid sharing alone: together, 0 ns apart).
  std::string base = incast_yaml(1, "4MB", "64MiB", 0, "");
  base += "      - {src: 17, dst: 0, size: 4MB, priority: 0}\n";
  const std::vector<app::Override> staged = {
      app::parse_override("fabric.transport.kind=roce_host_staged"),
      app::parse_override("fabric.transport.host_staging.copy_latency=0us"),
      app::parse_override("fidelity=flow")};
  const app::RunResult r = run_yaml(base, staged);
  CHECK((r.fct.max_s - r.fct.min_s) * 1e9 == doctest::Approx(332.8).epsilon(0.01));
  // Closed form of the later one: two copies of 4 MB sharing 64 GB/s at each end, and 8 MB (plus
  // headers) through the 100 Gb/s NIC, plus the path's latency (a few us).
  const double copies_s = 2 * (8e6 / 64e9);
  const double wire_s = 8e6 * (4096.0 + 64) / 4096 * 8 / 100e9;
  CHECK(r.fct.max_s > copies_s + wire_s);
  CHECK(r.fct.max_s < copies_s + wire_s + 5e-6);
  // Packet fidelity: untouched (its NIC serializes the packets itself).
  std::vector<app::Override> packet = staged;
  packet.back() = app::parse_override("fidelity=packet");
  const app::RunResult p = run_yaml(base, packet);
  CHECK(p.fct.max_s == doctest::Approx(r.fct.max_s).epsilon(0.02));
}

TEST_CASE("tcp: a lone message completes without loss, one ACK per segment, slower than RoCE") {
  const std::string base = incast_yaml(1, "1MB", "64MiB", 0, "");
  const app::RunResult roce = run_yaml(base);
  const app::RunResult tcp = run_yaml(base, {app::parse_override("fabric.transport.kind=tcp")});
  CHECK(tcp.transport == "tcp");
  CHECK(tcp.messages_completed == 1);
  CHECK(tcp.retransmitted_packets == 0);
  CHECK(tcp.timeouts == 0);
  CHECK(tcp.counters.bytes_delivered == 1'000'000);
  CHECK(tcp.counters.bytes_injected == 1'000'000);
  CHECK(tcp.acks == (1'000'000 + 4095) / 4096);
  // Fixed costs per end (defaults): copy 5 us + 1 MB / 64 GB/s through the staging stage, stack
  // 10 us + 40 ps/B. Slow start from 10 segments adds about one RTT (~2 us) at this BDP (~15
  // packets).
  const double per_end = 5e-6 + 1e6 / 64e9 + 10e-6 + 40e-12 * 1e6;
  CHECK(tcp.fct.max_s > roce.fct.max_s + 2 * per_end);
  CHECK(tcp.fct.max_s < roce.fct.max_s + 2 * per_end + 5e-6);
}

TEST_CASE(
    "tcp reno: an overflowing incast drops, fast-retransmits and still delivers every byte once") {
  const std::string fabric =
      "  transport: {kind: tcp, tcp: {congestion_control: reno, rto_min: 1ms}}\n";
  const std::string yaml = incast_yaml(16, "1MB", "1MiB", 0, fabric);
  const app::RunResult lossy = run_yaml(yaml);
  const app::RunResult roomy = run_yaml(yaml, {app::parse_override("fabric.switch.buffer=64MiB")});

  CHECK(roomy.counters.bytes_dropped == 0);
  CHECK(roomy.retransmitted_packets == 0);
  CHECK(roomy.timeouts == 0);
  CHECK(roomy.messages_completed == 16);

  CHECK(drops_of(lossy, "buffer_full") > 0);
  CHECK(lossy.fast_retransmits > 0);
  CHECK(lossy.retransmitted_packets > 0);
  CHECK(lossy.messages_completed == 16);
  CHECK(lossy.counters.bytes_delivered == 16 * 1'000'000);
  CHECK(lossy.counters.bytes_injected ==
        lossy.counters.bytes_delivered + lossy.counters.bytes_dropped + lossy.bytes_discarded);
  // Nobody beats the bottleneck: 16 MB through host 0's 100 Gb/s link (the lossy run is not
  // necessarily slower here: fast retransmit repairs the losses within a few RTTs).
  CHECK(lossy.fct.max_s > 16e6 * 8 / 100e9);
  CHECK(roomy.fct.max_s > 16e6 * 8 / 100e9);
}

TEST_CASE("tcp dctcp: ECN marks keep the incast queue short, fewer drops than Reno") {
  const std::string fabric =
      "    ecn: {enabled: true, kmin: 20KB, kmax: 60KB, pmax: 0.2, mark_on: dequeue}\n"
      "  transport: {kind: tcp, tcp: {congestion_control: dctcp, rto_min: 1ms}}\n";
  const std::string yaml = incast_yaml(16, "1MB", "1MiB", 0, fabric);
  const app::RunResult dctcp = run_yaml(yaml);
  const app::RunResult reno =
      run_yaml(yaml, {app::parse_override("fabric.transport.tcp.congestion_control=reno")});
  CHECK(dctcp.ecn_marks > 0);
  CHECK(dctcp.messages_completed == 16);
  CHECK(dctcp.counters.bytes_delivered == 16 * 1'000'000);
  CHECK(dctcp.counters.max_queue_bytes < reno.counters.max_queue_bytes);
  CHECK(drops_of(dctcp, "buffer_full") < drops_of(reno, "buffer_full"));
  CHECK(dctcp.timeouts <= reno.timeouts);
}

TEST_CASE("tcp: a lost lone segment waits for RTOmin") {
  const std::string fabric = "  transport: {kind: tcp, tcp: {rto_min: 2ms}}\n";
  const std::string yaml = incast_yaml(4, "1000B", "64MiB", 0, fabric);
  const app::RunResult clean = run_yaml(yaml);
  CHECK(clean.timeouts == 0);
  CHECK(clean.fct.max_s < 1e-3);
  const app::RunResult lossy = run_yaml(yaml, {app::parse_override("fabric.impairments.loss=0.5")});
  CHECK(lossy.timeouts > 0);
  CHECK(lossy.messages_completed == 4);
  CHECK(lossy.counters.bytes_delivered == 4 * 1000);
  CHECK(lossy.fct.max_s >= 2e-3);
}

TEST_CASE(
    "tcp: a collective's slices keep their connection's window; fresh connections slow-start") {
  // 8 single-GPU hosts, 400G, 5 us cables (a window of ~60 KB per connection is far above IW10's
  // 40 KiB), a 64 MiB ring all_reduce at packet fidelity. NCCL's connections are persistent queue
  // pairs (collective.qps_per_connection: 1): after its first slices a connection's window no
  // longer limits it, so initial_window hardly matters; with a new queue pair per slice
  // (qps_per_connection: 0) every slice slow-starts from initial_window again.
  const std::string yaml =
      "name: tcp-ring\nseed: 1\nfidelity: packet\n"
      "fabric:\n"
      "  topology: spine_leaf\n"
      "  spine_leaf: {leaves: 2, hosts_per_leaf: 4, spines: 1}\n"
      "  links:\n"
      "    host:   {bandwidth: 400Gbps, delay: 5us, mtu: 4096B, header: 64B}\n"
      "    fabric: {bandwidth: 400Gbps, delay: 5us, mtu: 4096B, header: 64B}\n"
      "  switch: {buffer: 64MiB, priorities: 8}\n"
      "  transport: {kind: tcp}\n";
  auto busbw = [&](int qps, int initial_window) {
    app::LoadOptions load;
    load.fabric_only_ok = true;
    load.overrides = {app::parse_override("collective.qps_per_connection=" + std::to_string(qps)),
                      app::parse_override("fabric.transport.tcp.initial_window=" +
                                          std::to_string(initial_window))};
    const app::Scenario s = app::load_scenario_text(yaml, "inline", load);
    app::CollectiveSweepOptions o;
    o.min_bytes = o.max_bytes = 64 << 20;
    o.algo = models::CollectiveAlgo::Ring;
    const app::CollectiveSweep sweep = app::run_collective_sweep(s, o);
    REQUIRE(sweep.rows.size() == 1);
    return sweep.rows[0].out_of_place.busbw;
  };
  const double kept = busbw(1, 10);
  const double kept_unlimited = busbw(1, 1'000'000);
  const double fresh = busbw(0, 10);
  const double fresh_unlimited = busbw(0, 1'000'000);
  MESSAGE("bus bandwidth GB/s: persistent " << kept << " (IW 1e6: " << kept_unlimited
                                            << "), fresh per slice " << fresh
                                            << " (IW 1e6: " << fresh_unlimited << ")");
  CHECK(kept == doctest::Approx(kept_unlimited).epsilon(0.02));
  CHECK(fresh < 0.9 * fresh_unlimited);
  CHECK(kept > 1.1 * fresh);
}
