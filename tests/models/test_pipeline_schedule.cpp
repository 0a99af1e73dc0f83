// The 1F1B schedule operation by operation: the closed form's pipeline time where its assumption
// (equal stages) holds, the schedule's own invariants (dependencies, one operation at a time per
// stage, 1F1B order) and the closed form's error with unequal stages.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/parallelism.hpp"
#include "models/pipeline_schedule.hpp"
#include "step_fixtures.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {

const PipelineOperation& find(const std::vector<PipelineOperation>& s, uint32_t stage, uint32_t mb,
                              bool forward) {
  const auto it = std::find_if(s.begin(), s.end(), [&](const PipelineOperation& op) {
    return op.stage == stage && op.micro_batch == mb && op.forward == forward;
  });
  REQUIRE(it != s.end());
  return *it;
}

}  // namespace

TEST_CASE("1f1b schedule: equal stages end at (m + p - 1) (f + b), the closed form") {
  for (const uint32_t p : {2u, 4u, 8u}) {
    for (const uint32_t m : {1u, 3u, 8u, 32u}) {
      CAPTURE(p);
      CAPTURE(m);
      const std::vector<Time> f(p, Time::us(3));
      const std::vector<Time> b(p, Time::us(7));
      const auto s = schedule_1f1b(f, b, m);
      CHECK(s.size() == 2 * p * m);
      CHECK(schedule_end(s) == Time::us(10) * (m + p - 1));
      CHECK(schedule_end(s) == pipeline_1f1b(std::vector<Time>(p, Time::us(10)), m).total);
    }
  }
}

TEST_CASE(
    "1f1b schedule: dependencies, one operation at a time, warm-up then one-forward-one-backward") {
  const std::vector<Time> f = {Time::us(2), Time::us(5), Time::us(3), Time::us(4)};
  const std::vector<Time> b = {Time::us(4), Time::us(9), Time::us(6), Time::us(8)};
  const uint32_t p = 4;
  const uint32_t m = 6;
  const auto s = schedule_1f1b(f, b, m);
  for (uint32_t i = 0; i < p; ++i) {
    for (uint32_t j = 0; j < m; ++j) {
      const auto& fw = find(s, i, j, true);
      const auto& bw = find(s, i, j, false);
      CHECK(fw.end - fw.start == f[i]);
      CHECK(bw.end - bw.start == b[i]);
      if (i > 0) CHECK(fw.start >= find(s, i - 1, j, true).end);
      if (i + 1 < p) CHECK(bw.start >= find(s, i + 1, j, false).end);
      CHECK(bw.start >= fw.end);
    }
    // A stage's operations do not overlap, and it runs p - i - 1 forwards before its first
    // backward.
    std::vector<PipelineOperation> mine;
    for (const auto& op : s)
      if (op.stage == i) mine.push_back(op);
    for (std::size_t k = 1; k < mine.size(); ++k) CHECK(mine[k].start >= mine[k - 1].end);
    std::size_t warmup = 0;
    while (mine[warmup].forward) ++warmup;
    CHECK(warmup == std::min<std::size_t>(p - i, m));  // the warm-up and the first 1F1B forward
  }
  // The closed form takes the slowest stage m times plus every other stage once. Here the other
  // stages' warm-up and drain partly overlap the slowest stage's work, so the schedule ends
  // earlier (104 against 111 us): the closed form errs high with unequal stages, by 6.7 % here;
  // the slowest stage's own work plus the first stage's forward and backward bound it below.
  std::vector<Time> total(p);
  for (uint32_t i = 0; i < p; ++i) total[i] = f[i] + b[i];
  const double closed = pipeline_1f1b(total, m).total.seconds();
  const double exact = schedule_end(s).seconds();
  MESSAGE("unequal stages: schedule " << exact * 1e6 << " us, closed form " << closed * 1e6
                                      << " us");
  CHECK(exact <= closed);
  CHECK(exact >= closed / 1.10);
  CHECK(exact >= (Time::us(14) * m + f[0] + b[0]).seconds());
}

TEST_CASE("pipeline schedule in the step: a PP layout carries it, its end is the closed form's") {
  const auto spec = step_fixtures::eight_gpu_hosts(4);
  StepConfig c = step_fixtures::step_config("llama2-13b", 32);
  c.gpus_per_host = 8;
  c.grad_accumulation = 8;
  c.layout = ParallelLayout{.tensor = 2, .pipeline = 4};
  const StepResult r = simulate_parallel_step(spec, Fidelity::Analytic, c);
  REQUIRE(r.pipeline_schedule.size() == 2 * 4 * 8);
  // 40 layers split 10 per stage; the last stage adds the head, so the stages differ a little.
  const double pipeline = (r.step - r.optimizer).seconds();
  CHECK(schedule_end(r.pipeline_schedule).seconds() <= pipeline * 1.05);
  CHECK(schedule_end(r.pipeline_schedule).seconds() >= 0.8 * pipeline);
  // Interleaved: the schedule walks 2 chunks per rank, and ends within 5 % of the closed form.
  c.layout.virtual_pipeline = 2;
  c.model.layers = 40;
  const StepResult v = simulate_parallel_step(spec, Fidelity::Analytic, c);
  REQUIRE(v.pipeline_schedule.size() == 2 * 4 * 2 * 8);
  const double interleaved = (v.step - v.optimizer).seconds();
  CHECK(schedule_end(v.pipeline_schedule).seconds() <= interleaved * 1.05);
  CHECK(schedule_end(v.pipeline_schedule).seconds() >= 0.8 * interleaved);
}

TEST_CASE(
    "interleaved schedule: Megatron's order, dependencies, and its bubble against the closed "
    "form") {
  // Equal ranks of v chunks each of f / v and b / v: the closed form (Narayanan et al. 2021) gives
  // m (f + b) + (p - 1)(f + b) / v. Megatron's order reaches it when m is a multiple of p.
  for (const uint32_t p : {2u, 4u}) {
    for (const uint32_t v : {2u, 3u}) {
      for (const uint32_t m : {p, 2 * p, 4 * p}) {
        CAPTURE(p);
        CAPTURE(v);
        CAPTURE(m);
        const Time f = Time::us(3) * static_cast<int64_t>(v);
        const Time b = Time::us(6) * static_cast<int64_t>(v);
        const std::vector<Time> vf(p * v, f / v);
        const std::vector<Time> vb(p * v, b / v);
        const auto s = schedule_pipeline(vf, vb, p, m);
        CHECK(s.size() == 2 * p * v * m);
        const Time closed = pipeline_1f1b(std::vector<Time>(p, f + b), m, v).total;
        CHECK(schedule_end(s) == closed);
        // Each forward follows the previous virtual stage's; each backward the next one's.
        for (const auto& op : s) {
          const uint32_t vs = op.virtual_stage(p);
          if (op.forward && vs > 0) {
            const auto prev = std::find_if(s.begin(), s.end(), [&](const PipelineOperation& o) {
              return o.forward && o.micro_batch == op.micro_batch && o.virtual_stage(p) == vs - 1;
            });
            REQUIRE(prev != s.end());
            CHECK(op.start >= prev->end);
          }
        }
      }
    }
  }
  // Megatron's warm-up: (p - i - 1) 2 + (v - 1) p forwards before the first backward.
  const auto order = pipeline_operation_order(4, 2, 8);
  for (uint32_t i = 0; i < 4; ++i) {
    std::size_t warmup = 0;
    while (order[i][warmup].forward) ++warmup;
    CHECK(warmup == (4 - i - 1) * 2 + (2 - 1) * 4 + 1);  // the warm-up and the first 1F1B forward
    // The first group's forwards: chunk 0 for micro-batches 0..3, then chunk 1 for them.
    CHECK(order[i][0].chunk == 0);
    CHECK(order[i][4].chunk == 1);
    CHECK(order[i][4].micro_batch == 0);
  }
  // A last group of fewer than p micro-batches still schedules (no deadlock).
  CHECK_NOTHROW(schedule_pipeline(std::vector<Time>(8, Time::us(1)),
                                  std::vector<Time>(8, Time::us(2)), 4, 6));
}
