// DCQCN reaction point against hand-computed sequences (issue 3), and the DCQCN incast.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"
#include "sim/net/dcqcn.hpp"

using namespace syncsim;
using namespace syncsim::net;

namespace {
constexpr double kG = 1e9;
}  // namespace

TEST_CASE("dcqcn: a CNP cuts the rate to RC * (1 - alpha/2) and moves alpha towards 1") {
  DcqcnParams p = DcqcnParams::paper();
  p.initial_alpha = 0.5;
  DcqcnRateController c(p, Bandwidth::gbps(100));
  CHECK_FALSE(c.limited());
  CHECK(c.on_cnp(Time::us(10)));
  CHECK(c.rate_bps() == doctest::Approx(100 * kG * (1 - 0.25)));
  CHECK(c.target_bps() == doctest::Approx(100 * kG));
  const double a1 = (1 - p.g) * 0.5 + p.g;
  CHECK(c.alpha(Time::us(10)) == doctest::Approx(a1));
  CHECK(c.limited());
  // A second CNP (the paper has no decrease period: every CNP cuts) uses the updated alpha.
  CHECK(c.on_cnp(Time::us(20)));
  CHECK(c.target_bps() == doctest::Approx(75 * kG));
  CHECK(c.rate_bps() == doctest::Approx(75 * kG * (1 - a1 / 2)));
  CHECK(c.alpha(Time::us(20)) == doctest::Approx((1 - p.g) * a1 + p.g));
}

TEST_CASE("dcqcn: five fast-recovery steps from 50 to 100 Gb/s land at 100 - 50/2^5 Gb/s") {
  const DcqcnParams p = DcqcnParams::paper();  // initial alpha 1: the first CNP halves the rate
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());
  REQUIRE(c.rate_bps() == doctest::Approx(50 * kG));
  double expect = 50 * kG;
  for (int i = 0; i < 5; ++i) {
    c.on_rate_timer();
    expect = (100 * kG + expect) / 2;
    CHECK(c.rate_bps() == doctest::Approx(expect));
    CHECK(c.target_bps() == doctest::Approx(100 * kG));
  }
  CHECK(c.rate_bps() == doctest::Approx(100 * kG - 50 * kG / 32));
}

TEST_CASE("dcqcn: additive then hyper increase follow the timer and byte counters") {
  const DcqcnParams p = DcqcnParams::paper();
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());    // RT 100, RC 50, alpha stays 1 ((1-g) * 1 + g)
  c.on_cnp(Time::us(50));    // RT 50, RC 25
  REQUIRE(c.target_bps() == doctest::Approx(50 * kG));
  REQUIRE(c.rate_bps() == doctest::Approx(25 * kG));
  for (int i = 0; i < 5; ++i) c.on_rate_timer();  // fast recovery: RT stays 50
  double rc = 50 * kG - 25 * kG / 32;
  CHECK(c.rate_bps() == doctest::Approx(rc));
  double rt = 50 * kG;
  c.on_rate_timer();  // T = 6 > F, BC = 0: additive
  rt += 40e6;
  rc = (rt + rc) / 2;
  CHECK(c.target_bps() == doctest::Approx(rt));
  CHECK(c.rate_bps() == doctest::Approx(rc));
  // Five byte-counter events: T = 6 > F but BC <= F, still additive.
  CHECK(c.on_bytes_sent(5 * p.byte_counter) == 5);
  for (int i = 0; i < 5; ++i) {
    rt += 40e6;
    rc = (rt + rc) / 2;
  }
  CHECK(c.target_bps() == doctest::Approx(rt));
  CHECK(c.rate_bps() == doctest::Approx(rc));
  // The sixth byte event makes min(T, BC) = 6 > F: hyper increase with i = 1, then i = 2 (timer).
  CHECK(c.on_bytes_sent(p.byte_counter - 1) == 0);
  CHECK(c.on_bytes_sent(1) == 1);
  rt += 400e6;
  rc = (rt + rc) / 2;
  CHECK(c.target_bps() == doctest::Approx(rt));
  CHECK(c.rate_bps() == doctest::Approx(rc));
  c.on_rate_timer();  // T = 7, BC = 6: i = 1 again
  rt += 400e6;
  rc = (rt + rc) / 2;
  CHECK(c.target_bps() == doctest::Approx(rt));
  c.on_bytes_sent(p.byte_counter);  // T = 7, BC = 7: i = 2
  rt += 2 * 400e6;
  rc = (rt + rc) / 2;
  CHECK(c.target_bps() == doctest::Approx(rt));
  CHECK(c.rate_bps() == doctest::Approx(rc));
  // A cut resets both counters: the next event is fast recovery again.
  c.on_cnp(Time::us(100));
  const double rt_after_cut = c.target_bps();
  c.on_rate_timer();
  CHECK(c.target_bps() == doctest::Approx(rt_after_cut));
}

TEST_CASE("dcqcn: increases clamp at line rate and the flow stops being limited") {
  const DcqcnParams p = DcqcnParams::paper();
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());
  for (int i = 0; i < 40; ++i) c.on_rate_timer();
  CHECK(c.target_bps() == 100 * kG);
  CHECK(c.rate_bps() == 100 * kG);
  CHECK_FALSE(c.limited());
}

TEST_CASE("dcqcn: alpha decays by (1 - g) per quiet alpha period") {
  const DcqcnParams p = DcqcnParams::paper();
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::us(100));
  const double a = c.alpha(Time::us(100));
  // Initial alpha 1 decayed over one quiet 55 us period before the CNP at 100 us, then the update.
  CHECK(a == doctest::Approx((1 - p.g) * (1 - p.g) + p.g));
  CHECK(c.alpha(Time::us(154)) == doctest::Approx(a));  // less than one 55 us period
  CHECK(c.alpha(Time::us(155)) == doctest::Approx(a * (1 - p.g)));
  CHECK(c.alpha(Time::us(100 + 3 * 55 + 1)) == doctest::Approx(a * std::pow(1 - p.g, 3)));
  // The next CNP cuts with the decayed alpha and restarts the quiet period.
  const double decayed = a * std::pow(1 - p.g, 10);
  const double rc = c.rate_bps();
  c.on_cnp(Time::us(100 + 10 * 55));
  CHECK(c.rate_bps() == doctest::Approx(rc * (1 - decayed / 2)));
  CHECK(c.alpha(Time::us(100 + 10 * 55)) == doctest::Approx((1 - p.g) * decayed + p.g));
}

TEST_CASE("dcqcn: ConnectX preset cuts at most once per 4 us and never below the minimum rate") {
  const DcqcnParams p = DcqcnParams::connectx();
  CHECK(p.g == doctest::Approx(5.0 / 1024));
  CHECK(p.fast_recovery_steps == 1);
  CHECK(p.rate_period == Time::us(300));
  CHECK(p.byte_counter == 32767);
  CHECK(p.cnp_interval == Time::us(4));
  DcqcnRateController c(p, Bandwidth::gbps(100));
  CHECK(c.on_cnp(Time::zero()));
  const double rc = c.rate_bps();
  CHECK(rc == doctest::Approx(100 * kG * (1 - (1023.0 / 1024) / 2)));
  const double a1 = c.alpha(Time::zero());
  // Inside the decrease period: alpha moves (after 3 quiet 1 us periods of decay), the rate does not.
  CHECK_FALSE(c.on_cnp(Time::us(3)));
  CHECK(c.rate_bps() == rc);
  CHECK(c.alpha(Time::us(3)) == doctest::Approx((1 - p.g) * (a1 * std::pow(1 - p.g, 3)) + p.g));
  CHECK(c.on_cnp(Time::us(4)));
  CHECK(c.rate_bps() < rc);
  for (int i = 0; i < 2000; ++i) c.on_cnp(Time::us(4 + 4 * (i + 1)));
  CHECK(c.rate_bps() == doctest::Approx(1e6));
  // clamp_tgt_rate = 0: back-to-back cuts with no timer increase in between leave RT where it was
  // before the burst (the line rate here), so the first timer event (fast recovery, F = 1) returns
  // halfway to it.
  CHECK(c.target_bps() == doctest::Approx(100 * kG));
  c.on_rate_timer();
  CHECK(c.rate_bps() == doctest::Approx((100 * kG + 1e6) / 2));
  // With F = 1 the second increase event is already additive (+5 Mb/s, clamped at line rate).
  c.on_rate_timer();
  CHECK(c.target_bps() == doctest::Approx(100 * kG));
  // After a timer increase, the next cut does set RT = RC.
  const double before = c.rate_bps();
  CHECK(c.on_cnp(Time::ms(100)));
  CHECK(c.target_bps() == doctest::Approx(before));
}

TEST_CASE("dcqcn: the paper's clamp sets RT = RC on every cut; a disabled byte counter steps by timer") {
  DcqcnParams p = DcqcnParams::paper();
  DcqcnRateController c(p, Bandwidth::gbps(100));
  c.on_cnp(Time::zero());             // alpha 1: 100 -> 50, RT = 100
  c.on_cnp(Time::us(60));             // RT = 50
  CHECK(c.target_bps() == doctest::Approx(50 * kG));
  p.clamp_target_rate = false;        // the same cuts without the clamp keep RT at 100
  DcqcnRateController u(p, Bandwidth::gbps(100));
  u.on_cnp(Time::zero());
  u.on_cnp(Time::us(60));
  CHECK(u.target_bps() == doctest::Approx(100 * kG));
  CHECK(u.rate_bps() == doctest::Approx(c.rate_bps()));

  // Byte counter disabled (HPCC's model of the Mellanox NIC): F = 1, timer events 1, 2, 3, 4 give
  // fast recovery, additive (+R_AI), then hyper (+R_HAI each).
  DcqcnParams t = DcqcnParams::connectx();
  t.byte_counter = 0;
  DcqcnRateController h(t, Bandwidth::gbps(100));
  h.on_cnp(Time::zero());
  h.on_cnp(Time::us(10));
  const double rt = h.target_bps();
  CHECK(h.on_bytes_sent(10'000'000) == 0);
  double rc = h.rate_bps();
  h.on_rate_timer();
  CHECK(h.target_bps() == doctest::Approx(rt));
  CHECK(h.rate_bps() == doctest::Approx((rt + rc) / 2));
  // From here RT is below the line rate: take it down first to see the steps.
  h.on_cnp(Time::us(400));  // timer fired since the last cut: RT = RC
  const double rt2 = h.target_bps();
  h.on_rate_timer();        // T = 1: fast recovery
  CHECK(h.target_bps() == doctest::Approx(rt2));
  h.on_rate_timer();        // T = 2: additive
  CHECK(h.target_bps() == doctest::Approx(rt2 + 5e6));
  h.on_rate_timer();        // T = 3: hyper
  CHECK(h.target_bps() == doctest::Approx(rt2 + 5e6 + 50e6));
  h.on_rate_timer();        // T = 4: hyper
  CHECK(h.target_bps() == doctest::Approx(rt2 + 5e6 + 100e6));
  rc = h.rate_bps();
  CHECK(rc < h.target_bps());
}

// ---------------------------------------------------------------- the DCQCN incast (phenomenon 2)

namespace {

app::Scenario scenario_file(const std::string& name, std::vector<app::Override> overrides = {}) {
  app::LoadOptions o;
  o.overrides = std::move(overrides);
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name, o);
}

uint64_t dropped_packets(const app::RunResult& r) {
  uint64_t n = 0;
  for (const auto& d : r.drops) n += d.second;
  return n;
}

// Jain's index of the 16 incast senders' mean rates in the stated window (the victim, host17, left out).
double sender_jain(const app::FlowRateStats& fr) {
  double sum = 0;
  double sq = 0;
  int n = 0;
  for (const auto& f : fr.flows) {
    if (f.src == "host17.nic0") continue;
    sum += f.bps;
    sq += f.bps * f.bps;
    ++n;
  }
  return n == 0 || sq == 0 ? 0.0 : sum * sum / (n * sq);
}

double sender_sum_bps(const app::FlowRateStats& fr) {
  double sum = 0;
  for (const auto& f : fr.flows) {
    if (f.src != "host17.nic0") sum += f.bps;
  }
  return sum;
}

}  // namespace

// Issue 3, phenomenon 2 (seed 1; numbers from this test's MESSAGEs). 16 senders x 4 MB -> host 0
// from t = 0; the victim (1 MB, host17 -> host1) starts at 2 ms, once DCQCN has settled.
//   PFC alone: 3847 pauses, victim 1537 us (alone 84 us), incast done at 5.20 ms.
//   DCQCN:      966 pauses (1/4), victim 84 us, incast done at 6.52 ms; over [1 ms, 4 ms] Jain 0.998
//               (16 senders) / 0.986 (all 17 flows), the senders deliver 79 Gb/s together (PFC
//               alone: 98.5), bottleneck queue mean 30 KB (Kmin 20, Kmax 60), max 116 KB.
// Most of DCQCN's pauses fall in the first ~1 ms: 16 senders start at line rate, PFC holds ~2 MB in
// the fabric and every flow is cut to a few Mb/s while that drains; after that the rate timers
// hold the aggregate under the link rate. Not shown here: the stock ConnectX byte counter (32 KB,
// with the unclamped target it pulls a flow halfway back to line rate after every 32 KB) keeps the
// incast oscillating: 2136 pauses, Jain 0.73 over [1 ms, 4 ms]; incast-dcqcn.yaml says so.
TEST_CASE("dcqcn incast: lossless, far fewer pauses than PFC alone, fair, bounded queue, the victim recovers") {
  const app::RunResult pfc = app::run_scenario(scenario_file("incast-pfc.yaml"));
  app::Scenario s = scenario_file("incast-dcqcn.yaml");
  app::Scenario alone_s = s;
  alone_s.traffic.resize(1);  // the victim alone
  const app::RunResult alone = app::run_scenario(alone_s);
  s.observe.emplace();
  s.observe->ports = {"leaf0->host0.nic0"};
  s.observe->interval = Time::us(1);
  s.observe->flows = false;
  s.observe->rate_window = true;
  s.observe->window_start = Time::ms(1);
  s.observe->window_end = Time::ms(4);
  const auto dir = std::filesystem::temp_directory_path() / "syncsim_test_dcqcn_incast";
  s.observe->csv_dir = dir.string();
  const app::RunResult dc = app::run_scenario(s);
  const double victim_alone = alone.fct_by_message_s.at(0);
  // Messages are in start order: the victim, starting at 2 ms, is the last one.
  REQUIRE(dc.fct_by_message_s.size() == 17);
  REQUIRE(pfc.fct_by_message_s.size() == 17);
  const double victim_pfc = pfc.fct_by_message_s.back();
  const double victim_dc = dc.fct_by_message_s.back();
  MESSAGE("victim alone " << victim_alone * 1e6 << " us");
  MESSAGE("PFC only: pauses " << pfc.pause_frames << ", victim " << victim_pfc * 1e6 << " us, last "
                              << pfc.sim_time_s * 1e6 << " us");
  MESSAGE("DCQCN:    pauses " << dc.pause_frames << ", victim " << victim_dc * 1e6 << " us, last "
                              << dc.sim_time_s * 1e6 << " us, CNPs " << dc.cnps << ", cuts " << dc.rate_cuts
                              << "; over [1 ms, 4 ms]: Jain senders " << sender_jain(dc.flow_rates)
                              << ", all " << dc.flow_rates.jain_index << ", senders' sum "
                              << sender_sum_bps(dc.flow_rates) / kG << " Gb/s");
  // Lossless, everything delivered, DCQCN active.
  CHECK(dropped_packets(dc) == 0);
  CHECK(dc.counters.bytes_dropped == 0);
  CHECK(dc.messages_completed == dc.messages);
  CHECK(dc.counters.bytes_delivered == dc.counters.bytes_injected);
  CHECK(dc.cnps > 0);
  CHECK(dc.rate_cuts > 0);
  CHECK(dc.warnings.empty());
  // No DCQCN timer outlives its flow: the last event is at most a CNP's trip after the last
  // completion (a 300 us rate timer left pending would show here).
  CHECK(dc.sim_time_s - dc.fct.max_s < 10e-6);
  // Far fewer pauses than PFC alone on the same incast: at most a third.
  CHECK(3 * dc.pause_frames <= pfc.pause_frames);
  CHECK(dc.pause_frames > 0);  // the line-rate start still pauses: DCQCN needs an RTT to react
  // Fair shares over the stated window [1 ms, 4 ms] (every flow active in it; the victim counts
  // only in the second index), and the senders are not starved: the 100G bottleneck stays busy.
  REQUIRE(dc.flow_rates.stated_window);
  CHECK(dc.flow_rates.flows.size() == 17);
  CHECK(sender_jain(dc.flow_rates) >= 0.95);
  CHECK(dc.flow_rates.jain_index >= 0.95);
  CHECK(sender_sum_bps(dc.flow_rates) > 70 * kG);
  CHECK(sender_sum_bps(dc.flow_rates) <= 100 * kG);
  // The victim recovers: under PFC alone head-of-line blocking slows it > 5x; with DCQCN it runs
  // within 20% of its time alone.
  CHECK(victim_pfc > 5 * victim_alone);
  CHECK(victim_dc < 1.2 * victim_alone);
  // The bottleneck queue (leaf0 -> host0, sampled every 1 us) over the window: on average between
  // Kmin (20 KB) and Kmax (60 KB), never above 2 x Kmax.
  std::ifstream csv(dir / "queues.csv");
  REQUIRE(csv.good());
  std::string line;
  std::getline(csv, line);
  int64_t max_queue = 0;
  double sum_queue = 0;
  std::size_t samples = 0;
  while (std::getline(csv, line)) {
    const auto c1 = line.find(',');
    const auto c2 = line.find(',', c1 + 1);
    const auto c3 = line.find(',', c2 + 1);
    CHECK(line.substr(c1 + 1, c2 - c1 - 1) == "leaf0->host0.nic0");
    const double t = std::stod(line.substr(0, c1));
    if (t < 1e-3 || t > 4e-3) continue;
    const int64_t q = std::stoll(line.substr(c2 + 1, c3 - c2 - 1));
    max_queue = std::max(max_queue, q);
    sum_queue += static_cast<double>(q);
    ++samples;
  }
  REQUIRE(samples > 2000);
  const double mean_queue = sum_queue / static_cast<double>(samples);
  MESSAGE("bottleneck queue over [1 ms, 4 ms]: mean " << mean_queue << " B, max " << max_queue << " B, "
                                                      << samples << " samples");
  CHECK(mean_queue >= 20'000);
  CHECK(mean_queue <= 60'000);
  CHECK(max_queue <= 2 * 60'000);
  std::filesystem::remove_all(dir);
  // The "no drop" above is PFC's doing: the same run with PFC off drops on the 1 MiB buffer.
  const app::RunResult lossy = app::run_scenario(
      scenario_file("incast-dcqcn.yaml", {app::parse_override("fabric.switch.pfc.enabled=false")}));
  MESSAGE("DCQCN without PFC: " << dropped_packets(lossy) << " packets dropped");
  CHECK(dropped_packets(lossy) > 0);
  CHECK(lossy.messages_completed == lossy.messages);
  // Deterministic.
  const app::RunResult again = app::run_scenario(scenario_file("incast-dcqcn.yaml"));
  CHECK(again.events == dc.events);
  CHECK(again.fct_by_message_s == dc.fct_by_message_s);
  CHECK(again.cnps == dc.cnps);
  const nlohmann::json j = app::to_json(dc);
  CHECK(j["cnps"].get<uint64_t>() == dc.cnps);
  CHECK(j["jain_index"].get<double>() > 0.0);
  CHECK(j["flow_rates"]["jain_index"].get<double>() == dc.flow_rates.jain_index);
}

TEST_CASE("observe: sampling does not change the run, and a stated rate window is used") {
  const app::RunResult plain = app::run_scenario(scenario_file("incast-dcqcn.yaml"));
  app::Scenario s = scenario_file("incast-dcqcn.yaml");
  s.observe.emplace();
  s.observe->interval = Time::us(3);
  s.observe->rate_window = true;
  s.observe->window_start = Time::ms(1);
  s.observe->window_end = Time::ms(4);
  const auto dir = std::filesystem::temp_directory_path() / "syncsim_test_observe";
  s.observe->csv_dir = dir.string();
  const app::RunResult seen = app::run_scenario(s);
  CHECK(seen.events == plain.events);
  CHECK(seen.sim_time_s == plain.sim_time_s);
  CHECK(seen.fct_by_message_s == plain.fct_by_message_s);
  CHECK(seen.pause_frames == plain.pause_frames);
  CHECK(seen.cnps == plain.cnps);
  CHECK(seen.ecn_marks == plain.ecn_marks);
  CHECK(seen.counters.max_queue_bytes == plain.counters.max_queue_bytes);
  REQUIRE(seen.timeseries_files.size() == 2);
  CHECK(std::filesystem::file_size(dir / "queues.csv") > 1000);
  CHECK(std::filesystem::file_size(dir / "flows.csv") > 1000);
  // The stated window: every flow is active over [1 ms, 4 ms]; rates are delivered bits / 3 ms,
  // so their sum is at most what the two leaf0 host ports could deliver (2 x 100 Gb/s).
  const app::FlowRateStats& fr = seen.flow_rates;
  CHECK(fr.stated_window);
  CHECK(fr.flows.size() == 17);
  double sum = 0;
  for (const auto& f : fr.flows) sum += f.bps;
  CHECK(sum <= 200e9);
  CHECK(sum > 50e9);
  CHECK(fr.min_bps <= fr.mean_bps);
  CHECK(fr.mean_bps <= fr.max_bps);
  MESSAGE("Jain over [1 ms, 4 ms]: " << fr.jain_index);
  std::filesystem::remove_all(dir);
  // An unknown port name is an error naming the key.
  s.observe->ports = {"leaf0->nowhere"};
  CHECK_THROWS_WITH_AS(app::run_scenario(s), doctest::Contains("observe.ports"), app::ScenarioError);
}

TEST_CASE("dcqcn incast: the paper preset also reacts, and DCQCN off sends no CNPs") {
  const app::RunResult paper =
      app::run_scenario(scenario_file("incast-dcqcn.yaml", {app::parse_override("fabric.nic.dcqcn.preset=paper")}));
  CHECK(paper.cnps > 0);
  CHECK(dropped_packets(paper) == 0);
  CHECK(paper.messages_completed == paper.messages);
  const app::RunResult off = app::run_scenario(
      scenario_file("incast-dcqcn.yaml", {app::parse_override("fabric.nic.dcqcn.enabled=false")}));
  CHECK(off.cnps == 0);
  CHECK(off.rate_cuts == 0);
}

TEST_CASE("dcqcn: YAML parameters override the preset and bad values are rejected") {
  const app::Scenario s = scenario_file(
      "incast-dcqcn.yaml", {app::parse_override("fabric.nic.dcqcn={enabled: true, preset: paper, g: 0.125, "
                                                "rate_period: 10us, rai: 100Mbps, byte_counter: 1MB}")});
  const net::DcqcnParams& d = s.fabric.nic.dcqcn;
  CHECK(d.enabled);
  CHECK(d.g == 0.125);
  CHECK(d.rate_period == Time::us(10));
  CHECK(d.rai == Bandwidth::bps(100'000'000));
  CHECK(d.byte_counter == 1'000'000);
  CHECK(d.fast_recovery_steps == 5);  // from the paper preset
  CHECK(d.cnp_interval == Time::us(50));
  CHECK_THROWS(scenario_file("incast-dcqcn.yaml", {app::parse_override("fabric.nic.dcqcn.g=0")}));
  CHECK_THROWS(scenario_file("incast-dcqcn.yaml", {app::parse_override("fabric.nic.dcqcn.preset=fast")}));
  CHECK_THROWS(scenario_file("incast-dcqcn.yaml", {app::parse_override("fabric.nic.dcqcn.bogus=1")}));
}
