// The RoCE path stays what it was before the InfiniBand link layer: three shipped scenarios (PFC +
// ECN + DCQCN; TCP with losses; ECMP over a fabric with NVLink islands) give, to the event and the
// picosecond, the figures the commit before it (b7871bb) printed with `syncsim run FILE --json`.
// Tolerance-free on purpose: any change to the default path shows here first.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

nlohmann::json run_file(const std::string& name, std::vector<app::Override> overrides = {}) {
  app::LoadOptions o;
  o.overrides = std::move(overrides);
  return app::to_json(app::run_scenario(
      app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name, o)));
}

}  // namespace

TEST_CASE("roce golden: the default link layer gives the figures of the commit before InfiniBand") {
  // Since `observe:` runs partitioned (3 partitions here), the events count the windows, and the
  // run ends 0.5 us later (the last lossless off-wire ACK reaches its sender one lookahead late;
  // docs/performance.md); the rest is b7871bb's. On one queue: 176,370 events, 6.757118246 ms.
  // Since switch ports hand a lossy packet with nothing behind it to the link at its start
  // (egress_port.hpp), its CNPs and ACKs take one event a hop instead of two: 189,075 -> 178,540;
  // since lossless packets are handed over too while their ingress has no PAUSE outstanding, its
  // data as well: 178,540 -> 154,346, every other figure unchanged.
  const nlohmann::json dcqcn = run_file("incast-dcqcn.yaml");
  CHECK(dcqcn["partitions"] == 3);
  CHECK(dcqcn["events"] == 154346);
  CHECK(dcqcn["sim_time_s"].get<double>() == 0.006757618246);
  CHECK(dcqcn["messages"]["fct_s"]["mean"].get<double>() == 0.005957171151529412);
  CHECK(dcqcn["pfc"]["pause_frames"] == 960);
  CHECK(dcqcn["cnps"] == 3512);
  CHECK(dcqcn["dcqcn_rate_cuts"] == 3512);
  CHECK(dcqcn["ecn_marks"] == 3823);
  CHECK(dcqcn["packet_hops"] == 79476);

  // Since TCP runs as partitions in windows (3 here) its figures are still those of b7871bb's one
  // queue; only the events count the windows (255,786 on one queue), and since the hand-over at
  // start (above) 265,875 -> 187,276, every figure unchanged.
  const nlohmann::json tcp = run_file("incast-tcp.yaml");
  CHECK(tcp["partitions"] == 3);
  CHECK(tcp["events"] == 187276);
  CHECK(tcp["sim_time_s"].get<double>() == 0.008384449121);
  CHECK(tcp["messages"]["fct_s"]["mean"].get<double>() == 0.005339266177);
  CHECK(tcp["ecn_marks"] == 15604);
  CHECK(tcp["retransmitted_packets"] == 263);
  CHECK(tcp["packet_hops"] == 127850);

  // Moved twice since b7871bb, by NVLink's credits (sim/net/nvlink_credits.hpp): 65,536 credit
  // returns more events, and the NVLink pushes end 100 ns (one NVLink cable) later; then by the
  // windowed run of its 4 partitions (sim/net/partition_windows.hpp): 225 events more, the windows
  // and the completions reported after them; then by the hand-over at start (above): 370,914 ->
  // 341,478. The fabric's figures (FCT mean, packet hops) are unchanged.
  const nlohmann::json ecmp = run_file("ring-shift-8gpu.yaml", {{"traffic.0.size", "1MiB"}});
  CHECK(ecmp["partitions"] == 4);
  CHECK(ecmp["events"] == 341478);
  CHECK(ecmp["sim_time_s"].get<double>() == 9.1512669e-05);
  CHECK(ecmp["messages"]["fct_s"]["mean"].get<double>() == 2.7916369363636355e-05);
  CHECK(ecmp["packet_hops"] == 152576);
}
