#include "run/estimate_step_time.hpp"

#include <algorithm>

#include "models/collective_cost.hpp"
#include "models/step_model.hpp"
#include "models/transformer.hpp"

namespace syncsim::app {

double expected_ddp_step_s(const models::StepConfig& c, double n, const topo::FabricParams& fabric,
                           const std::vector<models::GradientBucket>& buckets, double launch_s) {
  models::ComputeTimes ct = models::compute_times(c.model, c.gpu, c.compute);
  if (c.zero_compute) ct = models::ComputeTimes{};
  const auto m = static_cast<int64_t>(std::max<uint32_t>(1, c.grad_accumulation));
  models::StepInputs in;
  in.forward = (ct.forward + ct.backward) * (m - 1) + ct.forward;
  in.backward = ct.backward;
  in.optimizer = c.optimizer.value_or(
      models::adam_time(static_cast<double>(models::total_parameters(c.model)), c.gpu));
  const uint32_t g = std::max<uint32_t>(1, fabric.host.gpus);
  const double bytes_per_s = n <= g ? fabric.links.nvlink.bandwidth.bytes_per_second()
                                    : fabric.links.host.bandwidth.bytes_per_second() *
                                          std::max<uint32_t>(1, std::min(fabric.host.nics, g));
  for (const auto& b : buckets) {
    const double bytes = static_cast<double>(b.size.count());
    const double slowdown = c.algorithm == models::CollectiveAlgo::Tree
                                ? models::kTreeAllReduceTimeOverBandwidthBound
                                : 1.0;
    const double seconds = n <= 1 || bytes_per_s <= 0
                               ? 0.0
                               : slowdown * 2.0 * (n - 1) / n * bytes / bytes_per_s + launch_s;
    in.bucket_sync.push_back(Time::from_seconds(seconds));
  }
  return models::closed_form_step(in, 0, 1, 1).step.seconds();
}

}  // namespace syncsim::app
