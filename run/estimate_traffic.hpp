#pragma once
// The run estimate's traffic: how many messages and bytes a `traffic:` entry makes, and how many
// links their packets cross (run/estimate.cpp counts packet hops with them).
#include <cstdint>
#include <optional>

#include "models/traffic.hpp"
#include "run/estimate.hpp"
#include "scenario/scenario.hpp"
#include "topologies/fabric_builder.hpp"
#include "topologies/fabric_params.hpp"

namespace syncsim::app {

// Messages and payload bytes of one entry on `gpus` GPUs, without expanding it.
double traffic_messages(const models::TrafficSpec& t, double gpus);
double traffic_bytes(const models::TrafficSpec& t, double gpus);

// Traffic expanded message by message for its packets' links at most this many messages (the
// all-to-all of 16k GPUs would be 268 M).
inline constexpr double kMessagesExpandedAtMost = 1 << 20;

// Payload bytes x links crossed of the scenario's background traffic, expanded as the run expands
// it (GPUs host-major); nullopt where it cannot be expanded (the run reports why).
std::optional<double> traffic_link_bytes(const Scenario& scenario, uint32_t gpus);

// The mean links between consecutive ranks of a ring over the first `ranks` GPUs.
double ring_links(const topo::FabricParams& fabric, double ranks);

// How much faster `threads` threads run a packet-level traffic run than one: its fabric's
// partitions at once (sim/net/partition_windows.hpp), min(threads, partitions) at a measured
// efficiency; 1 where the run keeps one queue (as run_scenario decides; fabric_partition.hpp).
double packet_thread_speedup(const Scenario& scenario, const topo::FabricSize& size,
                             uint32_t threads);

// Packet fidelity on RoCE with PFC and an explicit headroom below what `headroom: auto` reserves on
// some link class (sim/net/pfc.hpp's required_headroom, the links as scenario_link_classes builds
// them) while traffic runs on a lossless priority: what the estimate cannot count, as a caveat for
// `e.caveats`. Those packets are dropped when PAUSE comes too late, and the queue pairs' RC
// recoveries resend from the loss (sim/net/go_back_n.hpp): how much depends on when PAUSEs fall,
// which only the run knows (headroom-too-small.yaml injects 22x its 17 MB).
void add_lossless_drop_caveat(const Scenario& scenario, Estimate& e);

// Packet fidelity: the packets in flight at the peak (of `sent` bytes) and, with `json_output`, the
// result document's list of `listed_flows` flows, as parts of `e.memory_parts`.
void add_packet_memory(const Scenario& scenario, const topo::FabricSize& size, double sent,
                       double listed_flows, bool json_output, Estimate& e);

}  // namespace syncsim::app
