#pragma once
// InfiniBand hardware presets: link generations, HCAs and switches, by name. Plain data; the
// scenario reader applies them (`fabric.links.<class>.preset`, `fabric.host.hca`,
// `fabric.switch.preset`) before the keys written next to them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/units.hpp"

namespace syncsim::net {

// Per-packet wire overhead of an InfiniBand data packet inside a subnet: LRH 8 + BTH 12 + ICRC 4 +
// VCRC 2 = 26 bytes (IBTA vol. 1, ch. 5 "Data packet format": local route header 8 B, base
// transport header 12 B, invariant CRC 4 B, variant CRC 2 B). Not counted: the GRH (40 B, only
// between subnets), per-opcode extension headers (RETH 16 B on the first packet of an RDMA write),
// the physical layer's start/end delimiters and idles, and its 64b/66b or FEC coding, which the
// quoted data rates already exclude.
inline constexpr int64_t kIbPacketHeaderBytes = 26;
// The largest IB MTU (IBTA vol. 1: path MTUs of 256 B to 4 KiB): 4096 B of payload per packet.
inline constexpr int64_t kIbMtuBytes = 4096;

struct IbLinkPreset {
  std::string_view name;
  Bandwidth data_rate;  // the 4x port's data rate
};
// HDR 200 Gb/s, NDR 400 Gb/s, XDR 800 Gb/s (4x ports; InfiniBand Trade Association roadmap,
// infinibandta.org/infiniband-roadmap).
const std::vector<IbLinkPreset>& ib_link_presets();
std::optional<IbLinkPreset> ib_link_preset(std::string_view name);

struct IbHcaPreset {
  std::string_view name;
  std::string_view link;  // the link preset of its fastest InfiniBand port
};
// ConnectX-6: HDR 200 Gb/s; ConnectX-7: NDR 400 Gb/s; ConnectX-8 SuperNIC: XDR 800 Gb/s (NVIDIA
// adapter product pages and datasheets).
const std::vector<IbHcaPreset>& ib_hca_presets();
std::optional<IbHcaPreset> ib_hca_preset(std::string_view name);

struct IbSwitchPreset {
  std::string_view name;
  std::string_view link;  // the link preset of its ports
  uint32_t ports = 0;     // radix at that rate
  Time latency;           // port-to-port
  // SHARP streaming-aggregation trees it serves at once (SharpParams::trees_per_switch; 0: one
  // per port).
  uint32_t sharp_trees = 0;
};
// QM8700 (Quantum, HDR): 40 x 200 Gb/s, 130 ns port-to-port (NVIDIA QM8700 series datasheet).
// QM9700 (Quantum-2, NDR): 64 x 400 Gb/s (NVIDIA QM9700 series datasheet); NVIDIA publishes no
// port-to-port latency for Quantum-2, and third-party figures range from under 150 ns to ~330 ns:
// 130 ns, the Quantum class, is kept as an approximation. Neither datasheet states the packet
// buffer, so the presets leave `fabric.switch.buffer` as it is. SHARP trees per switch: Quantum
// one, Quantum-2 one per port (NVIDIA SHARP Rev 3.13 release notes, "Capabilities and
// Limitations").
const std::vector<IbSwitchPreset>& ib_switch_presets();
std::optional<IbSwitchPreset> ib_switch_preset(std::string_view name);

}  // namespace syncsim::net
