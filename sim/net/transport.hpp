#pragma once
// End-to-end transports over the packet network: their kinds and parameters (the mechanisms are in
// go_back_n.hpp and tcp.hpp, on the shared part in reliable_transport.hpp; link impairments they
// must survive in link_impairment.hpp).
//
//   roce              RoCE v2 RC with GPUDirect: the NIC reads and writes GPU memory. On a lossless
//                     priority (PFC on, class in the lossless mask) ACKs are not put on the wire;
//                     a packet lost there is recovered by go-back-N with the RC ACK timeout
//                     (GoBackNParams::lossless).
//                     On a lossy priority the queue pair runs go-back-N (sim/net/go_back_n.hpp):
//                     the receiver accepts only the expected PSN, answers the first out-of-order
//                     packet with a NAK (a small packet on the reverse path, like a CNP),
//                     acknowledges every `ack_every` packets and the last one; the sender rewinds
//                     to a NAK'd PSN and, when nothing comes back for `timeout` (the tail was
//                     lost), to the oldest unacknowledged PSN.
//   roce_host_staged  roce without GPUDirect: each inter-host message is first copied from GPU to
//   host
//                     memory at the sender and after delivery from host memory to the GPU at the
//                     receiver (sim/backends/host_staging.hpp).
//   tcp               a window-based byte stream on a lossy priority (sim/net/tcp.hpp): DCTCP on
//   ECN
//                     echoes or NewReno on loss, one ACK per data packet, fast retransmit on 3
//                     duplicate ACKs, RTO with RTOmin and exponential backoff, receiver keeps
//                     out-of-order segments (SACK-less NewReno recovery). No GPUDirect (host
//                     staging as above) plus a host-stack cost per message at each end.
// Messages inside a host (NVLink) always use the lossless plain model: NVLink is credit-based.
#include <cstdint>

#include "sim/core/field_error.hpp"
#include "sim/core/units.hpp"

namespace syncsim::net {

enum class TransportKind : uint8_t { Roce, RoceHostStaged, Tcp };
inline constexpr const char* transport_name(TransportKind k) {
  switch (k) {
    case TransportKind::Roce:
      return "roce";
    case TransportKind::RoceHostStaged:
      return "roce_host_staged";
    case TransportKind::Tcp:
      return "tcp";
  }
  return "unknown";
}

struct GoBackNParams {
  // false: a lossy RoCE class loses what is dropped (no acknowledgements; the messages concerned
  // never complete), the idealisation syncsim used before go-back-N.
  bool enabled = true;
  // InfiniBand/RoCE local ACK timeout is 4.096 us * 2^N; N = 14 (67 ms) is the common verbs
  // default, NCCL sets NCCL_IB_TIMEOUT=20 (4.3 s). A tuned lossy-RoCE deployment uses far smaller
  // values; the default here is N = 8 (1.05 ms), stated in docs/model.md.
  Time timeout = Time::ps(4'096'000LL * 256);
  uint32_t ack_every = 16;  // coalesced cumulative ACK every this many in-order packets
  // RC recovery on lossless classes (PFC on, class lossless): a packet lost there (headroom
  // overflow, PFC watchdog flush, a link going down) is recovered by the same go-back-N: a NAK on
  // the next out-of-order PSN, else the local ACK timeout. The ACKs of lossless queue pairs are not
  // put on the wire (one per ack_every packets, ~0.1 % of the reverse link; left out so that loss-
  // free lossless results are unchanged): the sender sees the receiver's progress as it happens
  // (a windowed run: one lookahead later across partitions, go_back_n.hpp).
  bool lossless = true;
  // NCCL sets the QP's timeout to NCCL_IB_TIMEOUT = 20 by default: 4.096 us x 2^20 = 4.295 s, with
  // NCCL_IB_RETRY_CNT = 7 retries (src/transport/net_ib/connect.cc, NCCL at 5067397c): a lossless
  // queue pair that retries (timeout or NAK) this many times in a row without progress goes to the
  // error state and its message fails (`rc_retry_exceeded`), as the verbs QP does.
  Time lossless_timeout = Time::ps(4'096'000LL << 20);
  uint32_t lossless_retry_count = 7;
  // Out-of-order placement (false: the RoCE go-back-N receiver, which discards and NAKs any PSN
  // past the one it expects). true: the receiver places every new PSN in memory as it arrives and
  // only waits for the missing ones, sending no NAK for a reordering; its cumulative ACK jumps over
  // what it placed, and a lost packet is recovered by the timeout (go-back-N from the oldest
  // unacknowledged PSN; PSNs already placed are discarded as duplicates). What ConnectX-5 and later
  // do for RC QPs with adaptive routing ("Out-of-order Data Placement", NVIDIA DOCA documentation,
  // https://docs.nvidia.com/doca/sdk/Out-of-order+Data+Placement/index.html), as Spectrum-X
  // SuperNICs and UEC's packet-spraying transport require.
  bool out_of_order = false;

  // Range rules (transport.cpp): positive timeouts.
  FieldErrors check() const;
};

enum class TcpCongestionControl : uint8_t { Dctcp, Reno };

struct TcpParams {
  TcpCongestionControl cc = TcpCongestionControl::Dctcp;
  // Linux TCP_RTO_MIN is 200 ms (HZ/5); data-center tunings lower it (`ip route ... rto_min 1ms`,
  // or the 200 us-1 ms of the incast literature). The scenario files state the value they use.
  Time rto_min = Time::ms(200);
  Time rto_max = Time::ms(120'000);  // Linux TCP_RTO_MAX
  uint32_t initial_window = 10;      // packets (Linux IW10, RFC 6928)
  double dctcp_g = 1.0 / 16.0;       // Linux dctcp_shift_g = 4
  // Host stack at each end, per message: a fixed latency (syscall, socket, interrupt) plus a
  // per-byte CPU cost (copies, checksums), as pure delay: CPU contention between messages is not
  // modelled.
  Time stack_latency = Time::us(10);
  double cpu_ps_per_byte = 40.0;  // 40 ps/B = 25 GB/s of stack throughput per message

  // Range rules (transport.cpp): positive RTO bounds with rto_max >= rto_min, dctcp_g in (0, 1],
  // non-negative host-stack costs.
  FieldErrors check() const;
};

// No-GPUDirect staging through host memory (roce_host_staged and tcp). A staged byte crosses PCIe
// once and host memory twice (the copy writes it, the NIC reads it; the reverse at the receiver).
// 8-GPU servers hang their GPUs off several PCIe switches, each with its own x16 uplink to a CPU
// root port: per direction, each PCIe switch of a host passes `pcie`, shared by the GPUs behind
// it, and the host's memory passes host_memory / 2, shared by all its GPUs.
// Within a switch, the copies of one connection (sender, receiver, channel) run in order, one after
// another, as NCCL's proxy works through a connection's slots; concurrent connections share the
// switch and the host memory equally. Approximations: the two directions do not contend for host
// memory, and the NIC's own PCIe traffic is not charged to the stage.
struct HostStagingParams {
  Bandwidth pcie = Bandwidth::gbps(512);          // PCIe Gen5 x16: 64 GB/s per direction
  Bandwidth host_memory = Bandwidth::gbps(2400);  // 300 GB/s (8-12 channel DDR5 server)
  Time copy_latency = Time::us(5);                // cudaMemcpyAsync launch + completion, per copy
  // GPUs behind one PCIe switch (the scenario loader derives it from the GPU preset when the
  // scenario does not give `fabric.host.gpus_per_pcie_switch`).
  uint32_t gpus_per_pcie_switch = 1;

  // Range rules (transport.cpp): positive rates, a non-negative copy latency.
  FieldErrors check() const;
};

struct TransportParams {
  TransportKind kind = TransportKind::Roce;
  GoBackNParams gbn;
  TcpParams tcp;
  HostStagingParams staging;

  // The rules of gbn, tcp and staging, their fields prefixed "gbn.", "tcp.", "staging.".
  FieldErrors check() const;
};

}  // namespace syncsim::net
