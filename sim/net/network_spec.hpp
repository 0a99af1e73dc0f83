#pragma once
// NetworkSpec: the plain description of a fabric that topology builders produce and the packet and
// analytic backends consume. It is the only contract between topologies/ and sim/, so sim/ never
// sees Boost.Graph or YAML.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/field_error.hpp"
#include "sim/core/units.hpp"
#include "sim/net/dcqcn.hpp"
#include "sim/net/ets_scheduler.hpp"
#include "sim/net/infiniband_params.hpp"
#include "sim/net/link_impairment.hpp"
#include "sim/net/load_balancing_params.hpp"
#include "sim/net/sharp_aggregation.hpp"
#include "sim/net/transport.hpp"

namespace syncsim::net {

using NodeId = uint32_t;
inline constexpr NodeId kNoNode = UINT32_MAX;
// The host of a node that belongs to none (switches, SHARP engines).
inline constexpr uint32_t kNoHost = UINT32_MAX;

enum class NodeKind : uint8_t {
  Nic,     // a network endpoint: a host NIC, or a GPU's NVLink port
  Switch,  // a store-and-forward switch: leaf, spine, core, or a host's NVSwitch
};

enum class SwitchRole : uint8_t { None, Leaf, Spine, Core, NvSwitch };

// Next-hop choice among equal-cost ports: ECMP hashing per flow, or the deterministic up-port
// choice of OpenSM's fat-tree routing (D-mod-K, by destination index; routing.cpp).
enum class RoutingAlgorithm : uint8_t { Ecmp, Ftree };

// One class of link: every link of a class has the same parameters.
struct LinkParams {
  std::string name;  // "host", "fabric", "core", "nvlink"
  Bandwidth bandwidth = Bandwidth::gbps(100);
  Time delay = Time::ns(1000);  // one-way propagation
  Bytes mtu = Bytes{4096};      // maximum payload per packet
  // Per-packet wire overhead. 64 B covers RoCE v2's headers (Ethernet 14, IPv4 20, UDP 8, BTH 12,
  // ICRC 4, FCS 4 = 62 B) but not the preamble and inter-frame gap (20 B more, 82 B in all): a 400G
  // port carries 49.2 GB/s of payload here against 49.0 GB/s (392 Gb/s) that perftest measures
  // on ConnectX-7 (NVIDIA/nccl#2409), 0.4 % fast. Scenarios state their own value.
  Bytes header = Bytes{64};

  // The link rates a fabric may have. Below 1 Mb/s no GPU fabric link has run for decades, and
  // simulated time (int64 picoseconds, about 106 days) would overflow on ordinary traffic: one
  // 25 MiB DDP bucket takes 2.4 days at 1 kb/s and 24 days at 100 b/s. Above 100 Tb/s is beyond
  // any link built (NVLink 5 is 1.8 TB/s = 14.4 Tb/s per GPU, Ethernet ports 1.6 Tb/s), and a 64 B
  // packet would serialize in under 5 ps, where the whole-picosecond rounding starts to matter.
  static constexpr int64_t kMinBps = 1'000'000;
  static constexpr int64_t kMaxBps = 100'000'000'000'000;

  // Range rules of any link the simulator can run (build_fabric's): bandwidth > 0, delay >= 0,
  // mtu > 0, header >= 0.
  FieldErrors check() const;
  // The stricter rule for a stated link: bandwidth in kMinBps..kMaxBps. Tests may model an
  // "infinitely fast" network beyond it; scenario files may not.
  FieldErrors check_real_rate() const;
};

struct NodeSpec {
  NodeKind kind = NodeKind::Nic;
  SwitchRole role = SwitchRole::None;
  uint32_t host = UINT32_MAX;  // owning host for NICs, NVLink ports and NVSwitches
  std::string name;            // "leaf3", "spine0", "host12.nic1", "host12.gpu3", "host12.nvswitch"
};

// A full-duplex cable between two nodes, one egress port at each end.
struct LinkSpec {
  NodeId a = kNoNode;
  NodeId b = kNoNode;
  uint32_t link_class = 0;  // index into NetworkSpec::link_classes
};

// Where a GPU meets the networks: its NIC for inter-host traffic and its NVLink port for traffic to
// GPUs of the same host (kNoNode when the host has a single GPU).
struct GpuAttachment {
  uint32_t host = 0;
  uint32_t local_index = 0;
  NodeId nic = kNoNode;
  NodeId nvlink_port = kNoNode;
};

// Two endpoints of one host (GPUs, a GPU and its host's NVLS engine): the NVLink path. SHARP
// engines belong to no host, so never.
inline bool same_host(const GpuAttachment& a, const GpuAttachment& b) {
  return a.host == b.host && a.host != kNoHost;
}

// Priority flow control (IEEE 802.1Qbb) on the switches' ingress accounting. Off by default so that
// lossy scenarios keep their meaning; see shared_buffer_mmu.hpp for the mechanism.
struct PfcParams {
  bool enabled = false;
  uint8_t lossless_mask =
      1U << 3;  // bit p: priority p is lossless (default: priority 3, RoCE's usual)
  bool dynamic_threshold = true;  // XOFF = alpha * free shared buffer; else static_xoff bytes
  double alpha = 0.125;           // HPCC / Broadcom-style 1/8
  Bytes static_xoff = Bytes{0};
  Bytes xon_offset =
      Bytes{3 * 1024};        // RESUME once ingress bytes <= XOFF - xon_offset (HPCC: 3 KB)
  bool headroom_auto = true;  // per ingress port: MTU_R + MTU_S + 2*rate*delay + rate*response
  Bytes headroom = Bytes{0};  // used when !headroom_auto, for every port
  Time response_time = Time::us(1);  // sender reaction allowance inside the auto headroom
  // PFC deadlock detection: a cycle of switch egress queues, each paused by the next switch while
  // holding packets bound for the next queue of the cycle, all paused for this long, stops the run
  // and is reported (Network::deadlock()). Zero: off.
  Time deadlock_detection_time = Time::us(500);
  // PFC watchdog (per switch egress queue): paused continuously for watchdog_time, the queue stops
  // honouring PAUSE for the next watchdog_time (the storm period) and, with watchdog_drop, drops
  // what it holds and what arrives for it meanwhile (drop reason pfc_watchdog); else it forwards.
  bool watchdog = false;
  Time watchdog_time = Time::us(200);
  bool watchdog_drop = true;
  // PAUSE quanta (802.1Qbb): a PAUSE stops the priority for quanta x 512 bit times at the link
  // speed unless refreshed; a switch still above XOFF re-sends PAUSE at half that time. 0: a PAUSE
  // holds until RESUME (the default, and what earlier results assumed).
  uint32_t pause_quanta = 0;

  // Range rules: a positive static XOFF or 0 < alpha <= 16; 0 < xon_offset (<= static XOFF);
  // non-negative times, a positive watchdog time; pause_quanta fits 16 bits.
  FieldErrors check() const;
};

// The ECN profile NVIDIA's switches apply to the RoCE traffic class in lossless RoCE mode, the
// same absolute thresholds at every port speed: Kmin 150,000 B, Kmax 1,500,000 B, marking
// probability 100% at Kmax. Cumulus Linux `nv set qos roce` (lossless, the default mode): `nv show
// qos roce` reports congestion-control min-threshold 146.48 KB (150,000 B), max-threshold 1.43 MB,
// probability 100 (Cumulus Linux 5.14 user guide, "RDMA over Converged Ethernet - RoCE";
// CumulusNetworks/docs@content/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/
// RDMA-over-Converged-Ethernet-RoCE.md). NVIDIA Onyx `roce` (lossless by default): `show roce`
// reports "Port congestion-control: Mode: ecn, absolute, Min: 150, Max: 1500" (KB; Onyx user
// manual 3.10, "RoCE Commands"). SONiC's generic AZURE_LOSSLESS WRED profile differs (1 MiB /
// 2 MiB, probability 5%; sonic-net/sonic-buildimage@files/build_templates/qos_config.j2).
inline constexpr Bytes kEcnDefaultKmin = Bytes{150'000};
inline constexpr Bytes kEcnDefaultKmax = Bytes{1'500'000};
inline constexpr double kEcnDefaultPmax = 1.0;

// RED-style ECN marking on a switch egress queue (per priority): p = 0 below Kmin, rising linearly
// to Pmax at Kmax, 1 above Kmax. Unset Kmin/Kmax/Pmax are the RoCE defaults above.
struct EcnParams {
  bool enabled = false;
  bool kmin_auto = true;
  bool kmax_auto = true;
  Bytes kmin = Bytes{0};
  Bytes kmax = Bytes{0};
  double pmax = kEcnDefaultPmax;
  bool mark_on_enqueue = false;  // default: mark at dequeue (fresher queue information)

  // Range rules: explicit kmin at or below kmax (equal: step marking, every packet above K), 0 <
  // pmax <= 1 (network_spec.cpp).
  FieldErrors check() const;
};

// Host NIC behaviour (RoCE v2). DCQCN off by default: NICs send at line rate.
struct NicParams {
  DcqcnParams dcqcn;  // reaction point at the source, notification point at the dest
  // Receiver-side PFC (off by default: a NIC consumes at line rate). Arriving data waits in a
  // receive buffer drained at `rx_drain_rate` (the PCIe / host-memory bottleneck); above `rx_xoff`
  // bytes the NIC sends PAUSE for the lossless priorities to its switch, at or below `rx_xon`
  // RESUME; a packet that does not fit in `rx_buffer` is dropped (nic_rx_overflow).
  bool rx_pfc = false;
  Bytes rx_buffer = Bytes{256 * 1024};
  Bandwidth rx_drain_rate = Bandwidth::gbps(50);
  Bytes rx_xoff = Bytes{128 * 1024};
  Bytes rx_xon = Bytes{96 * 1024};

  // Range rules: dcqcn's (as "dcqcn.<field>"), a positive drain rate, rx_xon < rx_xoff <=
  // rx_buffer.
  FieldErrors check() const;
};

struct SwitchParams {
  Bytes buffer =
      Bytes{32 * 1024 * 1024};  // shared packet buffer per switch (Tomahawk-class ~32 MiB)
  uint32_t priorities = 8;      // 802.1p classes, one output queue each

  // Range rules: 1..kMaxPriorities priorities, a positive buffer.
  FieldErrors check() const;
};

// Optional correction for congestion-control inefficiency (off by default; docs/fidelities.md,
// "Flow-level congestion-control correction"). Max-min sharing hands a contended link's whole
// capacity to its flows at once; under real congestion control (PFC pauses, DCQCN rate cuts and
// recovery, queue oscillation) a link where traffic converges runs below capacity. A link is
// contended when it carries >= 2 flows and the distinct upstream links they come in over can
// together deliver more than it drains: a switch egress where a queue can build (an incast, an
// oversubscribed uplink). A NIC's own uplink (every flow from one host) is never contended: the NIC
// schedules its queue pairs without loss; nor is a link fed by one link of its own speed, nor 4 x
// 100G hosts into a 400G uplink. A contended link carrying n flows offers
//     efficiency(n) = 1 - (1 - contended_efficiency) * (1 - 1/n)
// of its payload rate: 1 for one flow, contended_efficiency as n grows. `syncsim calibrate flow`
// fits contended_efficiency against the packet model with a scenario's PFC/ECN/DCQCN settings.
struct FlowCcCorrection {
  bool enabled = false;
  double contended_efficiency = 1.0;  // in (0, 1]: the efficiency approached with many flows

  // Range rule: 0 < contended_efficiency <= 1.
  FieldErrors check() const;

  // The fraction of a contended link's payload rate that `flows` flows get (1 when off).
  double efficiency(std::size_t flows) const {
    if (!enabled || flows < 2) return 1.0;
    return 1.0 - (1.0 - contended_efficiency) * (1.0 - 1.0 / static_cast<double>(flows));
  }
};

struct NetworkSpec {
  std::vector<NodeSpec> nodes;
  std::vector<LinkParams> link_classes;
  std::vector<LinkSpec> links;
  std::vector<GpuAttachment> gpus;  // indexed by global GPU rank
  // NVLink SHARP: host h's in-switch reduction and multicast engine, an endpoint on its NVSwitch
  // (nvlink_port: the engine's node; nic: kNoNode); empty where the hosts' NVSwitches have none.
  // Transfers name it as endpoint gpus.size() + h (nvls_endpoint), so collectives can send data
  // to the switch for reduction (multimem.ld_reduce) and multicast from it (multimem.st).
  std::vector<GpuAttachment> nvls_engines;
  // SHARP: one in-network aggregation engine per fabric switch where `sharp.enabled`
  // (sharp_aggregation.hpp), a NIC node with no host (host kNoHost) on that switch; empty
  // otherwise. Transfers name engine k as endpoint sharp_endpoint(k); sharp_engine_switch[k] is its
  // switch.
  std::vector<GpuAttachment> sharp_engines;
  std::vector<NodeId> sharp_engine_switch;
  SharpParams sharp;
  uint32_t hosts = 0;
  // Moving every host by a multiple of this many hosts maps the part of the fabric those hosts use
  // onto another part alike, link classes included (a fat tree's pod, a spine-leaf's leaf, a rail
  // group): what the topology builder guarantees. 0: no such symmetry is known.
  uint32_t translation_period_hosts = 0;

  // Transfer endpoints: GPUs 0..gpus.size()-1, then one NVLS engine per host, then the SHARP
  // engines.
  std::size_t endpoint_count() const {
    return gpus.size() + nvls_engines.size() + sharp_engines.size();
  }
  const GpuAttachment& endpoint(uint32_t id) const {
    if (id < gpus.size()) return gpus[id];
    if (id < gpus.size() + nvls_engines.size()) return nvls_engines[id - gpus.size()];
    return sharp_engines[id - gpus.size() - nvls_engines.size()];
  }
  // The endpoint id of host h's NVLS engine (valid when h < nvls_engines.size()).
  uint32_t nvls_endpoint(uint32_t host) const { return static_cast<uint32_t>(gpus.size()) + host; }
  // The endpoint id of SHARP engine k (valid when k < sharp_engines.size()).
  uint32_t sharp_endpoint(uint32_t k) const {
    return static_cast<uint32_t>(gpus.size() + nvls_engines.size()) + k;
  }
  SwitchParams switch_params;
  PfcParams pfc;  // switches' PFC (copied from the scenario, not by the builders)
  EcnParams ecn;  // switches' ECN marking
  EtsParams ets;  // switches' transmission selection between traffic classes (ets_scheduler.hpp)
  NicParams nic;  // NICs' congestion control (copied from the scenario too)
  // NICs whose settings differ from `nic` (a slow receiver, a NIC with DCQCN off): NIC node n uses
  // nic_variants[k - 1] where nic_variant_of[n] == k > 0, else `nic`. Both empty: every NIC `nic`.
  std::vector<NicParams> nic_variants;
  std::vector<uint32_t> nic_variant_of;  // by NodeId (empty, or one entry per node)
  const NicParams& nic_params(NodeId id) const {
    const uint32_t k = id < nic_variant_of.size() ? nic_variant_of[id] : 0;
    return k == 0 ? nic : nic_variants[k - 1];
  }
  // DCQCN runs somewhere: on `nic` or on a variant.
  bool any_dcqcn() const {
    if (nic.dcqcn.enabled) return true;
    for (const NicParams& v : nic_variants) {
      if (v.dcqcn.enabled) return true;
    }
    return false;
  }

  // Routing data, filled by the topology builder (Boost.Graph BFS over the switch-only graph).
  // Switches fall into connected components (the fabric; each host's NVSwitch island). Every NIC
  // hangs off exactly one switch, its attachment. For ECMP over all shortest paths a switch needs,
  // per destination attachment, the hop distance from each neighbouring switch: see
  // RoutingComponent.
  struct RoutingComponent {
    std::vector<NodeId> switches;     // switches of this component, in NodeId order
    std::vector<NodeId> attachments;  // the switches of this component that have NICs attached
    // hops[a * switches.size() + s]: switch hops from switches[s] to attachments[a]; 255 =
    // unreachable
    std::vector<uint8_t> hops;
  };
  std::vector<RoutingComponent> components;
  std::vector<uint32_t> component_of;      // per node; a NIC's is its attachment switch's component
  std::vector<uint32_t> switch_index;      // per switch node: index in its component's `switches`
  std::vector<uint32_t> attachment_index;  // per switch node: index in `attachments`, or UINT32_MAX
  std::vector<NodeId>
      attachment_of_nic;  // per node: the switch a NIC hangs off (kNoNode otherwise)

  // Multi-plane fabrics (topologies/fabric_params.hpp, FabricParams::planes): each plane is its own
  // routing component; NIC i of a host sits on plane i mod planes. host_first_nic[h] is host h's
  // NIC 0 (its NICs are consecutive NodeIds). plane_spray: transfers between hosts are split over
  // every plane (TransferBackend::start), else they stay on the source NIC's plane.
  uint32_t planes = 1;
  bool plane_spray = false;
  std::vector<NodeId> host_first_nic;
  uint32_t plane_of_nic(NodeId n) const {
    return planes <= 1 ? 0 : (n - host_first_nic[nodes[n].host]) % planes;
  }
  // The NIC of NIC n's host on `plane`, in the same group of `planes` NICs as n.
  NodeId nic_on_plane(NodeId n, uint32_t plane) const {
    if (planes <= 1) return n;
    const NodeId first = host_first_nic[nodes[n].host];
    return first + (n - first) / planes * planes + plane;
  }

  uint64_t ecmp_hash_seed = 0;
  bool ecmp_per_switch_salt = false;   // false: every switch hashes alike, so ECMP can polarize
  LoadBalancingParams load_balancing;  // per flow (ECMP) or per packet (load_balancing_params.hpp)
  // How a switch picks among its next hops towards a destination (routing.hpp): hashed per flow
  // (Ecmp) or OpenSM's fat-tree D-mod-K, by destination (Ftree).
  RoutingAlgorithm routing_algorithm = RoutingAlgorithm::Ecmp;

  // The fabric's link layer (infiniband_params.hpp): RoCE (PFC/ECN/DCQCN as set above) or
  // InfiniBand (credit-based flow control per VL, IB congestion control; NVLink islands unchanged).
  LinkLayer link_layer = LinkLayer::Roce;
  InfinibandParams infiniband;

  TransportParams transport;     // end-to-end transport of inter-host messages (transport.hpp)
  ImpairmentParams impairments;  // per-link jitter and random loss (link_impairment.hpp)
  FlowCcCorrection flow_cc;      // used by the flow-level backend only (flow_backend.hpp)
  // Per port x priority operator counters (port_counters.hpp); packet level, off by default (about
  // 1 KiB per port and priority).
  bool port_counters = false;
  // How a packet-level run executes, not what it models: `partitioned` runs the fabric's partitions
  // in windows (partition_windows.hpp) on `threads` threads, with the same results for any
  // `threads`. A flow completed inside a window is told on the simulation's queue after it, so a
  // completion callback may start flows only `reaction` or more after the completion: Time::max()
  // for callers whose transfers are all known in advance (`syncsim run` on traffic), a collective's
  // least step latency for its runner (models::least_reaction). Windows are then no longer than
  // `reaction` (results do not depend on where windows end); a flow started sooner stops the run
  // (SIM_CHECK). The network still runs as one queue where the fabric cannot be split
  // (Network::partition_refusal: fewer than two leaves, no lookahead, a reaction of zero).
  // `min_window_events_per_thread`: a window goes to as many threads as give each this many of the
  // events it is expected to hold, to the simulation's thread alone below twice it
  // (window_load.hpp; 0: every window on every thread, for tests that must exercise the threads).
  // Not a property of a real system but of this simulator on its host: 128 because a hand-over and
  // its barrier cost about as much as 200 events on the 2-vCPU VM, where a sparse replay's windows
  // of 183 events ran 1.6x slower on 2 threads than on 1 (docs/performance.md, "Small windows on
  // fewer threads"). Results do not depend on it.
  // `hand_over`: a switch port may hand a packet with nothing behind it to its link at its start,
  // with no event at its end (egress_port.hpp); false: every transmission end is an event, for
  // tests that compare the two (only the order of one picosecond's events differs).
  struct Execution {
    bool partitioned = false;
    uint32_t threads = 1;
    Time reaction = Time::max();
    uint64_t min_window_events_per_thread = 128;
    bool hand_over = true;
  } execution;
  // Static route overrides (e.g. after a link failure, or a misconfiguration): flows from NIC `src`
  // to NIC `dst` pass through the switches `via` in order (each a switch with NICs attached), on
  // shortest paths between them. Such routes may go down and up again and close a buffer cycle.
  struct RouteOverride {
    NodeId src = kNoNode;
    NodeId dst = kNoNode;
    std::vector<NodeId> via{};
  };
  std::vector<RouteOverride> route_overrides{};
};

}  // namespace syncsim::net
