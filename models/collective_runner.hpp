#pragma once
// Executes a CollectivePlan on any TransferBackend: a step is issued as soon as all its
// dependencies have finished. Transfers go through backend.start() (after an optional per-step
// latency, NCCL's protocol/launch overhead); reductions take a compute time from the GPU's memory
// bandwidth and are scheduled on the Simulation's queue.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "models/collective_plan.hpp"
#include "sim/backends/transfer_backend.hpp"

namespace syncsim::models {

struct CollectiveRunOptions {
  // Delay before every transfer starts (protocol + launch overhead per step). Zero by default. It
  // counts from when the transfer's data is ready (its dependencies other than the transfer whose
  // slot it reuses on its connection finished), so chunks queued behind a transfer in flight hide
  // it. At packet level the reused slot is free once the receiver's notice of it has reached the
  // sender (NCCL's receiver posts the freed buffer back over the network): the propagation delay of
  // the fewest links between the two (TransferBackend::least_propagation). So no transfer starts
  // sooner than the least of these after anything it waited for: the reaction a partitioned packet
  // network relies on (least_reaction below).
  Time step_latency = Time::zero();
  // When set, the delay before transfers between GPUs of different hosts (step_latency then applies
  // inside a host only): NCCL's NET vs NVLINK hardware latencies.
  std::optional<Time> net_step_latency;
  // Delay before the first steps are issued (NCCL's base latency, once per collective).
  Time launch_latency = Time::zero();
  // Wire bytes per payload byte (protocol efficiency: LL 2, LL128 128/120, Simple 1). A transfer of
  // B payload bytes moves ceil(B * wire_factor) bytes.
  double wire_factor = 1.0;
  // When set, the wire factor of transfers inside a host (NVLink) instead of wire_factor (NVLS:
  // NcclChannels::nvls_link_efficiency).
  std::optional<double> intra_host_wire_factor;
  // GPU memory bandwidth in bytes/s used for reductions (H100 SXM HBM3: 3.35 TB/s). A reduction
  // of B bytes reads two buffers and writes one: 3 * B / hbm_bytes_per_s. <= 0 makes reductions
  // free (they still go through the queue).
  double hbm_bytes_per_s = 3.35e12;
  uint8_t priority = 0;
  // NCCL's PXN (NCCL_PXN_DISABLE=0): a transfer between hosts leaves through the NIC of the
  // sending host's GPU that has the receiver's local index, i.e. the NIC on the receiver's rail, so
  // rail-aligned rings (collective_plan.hpp) never cross spines. In NCCL the data first crosses
  // NVLink to that GPU; that hop is not simulated (NVLink carries ~9x a NIC's bandwidth, so it adds
  // well under a chunk's NIC time of latency and its NVLink load is ignored). The backend records
  // the transfer from the proxy GPU. false: every GPU uses its own NIC. Tree plans ignore it (their
  // rank-level edges are not rail-aligned; collective_runner.cpp says why).
  bool pxn = true;
  // RDMA queue pairs per connection (NCCL_IB_QPS_PER_CONNECTION, default 1 in NCCL 2.30:
  // src/transport/net_ib/connect.cc). Every connection (channel, sender, receiver) keeps its QPs
  // for the whole run, shared by every collective run on the same backend as NCCL shares them
  // across a communicator's operations; its transfers take them in turn, one QP per message as
  // NCCL does with NCCL_IB_SPLIT_DATA_ON_QPS = 0 (its default). 0: a new QP per transfer (a
  // fresh ECMP hash and DCQCN state for every chunk).
  uint32_t qps_per_connection = 1;
  // The NCCL communicator the collective runs on (below 2^16). Each communicator opens its own
  // connections, so collectives of different communicators never share a queue pair (its ECMP
  // hash and DCQCN state), even between the same NICs on the same channel; collectives of one
  // communicator do, as NCCL reuses a communicator's connections for all its operations.
  uint32_t communicator = 0;
  // The copy rate of one channel at one rank (its CTA: NCCL's copy loop on one SM), bytes of
  // payload per second; 0: unlimited. The transfers a rank sends on a channel are copied one after
  // another at this rate: a transfer begins no earlier than its copy does and finishes no earlier
  // than its copy ends, whatever the network allows. The wire still carries each transfer as fast
  // as the network lets it, so a capped channel sends in bursts with gaps rather than at a steady
  // lower rate. Transfers from or to an NVLS engine are not capped (NVLS's constant already holds
  // its CTAs' reach: NcclChannels::nvls_link_efficiency).
  double channel_copy_bytes_per_s = 0;
};

// The compute time of reducing `bytes` under `options`.
Time reduction_time(int64_t bytes, const CollectiveRunOptions& options);

struct CollectiveResult {
  Time start = Time::zero();
  Time finish = Time::zero();
  Time duration() const { return finish - start; }
  std::size_t transfers = 0;
  std::size_t reductions = 0;
  int64_t bytes_sent = 0;  // payload over all transfers (wire bytes / wire_factor)
};

class CollectiveRunner final : private EventTarget {
 public:
  // rank_to_gpu[r] is the GPU of rank r (size >= plan.ranks). The plan is referenced, not copied
  // (plans of 1024-rank rings hold millions of steps): it must outlive the runner.
  CollectiveRunner(TransferBackend& backend, const CollectivePlan& plan,
                   std::vector<uint32_t> rank_to_gpu, CollectiveRunOptions options = {});
  CollectiveRunner(const CollectiveRunner&) = delete;
  CollectiveRunner& operator=(const CollectiveRunner&) = delete;

  // Issues the steps without dependencies now; `on_done` runs when the last step finishes. The
  // runner must outlive the simulation run. An empty plan completes through the queue at now().
  void start(std::function<void(const CollectiveResult&)> on_done = {});
  bool done() const { return finished_ == plan_.steps.size() && started_; }
  const CollectiveResult& result() const { return result_; }

 private:
  // Queue events (EventTarget: no closure per event): a delayed transfer start, a reduction's end.
  enum : uint32_t { kBegin = 0, kReduced = 1, kCopied = 2 };
  // dependents_ entries: the dependent step, with this bit set when the dependency is the transfer
  // whose slot it reuses on its own connection (its finish frees the slot, see issue()).
  static constexpr uint32_t kSameConnection = 0x8000'0000u;
  void on_event(uint32_t kind, uint64_t arg) override;
  void issue(uint32_t step);
  // Starts the transfer of `step` at `at` (now, or later on a backend that starts_ahead()).
  void begin_transfer(uint32_t step, Time at);
  // The GPU a transfer leaves from: its sender, or the sender's PXN proxy.
  uint32_t sending_gpu(const PlanStep& t) const;
  // Opens every connection's queue pairs in plan order (TransferBackend::open_queue_pair).
  void open_connections();
  void finish(uint32_t step);
  // A transfer the backend delivered: finished now, or when its copy ends (channel copy cap).
  void delivered(uint32_t step);
  // Wire bytes of a transfer of `payload` bytes between endpoints a and b: the protocol's wire
  // factor, or intra_host_wire_factor inside a host.
  int64_t wire_bytes(int64_t payload, uint32_t a, uint32_t b) const;

  TransferBackend& backend_;
  const CollectivePlan& plan_;
  std::vector<uint32_t> gpu_;
  // PXN proxies: the GPU at (host h, local index l) is proxy_[h * proxy_stride_ + l] (UINT32_MAX
  // where the host has no such GPU). Empty without PXN.
  std::vector<uint32_t> proxy_;
  uint32_t proxy_stride_ = 0;
  // Plans with several transfers in flight per connection: a connection's transfers leave its
  // sender in order, one after another at the sender's link rate (NCCL posts a connection's slots
  // in order on one queue pair), so backends that share a link between flows (flow, packet) see
  // them FIFO rather than interleaved. paced_until_[connection] = when the last one has left.
  std::vector<Time> paced_until_;  // per connection (PlanStep::source_step of a transfer)
  std::vector<uint32_t> next_qp_;  // per connection: its QP for the next transfer (several QPs)
  std::vector<const net::LinkParams*> egress_;  // per node: its link's class (NICs, NVLink ports)
  // Channel copy cap (options_.channel_copy_bytes_per_s > 0): per (sending rank, channel), at
  // rank * copy_channels_ + channel, when its CTA has copied everything issued so far.
  std::vector<Time> copy_until_;
  uint32_t copy_channels_ = 0;
  CollectiveRunOptions options_;
  std::vector<uint32_t> dep_offsets_;  // CSR of dependents
  std::vector<uint32_t> dependents_;   // step indices | kSameConnection
  // Per step, together (a finishing step updates both for each dependent, steps far apart in a plan
  // of millions: one cache miss each instead of two; packed to the two arrays' 12 bytes):
  // `ready`: when its data is ready, the latest finish of its dependencies other than the transfer
  // whose slot it reuses, or when that slot's notice is back less the step's latency if that is
  // later (raised as they finish; issue() adds the latency). Once a transfer is issued its entry is
  // free, and under the channel copy cap holds when the transfer's copy ends (the earliest it can
  // finish): no second array of millions of times. `waiting`: its unfinished dependencies.
  struct [[gnu::packed]] StepState {
    int64_t ready_ps;
    uint32_t waiting;
    Time ready() const { return Time::ps(ready_ps); }
  };
  static_assert(sizeof(StepState) == 12, "as the two arrays it replaced");
  std::vector<StepState> steps_;
  // The step latency of transfer `s` (CollectiveRunOptions::step_latency, net_step_latency).
  Time latency_of(const PlanStep& s) const;
  // Whether a freed slot waits for the receiver's notice to reach the sender: at packet level only,
  // where it bounds how soon a completion starts the next transfer (a partitioned run's windows
  // need that). Flow and analytic levels reuse it at once, as before: at flow level each reuse
  // would be a start at an instant of its own, a rate solve of its own; applied at every level the
  // notice moved 9 of validate's 83 values by at most 0.18 %.
  bool notify_slots_ = false;
  std::size_t finished_ = 0;
  bool started_ = false;
  CollectiveResult result_;
  std::function<void(const CollectiveResult&)> on_done_;
};

// The least time between the finish of anything a plan's transfer waits for and that transfer's
// start under `options` on the fabric `spec` (ranks on the GPUs `rank_to_gpu`): its step latency
// (inside a host, or net_step_latency between hosts), zero for a hop between two in-switch engines,
// and no more than a freed slot's notice (twice the shortest link to a NIC or NVLink port).
// Time::max() when no transfer waits for anything. A
// packet network run as partitions needs it above zero (NetworkSpec::Execution::reaction): a
// completion is told on the simulation's queue after the window it happened in, so what it starts
// must lie past that window.
Time least_reaction(const CollectivePlan& plan, const std::vector<uint32_t>& rank_to_gpu,
                    const CollectiveRunOptions& options, const net::NetworkSpec& spec);
// The least a freed slot's notice can take on `spec`: twice its shortest link to a NIC or NVLink
// port (Time::max() on a fabric without one).
Time least_slot_notice(const net::NetworkSpec& spec);

// Builds nothing: runs `plan` alone on `backend` until the queue drains and returns the result.
// Throws std::logic_error if the plan did not complete (a dependency cycle cannot occur in a plan
// whose deps point backwards, so this means a backend lost a transfer).
CollectiveResult run_collective(TransferBackend& backend, const CollectivePlan& plan,
                                const std::vector<uint32_t>& rank_to_gpu,
                                const CollectiveRunOptions& options = {});

}  // namespace syncsim::models
