#pragma once
// The run estimate's traffic: how many messages and bytes a `traffic:` entry makes, and how many
// links their packets cross (run/estimate.cpp counts packet hops with them).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "models/traffic.hpp"
#include "run/estimate.hpp"
#include "scenario/scenario.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::app {

// Go-back-N's resends where a lossless class drops: how many times each lossless message's
// packets are sent (1 elsewhere).
struct LosslessResends {
  uint8_t priorities = 0;  // bit p: priority p's messages are resent
  double sends = 1;
  double of(uint8_t priority) const { return ((priorities >> priority) & 1U) != 0 ? sends : 1.0; }
};

// Sends of each lossless message under a headroom too small for PAUSE to stop the wire in time, by
// the messages' mean size and the incast's fan-in (the most lossless messages into one GPU):
// 16 (size / 1 MB)^0.6 min(fan-in, 8) / 8, at least 1. Fitted on headroom-too-small.yaml's incast
// (3 leaves, 100 Gb/s hosts, 2 KiB headroom) with 4, 8 and 16 senders of 256 KB, 1 MB and 4 MB:
// the run's packet hops over the once-sent count were 3.2, 6.4, 17.6 / 7.1, 15.4, 41.9 / 7.9, 18.2,
// 43.1, which this gives within 1.3x; at 200 Gb/s (16 x 1 MB) 13.4 against 16. How much is resent
// depends on where the PAUSEs fall, which only the run knows: beyond these shapes it is a guess.
inline constexpr double kResendFanInCap = 8;
inline double lossless_sends(double mean_message_bytes, double fan_in) {
  return std::max(1.0, 16.0 * std::pow(mean_message_bytes / 1e6, 0.6) *
                           std::min(fan_in, kResendFanInCap) / kResendFanInCap);
}

// Messages and payload bytes of one entry on `gpus` GPUs, without expanding it.
double traffic_messages(const models::TrafficSpec& t, double gpus);
double traffic_bytes(const models::TrafficSpec& t, double gpus);

// Traffic expanded message by message for its packets' links at most this many messages (the
// all-to-all of 16k GPUs would be 268 M).
inline constexpr double kMessagesExpandedAtMost = 1 << 20;

// Payload bytes x links crossed x sends of the scenario's background traffic, expanded as the run
// expands it (GPUs host-major); nullopt where it cannot be expanded (the run reports why).
std::optional<double> traffic_link_bytes(const Scenario& scenario, uint32_t gpus,
                                         const LosslessResends& resends);

// The mean links between consecutive ranks of a ring over the first `ranks` GPUs.
double ring_links(const topo::FabricParams& fabric, double ranks);

// How much faster `threads` threads run a packet-level traffic run than one: its fabric's
// partitions at once (sim/net/partition_windows.hpp), min(threads, partitions) at a measured
// efficiency; 1 where the run keeps one queue (as run_scenario decides; fabric_partition.hpp).
double packet_thread_speedup(const Scenario& scenario, const topo::FabricSize& size,
                             uint32_t threads);

// Packet fidelity on RoCE with PFC and an explicit headroom below what `headroom: auto` reserves on
// some link class (sim/net/pfc.hpp's required_headroom, the links as scenario_link_classes builds
// them) while traffic runs on a lossless priority: those packets are dropped when PAUSE comes too
// late, and the queue pairs' RC recoveries resend from the loss (sim/net/go_back_n.hpp). `gpus`:
// the fabric's. Returns the resends counted (lossless_sends) and says so in `e.caveats`.
LosslessResends lossless_drop_resends(const Scenario& scenario, double gpus, Estimate& e);

// Packet fidelity: the packets in flight at the peak (of `sent` bytes) and, with `json_output`, the
// result document's list of `listed_flows` flows, as parts of `e.memory_parts`.
void add_packet_memory(const Scenario& scenario, const topo::FabricSize& size, double sent,
                       double listed_flows, bool json_output, Estimate& e);

}  // namespace syncsim::app
