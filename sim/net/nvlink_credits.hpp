#pragma once
// NVLink's link-level flow control: credits, not PAUSE. NVLink's data link layer sends a packet
// only against credits for the receiver's buffer and gets them back as that buffer drains (Foley
// and Danskin, "Ultra-Performance Pascal GPU and NVLink Interconnect", IEEE Micro 37(2), 2017: the
// data link layer's flow control is credit based), so an NVSwitch never drops and never needs to
// reserve PFC headroom. Modelled with the credit machinery of InfiniBand links
// (ib_credits.hpp: 64-byte blocks, credits back one link delay after the packet leaves the
// receiver's buffer), with one credit pool per link (all traffic classes share it and keep their
// own FIFOs).
//
// Credit buffer. NVIDIA publishes no NVSwitch buffer size. Each receiving end advertises four
// times the link's credit loop (a full-MTU packet serialized at each end plus the cable both ways,
// at the link rate). One loop lets a lone sender run at line rate only while the output takes every
// packet at once; an NVSwitch's outputs are shared (the NVLS engine's port takes every GPU's
// packets in turn, a GPU's port the engine's results and other GPUs' writes), and below four loops
// the credits start to show in NVLink-bound runs: GB200 NVL72's 64 MiB NVLS all_reduce reads 473.3
// GB/s at packet fidelity with two loops, 488.7 with four, 488.1 with eight (the buffer no longer
// limits it). So four: enough that the credits never hold back an NVLink-bound collective, which
// NVSwitch is built for, without claiming a buffer size. An NVSwitch's buffer is what its ports
// advertise, plus what its NVLS engine may hold in it (two packets per port: in_switch_engine.hpp),
// so it can never overflow.
//
// Before, an NVSwitch ran the fabric's PFC model on every class, with headroom reserved per port
// and class out of the fabric switch's buffer: on a 72-GPU NVLink domain that headroom exceeded
// the whole buffer and left every GPU link at XOFF 0 (docs/fidelities.md).
#include <cstdint>

#include "sim/net/network_spec.hpp"
#include "sim/net/routing.hpp"

namespace syncsim::net {

// Whether port `p`'s link runs NVLink credits: one end is a host's NVSwitch and neither end is an
// NVLS engine (which bounds itself per destination: in_switch_engine.hpp).
bool nvlink_credit_port(const NetworkSpec& spec, const Routing& routing, PortId p);

// The bytes the receiving end of an NVLink advertises (see above).
int64_t nvlink_credit_bytes(const LinkParams& link);

// The buffer of NVSwitch `sw`: its ports' credit buffers plus its engine's share (see above).
Bytes nvswitch_buffer(const NetworkSpec& spec, const Routing& routing, NodeId sw);

}  // namespace syncsim::net
