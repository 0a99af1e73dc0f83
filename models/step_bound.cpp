#include "models/step_bound.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace syncsim::models {

StepShares step_shares(const StepResult& step) {
  StepShares s;
  const double total = step.step.seconds();
  if (total <= 0) return s;
  auto share = [&](Time t) { return std::clamp(t.seconds() / total, 0.0, 1.0); };
  s.exposed_communication = share(step.exposed_comm);
  s.pipeline_bubble = share(step.pipeline_bubble);
  s.optimizer = share(step.optimizer);
  // Rounding of the engines' sums may leave the named terms a hair above the step.
  const double named = s.exposed_communication + s.pipeline_bubble + s.optimizer;
  if (named > 1.0) {
    s.exposed_communication /= named;
    s.pipeline_bubble /= named;
    s.optimizer /= named;
  }
  s.compute = std::max(0.0, 1.0 - (s.exposed_communication + s.pipeline_bubble + s.optimizer));
  return s;
}

std::string_view bound_by(const StepShares& shares) {
  // Ties go to the earlier entry: compute first, as a step with nothing exposed is compute-bound.
  const std::array<std::pair<std::string_view, double>, 4> terms{{
      {"compute", shares.compute},
      {"communication", shares.exposed_communication},
      {"pipeline_bubble", shares.pipeline_bubble},
      {"optimizer", shares.optimizer},
  }};
  const auto* best = std::max_element(
      terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  return best->first;
}

bool fits_gpu_memory(const StepResult& step) {
  if (step.memory_per_gpu_bytes <= 0 || step.gpu_memory_bytes <= 0) return true;
  return step.memory_per_gpu_bytes <= step.gpu_memory_bytes;
}

}  // namespace syncsim::models
