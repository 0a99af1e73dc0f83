// Megatron's interleaved 1F1B (virtual pipeline stages) and the pipeline split with the embedding
// and the loss counted as layers, in the closed-form parallel step.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "models/parallelism.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

StepConfig config_for(uint32_t ranks, ParallelLayout layout, uint32_t micro_batches) {
  StepConfig c = step_fixtures::step_config("llama2-13b", ranks);  // 40 layers
  c.layout = layout;
  c.gpus_per_host = 8;
  c.grad_accumulation = micro_batches;
  return c;
}

}  // namespace

TEST_CASE("interleaved 1F1B: the bubble shrinks v times (Narayanan et al. 2021)") {
  const Time t = Time::ms(12);
  for (uint32_t p : {2u, 4u, 8u}) {
    for (uint32_t v : {1u, 2u, 3u}) {
      for (uint32_t m : {8u, 32u}) {
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        const auto pipe = pipeline_1f1b(std::vector<Time>(p, t), m, v);
        // m t of work plus (p - 1) chunks of t / v to fill and drain.
        CHECK(pipe.total == t * m + t * (p - 1) / v);
        CHECK(pipe.bubble_fraction == doctest::Approx(static_cast<double>(p - 1) / (v * m)));
      }
    }
  }
  // v = 1 is plain 1F1B, also with uneven stages: (m - 1) t_max + sum t_i.
  const std::vector<Time> uneven = {Time::ms(10), Time::ms(10), Time::ms(15)};
  CHECK(pipeline_1f1b(uneven, 4, 1).total == pipeline_1f1b(uneven, 4).total);
  CHECK(pipeline_1f1b(uneven, 4, 1).total == Time::ms(3 * 15 + 35));
  CHECK(pipeline_1f1b(uneven, 4, 5).total == Time::ms(4 * 15 + 4));
}

TEST_CASE("interleaved 1F1B: layers split over p x v virtual stages, as Megatron splits them") {
  // Llama 3.1 70B on PP 4 x VP 5 (the dgxc recipe): 20 virtual stages of 4 layers.
  ParallelLayout l{.pipeline = 4, .virtual_pipeline = 5};
  CHECK(pipeline_stage_layers(l, 80) == std::vector<uint32_t>(20, 4));
  CHECK(pipeline_rank_layers(l, 80) == std::vector<uint32_t>(4, 20));
  // Llama 3.1 405B on PP 8 x VP 8: 126 layers do not split over 64 stages ...
  l = ParallelLayout{.pipeline = 8, .virtual_pipeline = 8};
  CHECK_THROWS_AS(pipeline_stage_layers(l, 126), std::invalid_argument);
  // ... unless the embedding and the loss count as layers: 128 = 64 x 2, one layer fewer on the
  // first and the last virtual stage (Meta 2024, section 3.3.2).
  l.embedding_in_pipeline_split = true;
  l.loss_in_pipeline_split = true;
  const auto split = pipeline_stage_layers(l, 126);
  REQUIRE(split.size() == 64);
  CHECK(split.front() == 1);
  CHECK(split.back() == 1);
  CHECK(split[1] == 2);
  CHECK(split[62] == 2);
  // Rank 0 holds virtual stages 0, 8, ..., 56; rank 7 holds 7, ..., 63.
  const std::vector<uint32_t> ranks = {15, 16, 16, 16, 16, 16, 16, 15};
  CHECK(pipeline_rank_layers(l, 126) == ranks);
  // One flag alone: 127 units over 64 stages do not split.
  l.loss_in_pipeline_split = false;
  CHECK_THROWS_AS(pipeline_stage_layers(l, 126), std::invalid_argument);
  // A stage left with the embedding alone is refused (Megatron's standalone stage, not modelled).
  CHECK_THROWS_AS(
      pipeline_stage_layers(ParallelLayout{.pipeline = 4, .embedding_in_pipeline_split = true}, 3),
      std::invalid_argument);
}

TEST_CASE("interleaved 1F1B: a smaller bubble for v times the sends, in the closed-form step") {
  const auto spec = step_fixtures::eight_gpu_hosts(8);
  const ParallelLayout plain{.tensor = 4, .pipeline = 4, .sequence_parallel = true};
  ParallelLayout interleaved = plain;
  interleaved.virtual_pipeline = 5;  // 40 layers: 20 virtual stages of 2
  const uint32_t m = 16;
  const StepResult r1 = simulate_parallel_step(spec, Fidelity::Analytic, config_for(64, plain, m));
  const StepResult r5 =
      simulate_parallel_step(spec, Fidelity::Analytic, config_for(64, interleaved, m));
  CHECK(r5.layout.virtual_pipeline == 5);
  CHECK(r1.layout.virtual_pipeline == 1);
  // Five times the activation sends per micro-batch, each as long.
  CHECK(r5.pipeline_p2p == r1.pipeline_p2p * 5);
  // The bubble is (sum - max) / v: about a fifth (stage times grow a little with the sends).
  CHECK(r5.pipeline_bubble.seconds() ==
        doctest::Approx(r1.pipeline_bubble.seconds() / 5).epsilon(0.05));
  CHECK(r1.bubble_fraction == doctest::Approx(3.0 / m).epsilon(0.1));
  CHECK(r5.bubble_fraction == doctest::Approx(3.0 / (5 * m)).epsilon(0.1));
  // So the step is shorter by the bubble saved, less the extra sends on the critical path.
  const double saved = (r1.pipeline_bubble - r5.pipeline_bubble).seconds();
  const double extra_sends = (r5.pipeline_p2p - r1.pipeline_p2p).seconds();
  CHECK(r5.step < r1.step);
  CHECK((r1.step - r5.step).seconds() == doctest::Approx(saved - extra_sends).epsilon(0.1));
  // The same parameters per GPU, more activations in flight: 1 + (p - 1) / (p v) = 1.15.
  CHECK(r5.memory_per_gpu_bytes > r1.memory_per_gpu_bytes);
  // Same model FLOPs, shorter step.
  CHECK(r5.mfu > r1.mfu);
}

TEST_CASE("interleaved 1F1B: the uneven 405B-style split sets the pace by the fullest rank") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  // 38 layers + embedding + loss = 40 = PP 4 x VP 5 x 2: ranks 0 and 3 hold 9 layers, 1 and 2
  // hold 10.
  ParallelLayout l{.tensor = 2, .pipeline = 4, .virtual_pipeline = 5};
  l.embedding_in_pipeline_split = true;
  l.loss_in_pipeline_split = true;
  StepConfig c = config_for(32, l, 8);
  c.model.layers = 38;
  const StepResult even = [&] {
    StepConfig e = c;
    e.model.layers = 40;
    e.layout.embedding_in_pipeline_split = false;
    e.layout.loss_in_pipeline_split = false;
    return simulate_parallel_step(spec, Fidelity::Analytic, e);
  }();
  const StepResult split = simulate_parallel_step(spec, Fidelity::Analytic, c);
  // The fullest ranks hold 10 layers either way; what moves is the last rank, which evenly split
  // holds 10 layers and the head (the pace), and here 9 and the head: at most about one layer of
  // time per micro-batch is saved (1/10 of the pipeline).
  CHECK(split.step < even.step);
  CHECK(split.step.seconds() > 0.9 * even.step.seconds());
  // Virtual stages without pipeline parallelism are refused.
  CHECK_THROWS_AS(
      simulate_parallel_step(spec, Fidelity::Analytic,
                             config_for(32, ParallelLayout{.tensor = 2, .virtual_pipeline = 2}, 8)),
      std::invalid_argument);
}
