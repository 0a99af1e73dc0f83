#pragma once
// An engine inside a switch (NVLink SHARP's reduction and multicast unit,
// NetworkSpec::nvls_engines) writes into the switch's egress ports directly, per destination. The
// third-generation NVSwitch "incorporates hardware acceleration for collective operations with
// multicast and NVIDIA SHARP in-network reductions" (NVIDIA technical blog, "Upgrading Multi-GPU
// Interconnectivity with the Third-Generation NVIDIA NVSwitch", 2022): the multicast copies and the
// reduced results leave by the switch's own GPU ports, and no engine link sits between them that
// one busy GPU port could back up (NCCL drives the unit with multimem.ld_reduce / multimem.st on
// the switch's multicast object: NVIDIA/nccl src/device/all_reduce.h). InfiniBand SHARP's
// aggregation engine (NetworkSpec::sharp_engines, sim/net/sharp_aggregation.hpp) is the same kind
// of unit: part of the switch ASIC, it reduces the packets arriving on the tree's ports and sends
// the result out of the switch's own ports (NVIDIA SHARP manual, "Introduction"), so it is
// modelled the same way.
//
// The packet model keeps the engine as a node with one link into its switch (so plans, link loads
// and the other fidelities see the same endpoints) and gives that link what the hardware has:
//   - the engine hands the switch a packet of a flow only while the flow's egress port there holds
//     less than two full packets of the engine's (one on the wire, one waiting): per-destination
//     (virtual output) queuing, each destination's data waiting in the engine rather than in the
//     switch's buffer ahead of other destinations';
//   - at the egress port the engine's packets wait in a queue of their own, served in turn with
//     the port's FIFOs (GPUs' own traffic, lossless as before), as the switch's crossbar
//     arbitrates between the engine and its other inputs;
//   - as one of the engine's packets leaves a port, the engine's port is kicked, so a destination
//     with room again is served at once;
//   - the switch never pauses the engine's link (Switch::set_internal_port; its packets are still
//     charged to the switch's buffer), and the link has no cable delay (topologies/
//     fabric_builder.cpp), so the engine sees each port's room as it is.
// Before, the engine's link was an ordinary port of the lossless switch: two engine flows to one
// GPU filled that GPU's egress queue, the engine's bytes held in the switch crossed XOFF and the
// whole engine link was paused, stalling its flows to every other GPU (head-of-line blocking that
// an engine inside the switch does not have; docs/fidelities.md). A SHARP engine's link, an
// ordinary credit-based InfiniBand port until then, did the same: its packets for one busy port
// (a tree's uplink or a head's downlink, 400G against the engine's sum of the switch's ports) held
// the link's credits, and its other destinations waited behind them. The GPUs' and NICs' own
// traffic keeps the switch's lossless model unchanged.
#include "sim/net/flow_table.hpp"
#include "sim/net/net_context.hpp"

namespace syncsim::net {

// Whether an in-switch engine may send the next packet of flow `f` (engine -> switch -> GPU): the
// flow's egress port at the switch has room (see above). A flow without that hop (parked by a
// fault) is not held back.
bool in_switch_engine_may_write(const NetContext& ctx, const FlowRecord& f);

}  // namespace syncsim::net
