// Per port x priority counters (`--counters`), each checked against a count the run makes
// independently: the network-wide counters, the flows' bytes, the time series' queue samples.
#include <doctest/doctest.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run/port_counters.hpp"
#include "run/runner.hpp"
#include "scenario/scenario_loader.hpp"

using namespace syncsim;

namespace {

app::Scenario scenario_file(const std::string& name) {
  return app::load_scenario_file(std::string(SYNCSIM_SOURCE_DIR) + "/scenarios/" + name);
}

app::RunResult with_counters(const app::Scenario& s) {
  return app::run_scenario(s, app::RunOptions{.port_counters = true});
}

uint64_t drops_of(const app::RunResult& r, const std::string& reason) {
  for (const auto& d : r.drops) {
    if (d.first == reason) return d.second;
  }
  return 0;
}

std::size_t reason_index(const std::string& reason) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(net::DropReason::Count); ++i) {
    if (reason == net::drop_reason_name(static_cast<net::DropReason>(i))) return i;
  }
  FAIL("no drop reason " << reason);
  return 0;
}

}  // namespace

TEST_CASE("port counters: off unless asked for, and they do not change the run") {
  const app::Scenario s = scenario_file("incast-pfc.yaml");
  const app::RunResult plain = app::run_scenario(s);
  CHECK(plain.port_counters.empty());
  CHECK(!app::to_json(plain).contains("queue"));
  const app::RunResult counted = with_counters(s);
  CHECK(counted.sim_time_s == plain.sim_time_s);
  CHECK(counted.events == plain.events);
  CHECK(counted.pause_frames == plain.pause_frames);
}

TEST_CASE("port counters: sums over ports match the network-wide counters") {
  const app::RunResult r = with_counters(scenario_file("incast-pfc.yaml"));
  // One row per egress port and priority.
  REQUIRE(r.port_counters.size() == 2 * r.links * 8);
  uint64_t nic_tx = 0, switch_pauses_sent = 0, pauses_sent = 0, pauses_received = 0, marks = 0;
  double paused_s = 0;
  for (const app::PortCounterRow& row : r.port_counters) {
    if (row.owner == "nic") nic_tx += row.tx_packets;
    if (row.owner == "switch") switch_pauses_sent += row.pause_sent;
    pauses_sent += row.pause_sent;
    pauses_received += row.pause_received;
    paused_s += row.paused_s;
    marks += row.ecn_marks;
    uint64_t closed = 0;
    for (const uint64_t n : row.pause_durations) closed += n;
    CHECK(closed <= row.pause_received);  // refreshes aside, one histogram entry per pause
    CHECK(row.queue_mean_bytes <= static_cast<double>(row.queue_max_bytes));
    CHECK(row.queue_p99_bytes <= static_cast<double>(row.queue_max_bytes) * 1.19 + 1);
  }
  CHECK(nic_tx == r.counters.packets_injected);  // no ACKs or CNPs on this lossless incast
  CHECK(switch_pauses_sent == r.pause_frames);
  CHECK(pauses_sent == r.pause_frames + r.nic_pause_frames);
  CHECK(pauses_received == pauses_sent);  // every PAUSE crossed its link by the end
  CHECK(paused_s == doctest::Approx(r.paused_time_s).epsilon(1e-9));
  CHECK(marks == r.ecn_hop_marks);
  REQUIRE(r.pause_frames > 0);

  // The receiver's port carries the 16 x 4 MB incast, nothing else, on priority 3.
  const app::PortCounterRow* bottleneck = nullptr;
  for (const auto& row : r.port_counters) {
    if (row.port == "leaf0->host0.nic0" && row.priority == 3) bottleneck = &row;
  }
  REQUIRE(bottleneck != nullptr);
  const int64_t payload = 16 * 4'000'000;
  CHECK(bottleneck->tx_bytes == payload + static_cast<int64_t>(bottleneck->tx_packets) * 64);
  CHECK(bottleneck->queue_max_bytes <= r.counters.max_queue_bytes);
  CHECK(bottleneck->queue_max_bytes > 0);
  // The summary keys name the busiest switch queue.
  CHECK(!r.busiest_queue_port.empty());
  CHECK(r.queue_mean_bytes >= bottleneck->queue_mean_bytes);
  const nlohmann::json j = app::to_json(r);
  CHECK(j["queue"]["mean_bytes"].get<double>() == r.queue_mean_bytes);
  CHECK(j["queue"]["p99_bytes"].get<double>() == r.queue_p99_bytes);
}

TEST_CASE("port counters: the time-averaged queue matches the time series' samples") {
  app::Scenario s = scenario_file("incast-dcqcn.yaml");
  s.observe->ports = {"leaf0->host0.nic0"};
  s.observe->interval = Time::ns(200);
  s.observe->flows = false;
  const auto dir = std::filesystem::temp_directory_path() / "syncsim_test_port_counters";
  std::filesystem::remove_all(dir);
  s.observe->csv_dir = dir.string();
  const app::RunResult r = with_counters(s);
  // The samples count the packet in service too; the counters count the FIFO behind it.
  std::ifstream in(dir / "queues.csv");
  std::string line;
  std::getline(in, line);
  double sum = 0;
  std::size_t n = 0, busy = 0;
  while (std::getline(in, line)) {
    const auto a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    const double q = std::stod(line.substr(b + 1, c - b - 1));
    sum += q;
    busy += q > 0 ? 1 : 0;
    ++n;
  }
  REQUIRE(n > 1000);
  const app::PortCounterRow* row = nullptr;
  for (const auto& x : r.port_counters) {
    if (x.port == "leaf0->host0.nic0" && x.priority == 3) row = &x;
  }
  REQUIRE(row != nullptr);
  const double sampled_mean = sum / static_cast<double>(n);
  const double in_service = 4160.0 * static_cast<double>(busy) / static_cast<double>(n);
  MESSAGE("sampled " << sampled_mean << " B, counters " << row->queue_mean_bytes
                     << " B + in service " << in_service << " B; p99 " << row->queue_p99_bytes
                     << ", max " << row->queue_max_bytes);
  CHECK(row->queue_mean_bytes + in_service == doctest::Approx(sampled_mean).epsilon(0.05));
  std::filesystem::remove_all(dir);
}

TEST_CASE("port counters: drops are counted by reason where they happen") {
  const app::RunResult r = with_counters(scenario_file("headroom-too-small.yaml"));
  const uint64_t total = drops_of(r, "lossless_headroom_exceeded");
  REQUIRE(total > 0);
  uint64_t counted = 0;
  const std::size_t k = reason_index("lossless_headroom_exceeded");
  for (const auto& row : r.port_counters) {
    counted += row.drops[k];
    // An ingress discard is on a switch's interface.
    if (row.drops[k] > 0) CHECK(row.owner == "switch");
  }
  CHECK(counted == total);
}

TEST_CASE("port counters: depth percentiles interpolate inside a quarter-octave bucket") {
  std::array<int64_t, net::kDepthBuckets> h{};
  // Half the time empty, half at 10,000 B.
  net::PriorityCounters c;
  c.note_depth(0, 0);
  c.note_depth(1000, 10'000);
  c.note_depth(2000, 0);
  h = c.depth_ps;
  CHECK(app::depth_percentile(h, 40) == 0.0);
  const double p99 = app::depth_percentile(h, 99);
  CHECK(p99 >= 10'000 / 1.19);
  CHECK(p99 <= 10'000 * 1.19);
  CHECK(c.depth_byte_ps == doctest::Approx(10'000.0 * 1000));
  CHECK(c.depth_max == 10'000);
  // Buckets tile the byte range without gaps.
  for (std::size_t b = 2; b + 1 < net::kDepthBuckets; ++b) {
    CHECK(net::PriorityCounters::depth_bucket_range(b).second ==
          net::PriorityCounters::depth_bucket_range(b + 1).first);
    const auto lo = static_cast<int64_t>(net::PriorityCounters::depth_bucket_range(b).first);
    CHECK(net::PriorityCounters::depth_bucket(lo) == b);
  }
  CHECK(net::PriorityCounters::pause_bucket(999'999) == 0);         // < 1 us
  CHECK(net::PriorityCounters::pause_bucket(1'000'000) == 1);       // 1 us
  CHECK(net::PriorityCounters::pause_bucket(50'000'000'000) == 5);  // 50 ms
}

TEST_CASE("port counters: the CSV has one documented column per field") {
  const app::RunResult r = with_counters(scenario_file("incast-pfc.yaml"));
  const std::string csv = app::port_counters_csv(r.port_counters);
  const std::string header = csv.substr(0, csv.find('\n'));
  std::size_t columns = 1;
  for (const char ch : header) columns += ch == ',' ? 1 : 0;
  const std::string doc = app::port_counters_csv_columns();
  std::size_t documented = 0;
  std::size_t at = 0;
  while ((at = doc.find("\n| `", at)) != std::string::npos) {
    ++documented;
    ++at;
  }
  CHECK(columns == documented);
  std::size_t lines = 0;
  for (const char ch : csv) lines += ch == '\n' ? 1 : 0;
  CHECK(lines == r.port_counters.size() + 1);
  CHECK(header.starts_with("port_id,port,owner,priority,tx_packets,tx_bytes,pause_sent,"));
}

TEST_CASE(
    "port counters: CNPs per port, sent by the receiver's NIC and counted on every hop back") {
  const app::RunResult r = with_counters(scenario_file("incast-dcqcn.yaml"));
  REQUIRE(r.cnps > 0);
  uint64_t from_nics = 0, on_all_ports = 0;
  for (const app::PortCounterRow& row : r.port_counters) {
    CHECK(row.tx_cnps <= row.tx_packets);
    if (row.owner == "nic") from_nics += row.tx_cnps;
    on_all_ports += row.tx_cnps;
    // Only host 0 receives marked packets, so only its NIC sends CNPs.
    if (row.owner == "nic" && row.tx_cnps > 0) CHECK(row.port == "host0.nic0->leaf0");
  }
  CHECK(from_nics == r.cnps);
  // Every CNP goes host0 -> leaf0 -> spine0 -> the sender's leaf -> the sender: 4 egress ports.
  CHECK(on_all_ports == 4 * r.cnps);
}
