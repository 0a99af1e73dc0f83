#pragma once
// The transfer interface every workload uses: "move B bytes from GPU a to GPU b at priority p and
// call back when they are delivered". Backends differ in fidelity, not in interface: collectives
// and the step model run unchanged on packet, analytic and (later) flow-level networks.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/backends/fidelity.hpp"
#include "sim/backends/host_staging.hpp"
#include "sim/backends/queue_pairs.hpp"
#include "sim/core/huge_pages.hpp"
#include "sim/core/simulation.hpp"
#include "sim/net/fault.hpp"
#include "sim/net/network_counters.hpp"
#include "sim/net/network_spec.hpp"
#include "sim/net/window_load.hpp"

namespace syncsim {

using TransferId = uint32_t;

struct TransferRequest {
  uint32_t src_gpu = 0;
  uint32_t dst_gpu = 0;
  Bytes size{0};
  uint8_t priority = 0;
  // The caller's connection tag (below 2^16): transfers between the same NICs at the same priority
  // with the same tag share one persistent queue pair (queue_pairs.hpp); kNoConnection: a QP of
  // the transfer's own.
  uint32_t connection = kNoConnection;
  // When the transfer starts, if later than now: only for a backend that starts_ahead() (a packet
  // network run as partitions sets the transfer up now and starts it then, inside its source's
  // partition, so that the partitions need not stop at every start). Zero: now.
  Time start_at = Time::zero();
};

struct TransferRecord {
  TransferRequest request;
  Time start = Time::zero();
  Time finish = Time::max();
  bool done = false;
};

using TransferCallback = std::function<void(TransferId, const TransferRecord&)>;

// How a backend's network ran (sim/net/partition_windows.hpp): the partitions of a windowed
// packet-level run and the windows they ran in, the events inside them (not on the simulation's
// own queue), the threads, and why a run that asked for partitions ran as one queue.
struct BackendExecution {
  uint32_t partitions = 1;
  uint64_t windows = 0;
  uint64_t partition_events = 0;
  unsigned threads = 1;
  std::string refusal;
  // The longest window the partitions run (zero on one queue): a caller that sets its transfers up
  // ahead (TransferBackend::starts_ahead) hands each over at least this long before its start.
  Time window = Time::zero();
  // The windows' events as more threads would share them (sim/net/window_load.hpp); empty on one
  // queue.
  std::vector<net::ThreadLoad> thread_loads;
  // Windows handed to more than one thread (the others ran on the caller's thread alone: too few
  // events to pay for the hand-over, NetworkSpec::Execution::min_window_events_per_thread).
  uint64_t threaded_windows = 0;
};

// Network-wide counters in one shape for every backend (sim/net/network_counters.hpp). Fields a
// backend cannot observe stay zero and are documented as such by that backend.
using BackendCounters = net::NetworkCounters;

namespace net {
class Network;
}

// Hooks through which a backend shows what its fidelity models beyond counters(), for metrics and
// time series: an observer reads the state it is handed and never needs the backend's concrete
// type. Every hook has an empty default; a backend calls those its fidelity has.
class BackendObserver {
 public:
  virtual ~BackendObserver() = default;
  // Packet fidelity: the packet network (ports and their pauses, flows, the deadlock report, the
  // configuration findings). The observer may run the simulation while it holds the network.
  virtual void on_packet_network(const net::Network& /*network*/) {}
};

class TransferBackend {
 public:
  TransferBackend(Simulation& sim, const net::NetworkSpec& spec) : sim_(sim), spec_(spec) {}
  virtual ~TransferBackend() = default;
  TransferBackend(const TransferBackend&) = delete;
  TransferBackend& operator=(const TransferBackend&) = delete;

  // Starts a transfer now. GPUs on the same host talk over NVLink, others through their NICs.
  // Throws std::invalid_argument for a transfer that cannot exist (unknown GPU, GPU to itself).
  TransferId start(const TransferRequest& request, TransferCallback on_done = {});

  virtual Fidelity fidelity() const = 0;
  // Whether start() takes requests that start later (TransferRequest::start_at); callers that
  // know their transfers ahead (a collective's runner, a step latency ahead) then hand them over
  // at once instead of scheduling their start.
  virtual bool starts_ahead() const { return false; }
  virtual net::NetworkCounters counters() const = 0;
  // One partition, no windows, unless a packet network ran windowed.
  virtual BackendExecution execution() const { return {}; }
  // Shows the backend's model to `observer` through the hooks its fidelity has (see
  // BackendObserver); the default shows nothing.
  virtual void observe(BackendObserver& /*observer*/) const {}
  // Timed faults (sim/net/fault.hpp), applied on this backend's simulation at their times. False
  // where the fidelity does not model them (the analytic backend: the caller says so).
  virtual bool schedule_faults(const std::vector<net::NetFault>& /*faults*/,
                               const net::FaultParams& /*params*/) {
    return false;
  }

  // Every transfer started so far, indexed by TransferId (empty when finished records are not
  // kept, see keep_finished_records).
  const std::vector<TransferRecord>& transfers() const { return records_; }
  // Transfers started so far (== transfers().size() while records are kept).
  std::size_t started() const { return started_; }
  // Capacity hint for callers that know how many more transfers they will start (a collective
  // plan of millions of steps): the record array is allocated once instead of regrown. It grows
  // at least twofold when it must: a run of many collectives on one backend (every live bucket of
  // a step, each job of a multi-job run) reserving exactly each time would reallocate and copy all
  // the records before it once per collective (that was 75% of a live DDP step's time).
  void reserve_transfers(std::size_t more) {
    if (keep_history_) reserve_geometric(records_, records_.size() + more);
    reserve_geometric(slot_of_, started_ + more);
  }
  // Whether to keep the record of every finished transfer (the default). A 1024-rank ring
  // all_reduce starts 2.1 M transfers; callers that need only the completion callbacks can drop
  // the 48-byte records as transfers finish: records then live in reused slots while in flight
  // only, and transfers() stays empty. TransferIds stay the same sequence either way (backends
  // hash them for ECMP), so results do not change. Only before the first transfer starts (throws
  // std::logic_error after); ignored by backends that read transfers()[id] themselves
  // (can_drop_records() false).
  void keep_finished_records(bool keep);
  bool keeps_finished_records() const { return keep_history_; }
  Simulation& simulation() { return sim_; }
  const net::NetworkSpec& spec() const { return spec_; }
  // The propagation delay of the fewest links between endpoints `a` and `b` (GPU or engine ids):
  // their own links (NIC or NVLink port to its switch) and, between hosts on different switches,
  // two links between switches (a leaf, a spine, a leaf: the least such delay). Zero where an end
  // has no port of that kind. What a receiver's notice back to a sender crosses at least (a
  // collective's freed slot); the per-node delays are gathered once per backend, on first use.
  Time least_propagation(uint32_t a, uint32_t b) const;

  // Payload bytes routed through each egress port (port 2i: link i a -> b, 2i+1: b -> a; see
  // sim/net/routing.hpp), summed over the transfers started while counting is on; off by default
  // (no cost). The route is the one each backend sends the transfer on, so ECMP collisions of a
  // fidelity show up here; bytes are counted when a transfer starts, whether or not it finished.
  void count_port_bytes(bool on) { count_port_bytes_ = on; }
  const std::vector<int64_t>& port_bytes() const { return port_bytes_; }
  // Persistent queue pairs opened so far (queue_pairs.hpp).
  std::size_t persistent_queue_pairs() const { return queue_pairs_.persistent_count(); }
  // Opens the persistent queue pair(s) a transfer of `r` would travel on, without starting it, as
  // NCCL connects a communicator's channels and peers before its first message: queue pairs are
  // numbered in the order opened, and the number feeds the ECMP hash, so opening them in a plan's
  // order keeps each path independent of which transfer happens to go first at run time. A
  // transfer without a connection opens nothing.
  void open_queue_pair(const TransferRequest& r);

 protected:
  // Begins moving a transfer between two NICs; the backend must call complete(id) when delivered.
  // On a multi-plane fabric with plane spray, a transfer is begun once per plane (r.size is that
  // plane's share) and complete(id) is called once per share.
  virtual void begin(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) = 0;
  void complete(TransferId id);
  // The queue pair a transfer begun between NICs `src` and `dst` travels on.
  QueuePair queue_pair(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r) {
    return queue_pairs_.resolve(id, src, dst, r.priority, r.connection);
  }
  // Backends call this with each transfer's route (a no-op unless count_port_bytes is on).
  void add_route_bytes(const uint32_t* route, std::size_t hops, Bytes size) {
    if (count_port_bytes_) count_route_bytes(route, hops, size);
  }
  // True for backends that never read transfers()[id] (see keep_finished_records).
  virtual bool can_drop_records() const { return false; }

 private:
  Simulation& sim_;
  const net::NetworkSpec& spec_;
  std::vector<TransferRecord> records_;  // by id, while keep_history_
  // Callbacks of transfers in flight only: slot_of_[id] indexes callback_slots_, whose free
  // entries are reused (4 bytes per finished transfer instead of a std::function). Without
  // history every transfer takes a slot, and live_records_[slot] holds its record.
  std::vector<uint32_t> slot_of_;
  std::vector<TransferCallback> callback_slots_;
  std::vector<TransferRecord> live_records_;
  std::vector<uint32_t> free_slots_;
  // least_propagation's: per node the delay of its own link (NICs, NVLink ports), and the least
  // delay of a link between two switches; empty until first asked.
  mutable std::vector<Time> own_link_delay_;
  mutable Time fabric_link_delay_ = Time::zero();
  std::size_t started_ = 0;
  bool keep_history_ = true;
  QueuePairTable queue_pairs_;
  bool count_port_bytes_ = false;
  std::vector<int64_t> port_bytes_;  // by egress port, sized 2 x links on first use
  void count_route_bytes(const uint32_t* route, std::size_t hops, Bytes size);
  TransferRecord& record(TransferId id);
  // No-GPUDirect transports (roce_host_staged, tcp): copies through host memory at both ends.
  std::unique_ptr<HostStaging> staging_;
  void begin_staged(TransferId id);
  void complete_now(TransferId id);
  // Multi-plane fabrics (NetworkSpec::planes): begin() on the planes the transfer uses, the
  // destination NIC on the source's plane (pinned) or one share per plane (spray).
  void begin_on_planes(TransferId id, net::NodeId src, net::NodeId dst, const TransferRequest& r);
  // The paths a transfer of `r` from NIC (or NVLink port) `src` to `dst` takes across the planes:
  // f(path_src, path_dst, share, shares) for each. One path (share 0 of 1) inside a host or on one
  // plane; pinned to the source NIC's plane unless sprayed; sprayed (spec's plane_spray, at least
  // a byte a plane): one even share per plane, share p through each host's NIC on plane p.
  template <class F>
  void for_each_plane_path(net::NodeId src, net::NodeId dst, const TransferRequest& r,
                           F&& f) const {
    const bool inter_host = spec_.nodes[src].host != spec_.nodes[dst].host;
    if (spec_.planes <= 1 || !inter_host) {
      f(src, dst, 0u, 1u);
    } else if (!spec_.plane_spray || r.size.count() < static_cast<int64_t>(spec_.planes)) {
      f(src, spec_.nic_on_plane(dst, spec_.plane_of_nic(src)), 0u, 1u);
    } else {
      for (uint32_t p = 0; p < spec_.planes; ++p) {
        f(spec_.nic_on_plane(src, p), spec_.nic_on_plane(dst, p), p, spec_.planes);
      }
    }
  }
  std::unordered_map<TransferId, uint32_t> plane_parts_;  // sprayed transfers: shares in flight
};

}  // namespace syncsim
