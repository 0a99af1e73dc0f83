#include "run/port_counters.hpp"

#include <sstream>

#include "sim/net/egress_port.hpp"
#include "sim/net/network.hpp"
#include "sim/net/port_names.hpp"

namespace syncsim::app {

namespace {

constexpr const char* kPauseBucketNames[net::kPauseDurationBuckets] = {
    "pauses_lt_1us", "pauses_lt_10us", "pauses_lt_100us",
    "pauses_lt_1ms", "pauses_lt_10ms", "pauses_ge_10ms"};

const char* owner_kind(const net::NodeSpec& n) {
  if (n.kind == net::NodeKind::Nic) return "nic";
  return n.role == net::SwitchRole::NvSwitch ? "nvswitch" : "switch";
}

}  // namespace

double depth_percentile(const std::array<int64_t, net::kDepthBuckets>& depth_ps, double p) {
  int64_t total = 0;
  for (const int64_t t : depth_ps) total += t;
  if (total <= 0) return 0;
  const double target = p / 100.0 * static_cast<double>(total);
  double below = 0;
  for (std::size_t b = 0; b < depth_ps.size(); ++b) {
    const auto t = static_cast<double>(depth_ps[b]);
    if (t > 0 && below + t >= target) {
      const auto [lo, hi] = net::PriorityCounters::depth_bucket_range(b);
      return lo + (hi - lo) * ((target - below) / t);
    }
    below += t;
  }
  return net::PriorityCounters::depth_bucket_range(depth_ps.size() - 1).second;
}

std::vector<PortCounterRow> port_counter_rows(const net::NetworkSpec& spec,
                                              const net::Network& network, Time end) {
  std::vector<PortCounterRow> rows;
  const int64_t end_ps = end.picoseconds();
  for (net::PortId p = 0; p < network.port_count(); ++p) {
    const net::EgressPort& port = network.port(p);
    const net::PriorityCounters* counters = port.counters();
    if (counters == nullptr) continue;
    const net::PortInfo& info = network.routing().ports()[p];
    for (unsigned prio = 0; prio < spec.switch_params.priorities; ++prio) {
      // Close the open intervals at the end of the run on a copy.
      net::PriorityCounters c = counters[prio];
      c.note_depth(end_ps, c.depth);
      if (port.paused(static_cast<uint8_t>(prio))) {
        c.note_pause_end(end_ps - port.paused_since(static_cast<uint8_t>(prio)).picoseconds());
      }
      PortCounterRow r;
      r.port_id = p;
      r.port = net::egress_port_name(spec, p);
      r.owner = owner_kind(spec.nodes[info.owner]);
      r.priority = prio;
      r.tx_packets = c.tx_packets;
      r.tx_cnps = c.tx_cnps;
      r.tx_bytes = c.tx_bytes;
      r.pause_sent = c.pause_sent;
      r.pause_received = c.pause_received;
      r.paused_s = Time::ps(c.paused_ps).seconds();
      r.pause_durations = c.pause_durations;
      r.ecn_marks = c.ecn_marks;
      r.drops = c.drops;
      r.queue_mean_bytes = end_ps > 0 ? c.depth_byte_ps / static_cast<double>(end_ps) : 0.0;
      r.queue_p99_bytes = depth_percentile(c.depth_ps, 99);
      r.queue_max_bytes = c.depth_max;
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

std::string port_counters_csv(const std::vector<PortCounterRow>& rows) {
  std::ostringstream o;
  o << "port_id,port,owner,priority,tx_packets,tx_bytes,pause_sent,pause_received,paused_s";
  for (const char* name : kPauseBucketNames) o << "," << name;
  o << ",ecn_marks";
  for (std::size_t d = 0; d < static_cast<std::size_t>(net::DropReason::Count); ++d) {
    o << ",drops_" << net::drop_reason_name(static_cast<net::DropReason>(d));
  }
  o << ",queue_mean_bytes,queue_p99_bytes,queue_max_bytes,tx_cnps\n";
  for (const PortCounterRow& r : rows) {
    o << r.port_id << "," << r.port << "," << r.owner << "," << r.priority << "," << r.tx_packets
      << "," << r.tx_bytes << "," << r.pause_sent << "," << r.pause_received << "," << r.paused_s;
    for (const uint64_t n : r.pause_durations) o << "," << n;
    o << "," << r.ecn_marks;
    for (const uint64_t n : r.drops) o << "," << n;
    o << "," << r.queue_mean_bytes << "," << r.queue_p99_bytes << "," << r.queue_max_bytes << ","
      << r.tx_cnps << "\n";
  }
  return o.str();
}

std::string port_counters_csv_columns() {
  std::ostringstream o;
  o << "| column | unit | meaning |\n|---|---|---|\n"
    << "| `port_id` | - | egress port id (link l: 2l from its first node, 2l+1 back); tells "
       "parallel cables apart |\n"
    << "| `port` | - | `owner->peer`, the name `observe.ports` and `syncsim ports` use |\n"
    << "| `owner` | - | `switch`, `nic` or `nvswitch` |\n"
    << "| `priority` | - | 802.1p class (one row per class of `fabric.switch.priorities`) |\n"
    << "| `tx_packets` | count | data, ACK, NAK and CNP packets of this class sent (PFC frames "
       "not counted) |\n"
    << "| `tx_bytes` | B | their wire bytes (payload + header) |\n"
    << "| `pause_sent` | count | PFC PAUSE (XOFF) frames for this class sent out of this port "
       "(refreshes included) |\n"
    << "| `pause_received` | count | PAUSE frames for this class received from the peer |\n"
    << "| `paused_s` | s | time this class was paused by the peer (an open pause counts up to the "
       "end) |\n";
  const char* ranges[] = {"shorter than 1 us", "1-10 us", "10-100 us",
                          "100 us - 1 ms",     "1-10 ms", "10 ms or longer"};
  for (std::size_t b = 0; b < net::kPauseDurationBuckets; ++b) {
    o << "| `" << kPauseBucketNames[b] << "` | count | pauses " << ranges[b] << " |\n";
  }
  o << "| `ecn_marks` | count | RED marking decisions at this port (a packet marked upstream "
       "again counts again) |\n";
  for (std::size_t d = 0; d < static_cast<std::size_t>(net::DropReason::Count); ++d) {
    o << "| `drops_" << net::drop_reason_name(static_cast<net::DropReason>(d))
      << "` | count | packets dropped for this reason at this interface |\n";
  }
  o << "| `queue_mean_bytes` | B | wire bytes waiting in this class's FIFO, time average over "
       "the run |\n"
    << "| `queue_p99_bytes` | B | its time-weighted 99th percentile (within ~19%: quarter-octave "
       "histogram) |\n"
    << "| `queue_max_bytes` | B | its deepest |\n"
    << "| `tx_cnps` | count | CNPs among `tx_packets` (DCQCN notifications from a receiver NIC to "
       "a sender; last so that earlier columns keep their positions) |\n";
  return o.str();
}

}  // namespace syncsim::app
