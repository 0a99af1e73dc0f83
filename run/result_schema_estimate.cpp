// The result keys of the pre-run estimate (run/estimate.hpp): what `syncsim run` expected to
// spend in memory and wall time before it ran, and the parts of the memory estimate.
#include <nlohmann/json.hpp>
#include <vector>

#include "run/estimate.hpp"
#include "run/result_schema.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

namespace {

using json = nlohmann::json;
using P = ResultPresence;

}  // namespace

std::span<const ResultKey> estimate_result_keys() {
  static const std::vector<ResultKey> keys = {
      {"estimate", "", "-", "the pre-run estimate (`syncsim run` only; below)", P::Estimate,
       [](const RunResult& r) -> json { return to_json(*r.estimate); }},
      {"estimate.memory_bytes", "", "B", "pre-run memory estimate", P::Estimate, nullptr},
      {"estimate.wall_s", "", "s",
       "pre-run wall-time estimate (on this machine: see machine_speed)", P::Estimate, nullptr},
      {"estimate.machine_speed", "", "-",
       "this machine's speed against the one the estimate's costs were measured on (the event "
       "core's hold model: ~8 ms, or 0.3 ms for a run estimated under 0.25 s there)",
       P::Estimate, nullptr},
      {"estimate.transfers", "", "count", "transfers the estimate expects to simulate", P::Estimate,
       nullptr},
      {"estimate.packet_hops", "", "count", "packet hops the estimate expects (packet fidelity)",
       P::Estimate, nullptr},
      {"estimate.extrapolated_buckets", "", "count",
       "bucket sizes the estimate expects to be extrapolated", P::Estimate, nullptr},
      {"estimate.sim_time_s", "", "s",
       "expected simulated time (a DDP step: the closed form at NIC bandwidth)", P::Estimate,
       nullptr},
      {"estimate.caveats", "", "-",
       "what the estimate counts only roughly and may make the run longer or shorter (a list of "
       "sentences)",
       P::Estimate, nullptr},
      {"estimate.memory_parts.process", "", "B", "memory estimate: the process itself", P::Estimate,
       nullptr},
      {"estimate.memory_parts.fabric", "", "B", "memory estimate: fabric nodes and cables",
       P::Estimate, nullptr},
      {"estimate.memory_parts.routing", "", "B", "memory estimate: routing tables", P::Estimate,
       nullptr},
      {"estimate.memory_parts.backend", "", "B", "memory estimate: per-port backend state",
       P::Estimate, nullptr},
      {"estimate.memory_parts.messages", "", "B", "memory estimate: traffic messages", P::Estimate,
       nullptr},
      {"estimate.memory_parts.plans", "", "B", "memory estimate: collective plans kept (workload)",
       P::Estimate, nullptr},
      {"estimate.memory_parts.transfers", "", "B",
       "memory estimate: the largest simulation's per-transfer state (workload)", P::Estimate,
       nullptr},
      {"estimate.memory_parts.ranks", "", "B", "memory estimate: per-rank state (workload)",
       P::Estimate, nullptr},
  };
  return keys;
}

}  // namespace syncsim::app
