// The result keys of the per-layer compute breakdown (models/step_model.hpp, BlockOpClasses): one
// dense block's compute on one GPU of the layout by op class, forward and backward, and the head.
#include <nlohmann/json.hpp>
#include <vector>

#include "models/step_model.hpp"
#include "run/result_schema.hpp"
#include "run/runner.hpp"

namespace syncsim::app {

namespace {

using json = nlohmann::json;
using P = ResultPresence;

const models::StepResult& step(const RunResult& r) { return *r.step; }

}  // namespace

std::span<const ResultKey> layer_breakdown_result_keys() {
  static const std::vector<ResultKey> keys = {
      {"layer_breakdown", "", "-",
       "one dense block's compute on one GPU per micro-batch, by op class (`forward`, `backward`: "
       "qkv, attention, attention_out, mlp_up, mlp_down, elementwise, recompute, total, in s), "
       "the head's (`head_forward_s`, `head_backward_s`) and `layers` (workload)",
       P::LayerBreakdown,
       [](const RunResult& r) -> json {
         const models::LayerCompute& lc = *step(r).layer_compute;
         auto classes = [](const models::BlockOpClasses& c) {
           return json{{"qkv", c.qkv},
                       {"attention", c.attention},
                       {"attention_out", c.attention_out},
                       {"mlp_up", c.mlp_up},
                       {"mlp_down", c.mlp_down},
                       {"elementwise", c.elementwise},
                       {"recompute", c.recompute},
                       {"total", c.total()}};
         };
         return json{{"forward", classes(models::block_forward_classes(lc))},
                     {"backward", classes(models::block_backward_classes(lc))},
                     {"head_forward_s", lc.head_forward},
                     {"head_backward_s", lc.head_backward},
                     {"layers", step(r).layer_count}};
       }},
      {"layer_breakdown.forward", "", "s", "the block's forward by op class (workload)",
       P::LayerBreakdown, nullptr},
      {"layer_breakdown.backward", "", "s",
       "the block's backward by op class, recomputation included (workload)", P::LayerBreakdown,
       nullptr},
      {"layer_breakdown.head_forward_s", "", "s", "the output head's forward (workload)",
       P::LayerBreakdown, nullptr},
      {"layer_breakdown.head_backward_s", "", "s", "the output head's backward (workload)",
       P::LayerBreakdown, nullptr},
      {"layer_breakdown.layers", "", "count", "transformer blocks (workload)", P::LayerBreakdown,
       nullptr},
  };
  return keys;
}

}  // namespace syncsim::app
