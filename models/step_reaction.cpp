#include "models/step_reaction.hpp"

#include <algorithm>

#include "models/collective_runner.hpp"

namespace syncsim::models {

namespace {

// The least step latency a runner with `o` waits before a transfer (CollectiveRunner::latency_of).
Time least_step_latency(const CollectiveRunOptions& o) {
  return o.net_step_latency ? std::min(o.step_latency, *o.net_step_latency) : o.step_latency;
}

}  // namespace

Time step_reaction(const StepConfig& config, const net::NetworkSpec& spec) {
  if (is_nvls(config.algorithm) || is_collnet(config.algorithm)) return Time::zero();
  Time least = least_step_latency(config.collective);
  if (config.protocols.per_collective()) {
    for (const CollectiveAlgo algo : {CollectiveAlgo::Ring, CollectiveAlgo::Tree}) {
      for (const NcclProtocol proto : {NcclProtocol::LL, NcclProtocol::LL128}) {
        least = std::min(least, least_step_latency(config.protocols.run(algo, proto)));
      }
    }
  }
  if (least <= Time::zero()) return Time::zero();
  return std::min(least, least_slot_notice(spec));
}

}  // namespace syncsim::models
