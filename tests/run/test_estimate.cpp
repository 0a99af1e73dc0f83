// Pre-run estimates: sizes from parameters alone, refusal of what cannot fit, the progress text.
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "run/estimate.hpp"
#include "run/estimate_costs.hpp"
#include "run/estimate_traffic.hpp"
#include "run/progress.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/net/port_counters.hpp"
#include "topologies/fabric_builder.hpp"

using namespace syncsim;

namespace {
const std::string kScaleScenario = SYNCSIM_SOURCE_DIR "/scenarios/ddp-70b-16k.yaml";

app::Scenario load(const std::vector<std::pair<std::string, std::string>>& overrides) {
  app::LoadOptions o;
  for (auto& [path, value] : overrides) o.overrides.push_back({path, value});
  return app::load_scenario_file(kScaleScenario, o);
}

// scenarios/NAME with `--set PATH=VALUE` overrides.
app::Scenario load_shipped(const std::string& name,
                           const std::vector<std::pair<std::string, std::string>>& sets = {}) {
  app::LoadOptions o;
  for (const auto& [path, value] : sets) o.overrides.push_back({path, value});
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name, o);
}
}  // namespace

TEST_CASE("estimate: fabric_size matches the built fabric") {
  for (const char* pods : {"1", "2"}) {
    const app::Scenario s =
        load({{"fabric.fat_tree.pods", pods}, {"fabric.fat_tree.leaves_per_pod", "4"}});
    const topo::FabricSize size = topo::fabric_size(s.fabric);
    const net::NetworkSpec spec = topo::build_fabric(s.fabric);
    CHECK(size.gpus == spec.gpus.size());
    CHECK(size.nodes == spec.nodes.size());
    CHECK(size.links == spec.links.size());
    CHECK(size.hosts == spec.hosts);
  }
}

TEST_CASE("estimate: a million GPUs at packet fidelity is refused quickly, with the estimate") {
  const auto t0 = std::chrono::steady_clock::now();
  // 1024 pods x 32 leaves x 4 hosts x 8 GPUs = 1,048,576 GPUs.
  const app::Scenario s = load({{"fabric.fat_tree.pods", "1024"}, {"fidelity", "packet"}});
  const app::Estimate e = app::estimate_run(s);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(seconds < 5.0);
  CHECK(e.memory_bytes > 1e11);  // ~180 GiB: the extrapolation samples alone hold ~1.7e9 transfers
  const auto why = app::refusal(e, 64.0 * (1 << 30));
  REQUIRE(why.has_value());
  CHECK(why->find("estimated memory") != std::string::npos);
  CHECK(why->find("exceeds the 64 GiB available") != std::string::npos);
  CHECK(why->find("--force") != std::string::npos);
  // Unknown availability never refuses; a small scenario fits.
  CHECK_FALSE(app::refusal(e, std::nullopt).has_value());
  const app::Estimate small = app::estimate_run(load({{"fabric.fat_tree.pods", "1"}}));
  CHECK(small.memory_bytes < 2e9);
  CHECK_FALSE(app::refusal(small, 64.0 * (1 << 30)).has_value());
}

TEST_CASE("estimate: memory and time grow with the GPU count") {
  double last_memory = 0, last_wall = 0;
  for (const char* pods : {"1", "4", "16", "64"}) {
    const app::Estimate e = app::estimate_run(load({{"fabric.fat_tree.pods", pods}}));
    CHECK(e.memory_bytes > last_memory);
    CHECK(e.wall_s > last_wall);
    last_memory = e.memory_bytes;
    last_wall = e.wall_s;
  }
}

TEST_CASE("estimate: MemAvailable is read") {
  const auto available = app::available_memory_bytes();
  REQUIRE(available.has_value());
  CHECK(*available > 1e8);
  CHECK(app::peak_rss_bytes() > 1e6);
}

TEST_CASE("progress: text with and without an estimate") {
  CHECK(app::progress_text(3.0, 10.0) ==
        "run: 3.0 s elapsed, ~30% of the estimated 10 s, ETA 7.0 s");
  CHECK(app::progress_text(12.0, 10.0).find("past the estimate") != std::string::npos);
  CHECK(app::progress_text(1.5, 0.0) == "run: 1.5 s elapsed");
}

TEST_CASE("estimate: per port x priority counters are counted when the run keeps them") {
  const app::Scenario s =
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/ring-next-leaf-128.yaml");
  const app::Estimate plain = app::estimate_run(s);
  const app::Estimate counted = app::estimate_run(s, /*port_counters=*/true);
  const double ports = 2.0 * static_cast<double>(topo::fabric_size(s.fabric).links);
  CHECK(counted.memory_bytes - plain.memory_bytes ==
        doctest::Approx(ports * s.fabric.switch_params.priorities *
                        static_cast<double>(sizeof(net::PriorityCounters))));
  // Only packet fidelity keeps them.
  app::Scenario flow = s;
  flow.fidelity = Fidelity::Flow;
  CHECK(app::estimate_run(flow, true).memory_bytes == app::estimate_run(flow).memory_bytes);
}

TEST_CASE("estimate: a refusal names the largest part and the cheaper idle-fabric timing") {
  // The 405B recipe event by event with every transfer live: too big for 8 GiB; the refusal says
  // what is big and that idle-fabric timing would run it.
  app::LoadOptions o;
  o.overrides = {{"fabric.fat_tree.pods", "1"}, {"workload.step_engine", "event_driven"}};
  const app::Scenario live =
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/llama3-405b-16k.yaml", o);
  const app::Estimate e = app::estimate_run(live);
  const auto why = app::refusal(e, 8.0 * (1 << 30));
  REQUIRE(why.has_value());
  CHECK(why->find("the largest part is transfers") != std::string::npos);
  CHECK(why->find("workload.collective_timing: idle_fabric") != std::string::npos);
  o.overrides.push_back({"workload.collective_timing", "idle_fabric"});
  const app::Estimate idle = app::estimate_run(
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/llama3-405b-16k.yaml", o));
  CHECK(idle.cheaper.empty());
  CHECK(idle.memory_bytes < e.memory_bytes / 10);
  CHECK_FALSE(app::refusal(idle, 8.0 * (1 << 30)).has_value());
}

TEST_CASE("estimate: plain FSDP run live counts every gather and scatter, and names reuse") {
  // The built-in default (FSDP on 128 GPUs): with reused timings each distinct gather and scatter
  // runs once on an idle fabric; without, every one of every unit runs live and the network keeps
  // their records (measured 3.79 GiB peak RSS and 61 s; the estimate 4.22 GiB and 61 s).
  const app::Estimate reused = app::estimate_run(load_shipped("default.yaml"));
  const app::Estimate live =
      app::estimate_run(load_shipped("default.yaml", {{"workload.reuse_bucket_timings", "false"}}));
  CHECK(reused.cheaper.empty());
  CHECK(live.transfers > 10 * reused.transfers);  // 5.3e7 against 2.1e6
  CHECK(live.memory_bytes > 3.0 * (1 << 30));
  CHECK(live.memory_bytes < 4.5 * (1 << 30));
  CHECK(live.wall_s > 10 * reused.wall_s);
  const auto why = app::refusal(live, 2.0 * (1 << 30));
  REQUIRE(why.has_value());
  CHECK(why->find("the largest part is records") != std::string::npos);
  CHECK(why->find("workload.reuse_bucket_timings: true") != std::string::npos);
  // A ring all-gather over n ranks is n (n - 1) transfers a channel: a quarter of the GPUs, about
  // a sixteenth of the live transfers.
  const app::Estimate quarter = app::estimate_run(
      load_shipped("default.yaml", {{"workload.reuse_bucket_timings", "false"},
                                    {"fabric.rail_optimized.hosts_per_group", "4"}}));
  CHECK(live.transfers / quarter.transfers == doctest::Approx(16).epsilon(0.25));
  // As HSDP (shard groups of 8, all-reduces across the 16 replicas): 0.84 GiB peak RSS measured.
  const app::Estimate hsdp =
      app::estimate_run(load_shipped("default.yaml", {{"workload.reuse_bucket_timings", "false"},
                                                      {"workload.fsdp.shard_degree", "8"}}));
  CHECK(hsdp.memory_bytes > 0.84 * (1 << 30) / 1.5);
  CHECK(hsdp.memory_bytes < 0.84 * (1 << 30) * 1.5);
}

TEST_CASE("estimate: network faults run the step's collectives live, as the run does") {
  // link-failure.yaml (TP 2 x PP 2 at flow fidelity, a link degraded then down): with network
  // faults every collective runs live on the faulty fabric and the model-parallel step event by
  // event (run/fault_run.cpp), whatever the workload says; the estimate counts it so (9.7e3
  // transfers against the run's 19,746 events, two a transfer; 2.4e3 as the idle-fabric closed
  // form, 0.43-0.59x the measured wall).
  const app::Estimate faulted = app::estimate_run(load_shipped("link-failure.yaml"));
  const app::Estimate live = app::estimate_run(load_shipped(
      "link-failure.yaml", {{"faults", "[]"}, {"workload.reuse_bucket_timings", "false"}}));
  const app::Estimate idle =
      app::estimate_run(load_shipped("link-failure.yaml", {{"faults", "[]"}}));
  CHECK(faulted.transfers == live.transfers);
  CHECK(faulted.transfers > 3 * idle.transfers);
  // ...and so does saying reuse: the faults win, as in the run.
  CHECK(app::estimate_run(
            load_shipped("link-failure.yaml", {{"workload.reuse_bucket_timings", "true"}}))
            .transfers == faulted.transfers);
  // A straggler is no network fault: straggler.yaml keeps its idle-fabric timings.
  CHECK(app::estimate_run(load_shipped("straggler.yaml")).transfers ==
        app::estimate_run(load_shipped("straggler.yaml", {{"faults", "[]"}})).transfers);
}

TEST_CASE("estimate: --threads shortens the DDP step's idle runs, and holds more of them at once") {
  // 1,024 GPUs: Simple buckets by extrapolation (two samples), LL128 and small buckets whole.
  const app::Scenario s = load({{"fabric.fat_tree.pods", "1"}});
  const app::Estimate one = app::estimate_run(s);
  const app::Estimate two = app::estimate_run(s, false, 2);
  const app::Estimate many = app::estimate_run(s, false, 64);
  CHECK(two.transfers == one.transfers);  // the same work
  CHECK(two.wall_s < one.wall_s);
  CHECK(two.wall_s > one.wall_s / 2);  // no better than a perfect split
  CHECK(many.wall_s <= two.wall_s);
  CHECK(two.memory_bytes > one.memory_bytes);
  CHECK(many.memory_bytes >= two.memory_bytes);
  // The closed form of a model-parallel layout: its collectives' simulations run at once too.
  app::LoadOptions o;
  o.overrides = {{"fabric.fat_tree.pods", "1"}};
  const app::Scenario layout =
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/llama3-405b-16k.yaml", o);
  const app::Estimate layout_one = app::estimate_run(layout);
  const app::Estimate layout_two = app::estimate_run(layout, false, 2);
  CHECK(layout_two.wall_s < layout_one.wall_s);
  CHECK(layout_two.memory_bytes > layout_one.memory_bytes);
}

TEST_CASE(
    "estimate: --threads shortens a packet-level traffic run that is partitioned, not others") {
  const auto file = [](const char* name,
                       const std::vector<std::pair<std::string, std::string>>& set) {
    app::LoadOptions o;
    for (const auto& [path, value] : set) o.overrides.push_back({path, value});
    return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name, o);
  };
  // 32 leaves: 32 partitions, so 2 threads both work.
  const app::Scenario ring = file("ring-next-leaf-1024.yaml", {});
  const double one = app::estimate_run(ring).wall_s;
  const double two = app::estimate_run(ring, false, 2).wall_s;
  CHECK(two < one);
  CHECK(two > one / 2);
  // PFC, TCP, spraying and jitter run partitioned too; normal jitter whose spread reaches zero
  // delay leaves no lookahead and keeps the run on one queue (fabric_partition.hpp): no gain.
  const app::Scenario pfc =
      file("ring-next-leaf-1024.yaml", {{"fabric.switch.pfc.enabled", "true"}});
  CHECK(app::estimate_run(pfc, false, 2).wall_s < app::estimate_run(pfc).wall_s);
  const app::Scenario tcp = file("ring-next-leaf-1024.yaml", {{"fabric.transport.kind", "tcp"}});
  CHECK(app::estimate_run(tcp, false, 2).wall_s < app::estimate_run(tcp).wall_s);
  const app::Scenario spray =
      file("ring-next-leaf-1024.yaml", {{"fabric.load_balancing", "packet_spray"}});
  CHECK(app::estimate_run(spray, false, 2).wall_s < app::estimate_run(spray).wall_s);
  const app::Scenario jitter =
      file("ring-next-leaf-1024.yaml", {{"fabric.impairments.jitter.distribution", "normal"},
                                        {"fabric.impairments.jitter.stddev_fraction", "0.05"}});
  CHECK(app::estimate_run(jitter, false, 2).wall_s < app::estimate_run(jitter).wall_s);
  const app::Scenario wide =
      file("ring-next-leaf-1024.yaml", {{"fabric.impairments.jitter.distribution", "normal"},
                                        {"fabric.impairments.jitter.stddev_fraction", "0.5"}});
  CHECK(app::estimate_run(wide, false, 2).wall_s == app::estimate_run(wide).wall_s);
  // Time series stop the windows at their samples but keep the partitions.
  const app::Scenario observed = file("incast-dcqcn.yaml", {});
  REQUIRE(observed.observe);
  CHECK(app::estimate_run(observed, false, 2).wall_s < app::estimate_run(observed).wall_s);
  // Flow fidelity: no partitions either.
  const app::Scenario flow = file("ring-next-leaf-1024.yaml", {{"fidelity", "flow"}});
  CHECK(app::estimate_run(flow, false, 2).wall_s == app::estimate_run(flow).wall_s);
}

TEST_CASE("estimate: a Chakra trace's collectives are counted as the replay plans them") {
  // chakra-replay-8: 4 collectives over 8 ranks on 16 channels; every transfer the replay runs is
  // a completed network transfer, and the estimate plans each collective as the replay does.
  const app::Scenario s =
      app::load_scenario_file(SYNCSIM_SOURCE_DIR "/scenarios/chakra-replay-8.yaml");
  const app::Estimate e = app::estimate_run(s);
  const app::RunResult r = app::run_scenario(s);
  REQUIRE(r.transfers_completed > 0);
  CHECK(r.messages_completed == 0);  // no traffic: the replay's transfers are not messages
  CHECK(e.transfers == static_cast<double>(r.transfers_completed));
  bool counted = false;
  for (const auto& [name, bytes] : e.memory_parts) counted |= name == "chakra" && bytes > 0;
  CHECK(counted);
}

TEST_CASE("estimate: packets in flight are bounded by the buffers; --json adds its flow list") {
  auto part = [](const app::Estimate& e, const std::string& name) {
    double sum = 0;
    for (const auto& [n, bytes] : e.memory_parts) {
      if (n == name) sum += bytes;
    }
    return sum;
  };
  app::LoadOptions o;
  const std::string file = SYNCSIM_SOURCE_DIR "/scenarios/ring-next-leaf-128.yaml";
  const app::Scenario deep = app::load_scenario_file(file, o);
  o.overrides.push_back({"fabric.switch.buffer", "1MiB"});
  const app::Scenario shallow = app::load_scenario_file(file, o);
  const app::Estimate a = app::estimate_run(deep);
  const app::Estimate b = app::estimate_run(shallow);
  // 1 GiB buffers hold a third of the 2 GB sent; 1 MiB buffers cap it at what they hold.
  CHECK(part(a, "packets") > 0);
  CHECK(part(b, "packets") < part(a, "packets") / 50);
  const double switches = static_cast<double>(topo::fabric_size(shallow.fabric).switches);
  CHECK(part(b, "packets") == doctest::Approx(switches * (1 << 20) / 3.0 / 4096 * 40.0));
  // The JSON document lists a flow per message (128 here); text output builds no such list.
  CHECK(part(a, "json output") == 0);
  const app::Estimate j = app::estimate_run(deep, app::EstimateOptions{false, 1, true});
  CHECK(part(j, "json output") == doctest::Approx(128 * 1200.0));
  CHECK(j.memory_bytes > a.memory_bytes);
  // Flow fidelity keeps no packets and lists no flows.
  o.overrides = {{"fidelity", "flow"}};
  const app::Scenario flow = app::load_scenario_file(file, o);
  const app::Estimate f = app::estimate_run(flow, app::EstimateOptions{false, 1, true});
  CHECK(part(f, "packets") == 0);
  CHECK(part(f, "json output") == 0);
}

TEST_CASE("estimate: a packet hop costs what the runs measured, by the fabric's port state") {
  // User time over the hops each run made (docs/performance.md, "Packet hops by the fabric's size
  // and by jitter"): 0.09-0.13 us on 16 hosts, 0.17-0.18 us at 128, 0.27 us at 1,024, 0.63 us at
  // 8,192; within 1.3x of each.
  const auto us = [](double state_bytes, bool jitter = false) {
    return app::packet_seconds_per_hop(state_bytes, jitter) * 1e6;
  };
  CHECK(us(0.144e6) > 0.09 / 1.3);
  CHECK(us(0.144e6) < 0.13 * 1.3);
  // ...and the short congested incasts on 27 hosts (0.18 MB) 0.20-0.22 us (whole process,
  // 2026-12-07): a floor keeps small fabrics within 1.5x of those.
  CHECK(us(0.18e6) >= 0.21 / 1.5);
  CHECK(us(1.536e6) == doctest::Approx(0.175).epsilon(0.3));
  CHECK(us(12.3e6) == doctest::Approx(0.27).epsilon(0.3));
  CHECK(us(147e6) == doctest::Approx(0.63).epsilon(0.3));
  // Rising with the state; jitter-efficiency's normal jitter: 0.24 us against 0.13 without.
  CHECK(us(0.1e6) < us(1e6));
  CHECK(us(1e6) < us(10e6));
  CHECK(us(10e6) < us(100e6));
  CHECK(us(0.12e6, true) == doctest::Approx(0.237).epsilon(0.3));
}

TEST_CASE("estimate: a lossless class whose headroom is short counts its resends, and says so") {
  // 2 KiB against 33,384 B on the host links and 108,384 B on the fabric links (the run's
  // configuration warning gives the same numbers: sim/net/configuration_check.cpp).
  const app::Estimate short_headroom = app::estimate_run(load_shipped("headroom-too-small.yaml"));
  REQUIRE(short_headroom.caveats.size() == 1);
  const std::string& caveat = short_headroom.caveats.front();
  CHECK(caveat.find("fabric.switch.pfc.headroom: 2048 B") == 0);
  CHECK(caveat.find("host links (33384 B) and fabric links (108384 B)") != std::string::npos);
  CHECK(app::to_json(short_headroom)["caveats"].size() == 1);
  CHECK(app::to_text(short_headroom).find("estimate: caveat: fabric.switch.pfc.headroom") !=
        std::string::npos);
  CHECK(caveat.find("sent 16 times") != std::string::npos);
  // The 17 messages of 1 MB, 16 into one GPU: each counted as sent 16 times, so 16x the hops the
  // same incast makes with the headroom PFC needs (the run: 362,131 hops, 19x; docs/scale.md).
  const app::Estimate enough = app::estimate_run(
      load_shipped("headroom-too-small.yaml", {{"fabric.switch.pfc.headroom", "auto"}}));
  CHECK(short_headroom.packet_hops == doctest::Approx(16 * enough.packet_hops));
  CHECK(short_headroom.wall_s > 2 * enough.wall_s);
  // Enough for the host links, not for the 400 Gb/s fabric links: only those are named.
  const app::Estimate fabric_only = app::estimate_run(
      load_shipped("headroom-too-small.yaml", {{"fabric.switch.pfc.headroom", "40KiB"}}));
  REQUIRE(fabric_only.caveats.size() == 1);
  CHECK(fabric_only.caveats.front().find("host links") == std::string::npos);
  CHECK(fabric_only.caveats.front().find("fabric links (108384 B)") != std::string::npos);
  // The same incast with the headroom PFC needs (`auto`), or on a lossy priority: nothing to say.
  CHECK(app::estimate_run(load_shipped("incast-pfc.yaml")).caveats.empty());
  CHECK(app::estimate_run(
            load_shipped("headroom-too-small.yaml", {{"fabric.switch.pfc.headroom", "auto"}}))
            .caveats.empty());
  CHECK(app::estimate_run(load_shipped("headroom-too-small.yaml",
                                       {{"fabric.switch.pfc.lossless_priorities", "[5]"}}))
            .caveats.empty());
  CHECK(app::to_json(app::estimate_run(load_shipped("incast-pfc.yaml")))["caveats"].empty());
}

TEST_CASE("estimate: lossless resends follow the measured incasts within 1.3x") {
  // headroom-too-small.yaml's incast with 4, 8 and 16 senders of 256 KB, 1 MB and 4 MB each: the
  // run's packet hops over the hops of each message sent once (2026-12-07, `ci` build).
  struct Measured {
    double senders, bytes, sends;
  };
  for (const Measured m : {Measured{4, 256e3, 3.2},
                           {4, 1e6, 6.4},
                           {4, 4e6, 17.6},
                           {8, 256e3, 7.1},
                           {8, 1e6, 15.4},
                           {8, 4e6, 41.9},
                           {16, 256e3, 7.9},
                           {16, 1e6, 18.2},
                           {16, 4e6, 43.1}}) {
    CAPTURE(m.senders);
    CAPTURE(m.bytes);
    const double ratio = app::lossless_sends(m.bytes, m.senders) / m.sends;
    CHECK(ratio > 1 / 1.3);
    CHECK(ratio < 1.3);
  }
  // Never fewer than one send, whatever the size or fan-in.
  CHECK(app::lossless_sends(1e3, 1) == 1.0);
}
