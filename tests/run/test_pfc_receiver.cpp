// Receiver-side PFC: a NIC whose receive buffer drains slower than the link (PCIe / host
// memory bottleneck) pauses its switch; without the pause the buffer overflows (and the RC queue
// pair recovers the drops).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

// host0 (leaf0) -> host1 (leaf1), 4 MB, every link 100 Gb/s; switches lossless on priority 3.
app::RunResult run_rx(const std::string& rx_pfc) {
  const std::string yaml = R"(name: rx-pfc
seed: 1
fidelity: packet
fabric:
  topology: spine_leaf
  spine_leaf: {leaves: 2, hosts_per_leaf: 1, spines: 1}
  host: {gpus: 1, nics: 1}
  links:
    host:   {bandwidth: 100Gbps, delay: 500ns, mtu: 4096B, header: 64B}
    fabric: {bandwidth: 100Gbps, delay: 500ns, mtu: 4096B, header: 64B}
  switch:
    buffer: 4MiB
    pfc: {enabled: true, lossless_priorities: [3]}
  nic: {rx_pfc: )" + rx_pfc +
                           R"(}
traffic:
  - pattern: messages
    messages: [{src: 0, dst: 1, size: 4MB, start: 0us, priority: 3}]
)";
  return app::run_scenario(app::load_scenario_text(yaml, "rx.yaml"));
}

uint64_t dropped(const app::RunResult& r, const std::string& reason) {
  for (const auto& [name, n] : r.drops) {
    if (name == reason) return n;
  }
  return 0;
}

}  // namespace

TEST_CASE("receiver pfc: a NIC draining at 50 Gb/s pauses its switch; lossless at the drain rate") {
  const app::RunResult r =
      run_rx("{enabled: true, buffer: 256KiB, drain_rate: 50Gbps, xoff: 128KiB, xon: 96KiB}");
  CHECK(r.messages_completed == 1);
  CHECK(r.counters.bytes_dropped == 0);
  CHECK(r.nic_pause_frames > 0);
  // The buffer fills past XOFF and stays within its size (the headroom absorbs the PAUSE's trip).
  CHECK(r.max_nic_rx_bytes > 128 * 1024);
  CHECK(r.max_nic_rx_bytes <= 256 * 1024);
  // Throughput is the drain rate: 4 MB of payload at 50 Gb/s of wire bytes (4096 of 4160 payload).
  const double expect = 4e6 * 8 / (50e9 * 4096.0 / 4160.0);
  CHECK(r.fct.max_s == doctest::Approx(expect).epsilon(0.02));
  // The pause spreads: the switch's port to the NIC is paused, and the switches pause upstream.
  CHECK(r.paused_time_s > 0);
  CHECK(app::to_json(r)["pfc"]["nic_pause_frames"].get<uint64_t>() == r.nic_pause_frames);
}

TEST_CASE("receiver pfc: the same NIC without the pause (XOFF at the buffer size) overflows") {
  const app::RunResult r =
      run_rx("{enabled: true, buffer: 256KiB, drain_rate: 50Gbps, xoff: 256KiB, xon: 96KiB}");
  CHECK(r.nic_pause_frames == 0);
  CHECK(dropped(r, "nic_rx_overflow") > 0);
  // The RC queue pair repairs the overflow drops (go-back-N: a NAK, else the ACK timeout), so the
  // message completes, late; every byte sent again is counted as dropped or discarded.
  CHECK(r.messages_completed == 1);
  CHECK(r.rc_recoveries > 0);
  CHECK(r.counters.bytes_injected ==
        r.counters.bytes_delivered + r.counters.bytes_dropped + r.counters.bytes_discarded);
  CHECK(r.counters.bytes_delivered == 4'000'000);
}

TEST_CASE("receiver pfc: off by default; a NIC then consumes at line rate") {
  const app::RunResult r = run_rx("{enabled: false}");
  CHECK(r.nic_pause_frames == 0);
  CHECK(r.messages_completed == 1);
  CHECK(r.fct.max_s < 4e6 * 8 / 90e9);
  CHECK_THROWS_AS(run_rx("{xoff: 300KiB}"), app::ScenarioError);  // above the 256 KiB buffer
}

// ---------------------------------------------------------------- PAUSE quanta

namespace {
app::RunResult incast_pfc(const std::string& quanta) {
  app::LoadOptions o;
  o.overrides.push_back(app::parse_override("fabric.switch.pfc.pause_quanta=" + quanta));
  return app::run_scenario(
      app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/incast-pfc.yaml", o));
}
}  // namespace

TEST_CASE(
    "pause quanta: refreshed while above XOFF, the incast stays lossless; refreshes are frames") {
  const app::RunResult hold = incast_pfc("0");       // a PAUSE holds until RESUME
  const app::RunResult full = incast_pfc("65535");   // 335 us at 100G, 84 us at 400G
  const app::RunResult shortq = incast_pfc("2000");  // 10.24 us at 100G, 2.56 us at 400G
  for (const app::RunResult* r : {&hold, &full, &shortq}) {
    CHECK(r->counters.bytes_dropped == 0);
    CHECK(r->messages_completed == r->messages);
  }
  // Long quanta: pauses here last far less than the quanta, so no refresh fires: same run.
  CHECK(full.pause_frames == hold.pause_frames);
  CHECK(full.fct_by_message_s == hold.fct_by_message_s);
  // Short quanta: the switches re-send PAUSE every half quanta while above XOFF: more frames, and
  // every lapse is covered (still lossless, the same completion time within 5%).
  CHECK(shortq.pause_frames > hold.pause_frames);
  CHECK(shortq.resume_frames == hold.resume_frames);
  CHECK(shortq.sim_time_s == doctest::Approx(hold.sim_time_s).epsilon(0.05));
  MESSAGE("pause frames: until-RESUME " << hold.pause_frames << ", quanta 2000 "
                                        << shortq.pause_frames);
}
