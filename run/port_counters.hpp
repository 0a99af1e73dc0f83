#pragma once
// Per port x priority counters of a packet-level run (sim/net/port_counters.hpp), as rows an
// operator reads: `syncsim run S --counters FILE.csv` writes one row per egress port and priority,
// and the run's result gains the busiest queue's mean and p99 depth (sweep columns).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/units.hpp"
#include "sim/net/drop_reason.hpp"
#include "sim/net/port_counters.hpp"

namespace syncsim::net {
class Network;
struct NetworkSpec;
}  // namespace syncsim::net

namespace syncsim::app {

struct PortCounterRow {
  uint32_t port_id = 0;
  std::string port{};   // "owner->peer"
  std::string owner{};  // "switch", "nic" or "nvswitch"
  unsigned priority = 0;
  uint64_t tx_packets = 0;
  uint64_t tx_cnps = 0;
  int64_t tx_bytes = 0;
  uint64_t pause_sent = 0;
  uint64_t pause_received = 0;
  double paused_s = 0;  // a pause still open at the end counts up to the end
  std::array<uint64_t, net::kPauseDurationBuckets> pause_durations{};
  uint64_t ecn_marks = 0;
  std::array<uint64_t, static_cast<std::size_t>(net::DropReason::Count)> drops{};
  double queue_mean_bytes = 0;  // time average over [0, end of run]
  double queue_p99_bytes = 0;   // time-weighted, interpolated in its quarter-octave bucket
  int64_t queue_max_bytes = 0;
};

// One row per egress port and priority, in port-id order (empty when the network did not collect
// counters: NetworkSpec::port_counters off).
std::vector<PortCounterRow> port_counter_rows(const net::NetworkSpec& spec,
                                              const net::Network& network, Time end);

// The CSV (header, then one line per row). Columns: port_counters_csv_columns().
std::string port_counters_csv(const std::vector<PortCounterRow>& rows);
// "column | unit | meaning" lines of the CSV, for docs/cli.md and --help.
std::string port_counters_csv_columns();

// The time-weighted percentile `p` (0..100) of a depth histogram (PriorityCounters::depth_ps)
// spanning `total_ps`, interpolated linearly inside the bucket it falls in.
double depth_percentile(const std::array<int64_t, net::kDepthBuckets>& depth_ps, double p);

}  // namespace syncsim::app
