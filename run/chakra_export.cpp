#include "run/chakra_export.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "chakra/chakra_files.hpp"

namespace syncsim::app {

namespace {

// A time rounded to the nearest microsecond (Chakra records whole microseconds).
Time whole_us(Time t) {
  constexpr int64_t kPsPerUs = 1'000'000;
  return Time::ps((t.picoseconds() + kPsPerUs / 2) / kPsPerUs * kPsPerUs);
}

models::ChakraNode compute(uint64_t id, std::string name, Time from, Time to) {
  models::ChakraNode n;
  n.id = id;
  n.name = std::move(name);
  n.kind = models::ChakraNodeKind::Compute;
  n.duration = whole_us(to) - whole_us(from);
  return n;
}

}  // namespace

models::ChakraTrace step_to_chakra(const models::StepResult& step) {
  if (step.engine != "event_driven" || step.parallelism != models::DataParallelism::Ddp ||
      step.rank_backward_end.empty()) {
    throw std::invalid_argument(
        "--chakra-out writes the event-driven DDP step (workload.parallelism: ddp without "
        "model parallelism); this step is " +
        std::string(models::to_string(step.parallelism)) + ", engine " + step.engine);
  }
  const std::size_t n = step.rank_backward_end.size();
  // The slowest rank sets each bucket's ready time (step_sim.cpp: the latest rank's), so its
  // backward gives each bucket's position in the backward pass; every rank's backward is the same
  // work scaled by its compute multiplier.
  std::size_t slowest = 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (step.rank_backward_end[r] > step.rank_backward_end[slowest]) slowest = r;
  }
  const Time s_start = step.rank_backward_start[slowest];
  const double s_len = (step.rank_backward_end[slowest] - s_start).seconds();
  models::ChakraTrace trace;
  trace.ranks.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const Time start = step.rank_backward_start[r];
    const Time end = step.rank_backward_end[r];
    const double len = (end - start).seconds();
    auto& nodes = trace.ranks[r].nodes;
    uint64_t id = 0;
    nodes.push_back(compute(id++, "forward", Time::zero(), start));
    uint64_t last_compute = 0;
    Time cut = start;
    uint64_t previous_bucket = 0;
    bool any_bucket = false;
    for (std::size_t b = 0; b < step.buckets.size(); ++b) {
      const double at = s_len > 0 ? (step.buckets[b].ready - s_start).seconds() / s_len : 0.0;
      const Time ready = std::clamp(
          start + Time::ps(std::llround(std::clamp(at, 0.0, 1.0) * len * 1e12)), start, end);
      if (whole_us(ready) > whole_us(cut)) {
        models::ChakraNode part =
            compute(id++, "backward until bucket " + std::to_string(b), cut, ready);
        part.data_deps.push_back(last_compute);
        nodes.push_back(std::move(part));
        last_compute = nodes.back().id;
        cut = ready;
      }
      models::ChakraNode ar;
      ar.id = id++;
      ar.name = "all_reduce bucket " + std::to_string(b);
      ar.kind = models::ChakraNodeKind::Collective;
      ar.op = models::CollectiveOp::AllReduce;
      ar.bytes = step.buckets[b].bytes;
      ar.data_deps.push_back(last_compute);
      if (any_bucket) ar.ctrl_deps.push_back(previous_bucket);
      previous_bucket = ar.id;
      any_bucket = true;
      nodes.push_back(std::move(ar));
    }
    if (whole_us(end) > whole_us(cut)) {
      models::ChakraNode part = compute(id++, "backward end", cut, end);
      part.data_deps.push_back(last_compute);
      nodes.push_back(std::move(part));
      last_compute = nodes.back().id;
    }
    models::ChakraNode opt = compute(id++, "optimizer", Time::zero(), step.optimizer);
    opt.data_deps.push_back(last_compute);
    if (any_bucket) opt.data_deps.push_back(previous_bucket);
    nodes.push_back(std::move(opt));
  }
  return trace;
}

std::vector<std::string> write_step_chakra(const models::StepResult& step, const std::string& dir) {
  return chakra::write_trace(step_to_chakra(step), dir);
}

}  // namespace syncsim::app
