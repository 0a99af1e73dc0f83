#pragma once
// The backend a collective's plan runs on alone (`syncsim collective`, a step's private idle-fabric
// timings): at packet level, where the network can start transfers ahead, its fabric runs as
// partitions in windows (sim/net/partition_windows.hpp), the same results on any thread count.
#include <cstdint>
#include <memory>
#include <vector>

#include "models/collective_plan.hpp"
#include "models/collective_runner.hpp"
#include "sim/backends/make_backend.hpp"

namespace syncsim::models {

// A backend and, when it runs partitioned, the copy of the fabric's spec it reads (a backend keeps
// a reference to its spec): the spec outlives the backend.
struct CollectiveBackend {
  std::unique_ptr<net::NetworkSpec> partitioned_spec;
  std::unique_ptr<TransferBackend> backend;
  TransferBackend& operator*() const { return *backend; }
  TransferBackend* operator->() const { return backend.get(); }
};

// make_backend's backend for `spec`, partitioned at packet level on GPUDirect RoCE with one plane
// (TCP and host-staged transfers, and plane shares, start their parts themselves, at once:
// PacketBackend::starts_ahead): windows no longer than the least reaction of `plan` run by
// `options` on each rank placement of `groups` (least_reaction), on `threads` threads. Where that
// reaction is zero the network says why and runs as one queue (BackendExecution::refusal). Every
// packet-level run of a plan alone goes through here, so its results do not depend on which
// caller or how many threads ran it. `spec` must outlive the result.
CollectiveBackend make_collective_backend(Fidelity fidelity, Simulation& sim,
                                          const net::NetworkSpec& spec, const CollectivePlan& plan,
                                          const std::vector<std::vector<uint32_t>>& groups,
                                          const CollectiveRunOptions& options, uint32_t threads);

}  // namespace syncsim::models
