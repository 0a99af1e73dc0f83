#include "models/collective_backend.hpp"

#include <algorithm>

#include "sim/backends/packet_backend.hpp"

namespace syncsim::models {

CollectiveBackend make_collective_backend(Fidelity fidelity, Simulation& sim,
                                          const net::NetworkSpec& spec, const CollectivePlan& plan,
                                          const std::vector<std::vector<uint32_t>>& groups,
                                          const CollectiveRunOptions& options, uint32_t threads) {
  CollectiveBackend out;
  if (fidelity != Fidelity::Packet || !packet_starts_ahead_possible(spec)) {
    out.backend = make_backend(fidelity, sim, spec);
    return out;
  }
  out.partitioned_spec = std::make_unique<net::NetworkSpec>(spec);
  net::NetworkSpec::Execution& execution = out.partitioned_spec->execution;
  execution.partitioned = true;
  execution.threads = std::max(1U, threads);
  execution.reaction = Time::max();
  for (const std::vector<uint32_t>& ranks : groups) {
    execution.reaction = std::min(execution.reaction, least_reaction(plan, ranks, options, spec));
  }
  out.backend = make_backend(fidelity, sim, *out.partitioned_spec);
  return out;
}

}  // namespace syncsim::models
