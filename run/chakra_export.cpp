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

// FSDP: rank 0's compute slices and collectives with the schedule's dependencies (fsdp.hpp): a
// slice after the one before and after its all-gather; the all-gather of slice k issued when slice
// k-1 starts, i.e. after slice k-2; a reduce-scatter after its slice, HSDP's all-reduce after its
// reduce-scatter; each stream's collectives in issue order.
models::ChakraTrace fsdp_to_chakra(const models::StepResult& step) {
  const std::vector<models::ComputeSlice>& slices = step.rank0_compute;
  const std::vector<models::CollectiveTiming>& rows = step.collectives;
  const std::size_t n = step.rank_compute_multiplier.size();
  if (slices.empty() || n == 0 || step.fsdp_slice_gather.size() != slices.size() ||
      step.fsdp_slice_reduce.size() != slices.size() || step.fsdp_comm_then.size() != rows.size()) {
    throw std::invalid_argument("--chakra-out: this FSDP step kept no schedule to export");
  }
  const std::size_t shard = step.fsdp_shard_degree > 0 ? step.fsdp_shard_degree : n;
  // Issue order: when each row was issued on rank 0's timeline (index order on ties).
  std::vector<std::size_t> order(rows.size());
  for (std::size_t c = 0; c < rows.size(); ++c) order[c] = c;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rows[a].ready < rows[b].ready; });
  auto stream_of = [&](std::size_t c) {
    return step.fsdp_separate_streams && rows[c].kind != "all_gather" ? 1 : 0;
  };
  std::vector<int64_t> previous_on_stream(rows.size(), -1);
  std::vector<int64_t> last_on_stream{-1, -1};
  for (std::size_t c : order) {
    int64_t& last = last_on_stream[static_cast<std::size_t>(stream_of(c))];
    previous_on_stream[c] = last;
    last = static_cast<int64_t>(c);
  }
  std::vector<int64_t> slice_of_gather(rows.size(), -1);
  for (std::size_t k = 0; k < slices.size(); ++k) {
    if (step.fsdp_slice_gather[k] >= 0)
      slice_of_gather[static_cast<std::size_t>(step.fsdp_slice_gather[k])] =
          static_cast<int64_t>(k);
  }
  std::vector<int64_t> slice_of_reduce(rows.size(), -1);
  for (std::size_t k = 0; k < slices.size(); ++k) {
    if (step.fsdp_slice_reduce[k] >= 0)
      slice_of_reduce[static_cast<std::size_t>(step.fsdp_slice_reduce[k])] =
          static_cast<int64_t>(k);
  }
  std::vector<int64_t> before_then(rows.size(), -1);
  for (std::size_t c = 0; c < rows.size(); ++c) {
    if (step.fsdp_comm_then[c] >= 0)
      before_then[static_cast<std::size_t>(step.fsdp_comm_then[c])] = static_cast<int64_t>(c);
  }
  const uint64_t first_comm = slices.size();
  models::ChakraTrace trace;
  trace.ranks.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    const double scale = step.rank_compute_multiplier[r] / step.rank_compute_multiplier[0];
    auto& nodes = trace.ranks[r].nodes;
    // Slice durations from cumulative compute rounded once each, so rounding never accumulates.
    double total_s = 0;
    for (std::size_t k = 0; k < slices.size(); ++k) {
      const Time from = Time::ps(std::llround(total_s * 1e12));
      total_s += (slices[k].end - slices[k].start).seconds() * scale;
      models::ChakraNode c =
          compute(k, slices[k].name, from, Time::ps(std::llround(total_s * 1e12)));
      if (k > 0) c.data_deps.push_back(k - 1);
      if (step.fsdp_slice_gather[k] >= 0)
        c.data_deps.push_back(first_comm + static_cast<uint64_t>(step.fsdp_slice_gather[k]));
      nodes.push_back(std::move(c));
    }
    for (std::size_t c = 0; c < rows.size(); ++c) {
      models::ChakraNode x;
      x.id = first_comm + c;
      x.name = rows[c].kind + " unit " + std::to_string(rows[c].unit);
      x.kind = models::ChakraNodeKind::Collective;
      x.op = models::parse_collective_op(rows[c].kind);
      x.bytes = rows[c].bytes;
      // A replay matches a group's collectives in the order each rank issues them, and the two
      // streams interleave differently on ranks that compute at different speeds: so each
      // stream's collectives get a group name of their own (PyTorch issues both on one process
      // group, whose order NCCL keeps per stream).
      if (x.op == models::CollectiveOp::AllReduce) {
        x.group = "replicate" + std::to_string(r % shard);
      } else {
        x.group = "shard" + std::to_string(r / shard) +
                  (stream_of(c) == 0 ? ".all_gather" : ".reduce_scatter");
      }
      if (slice_of_gather[c] >= 2)
        x.data_deps.push_back(static_cast<uint64_t>(slice_of_gather[c] - 2));
      if (slice_of_reduce[c] >= 0) x.data_deps.push_back(static_cast<uint64_t>(slice_of_reduce[c]));
      if (before_then[c] >= 0)
        x.data_deps.push_back(first_comm + static_cast<uint64_t>(before_then[c]));
      if (previous_on_stream[c] >= 0)
        x.ctrl_deps.push_back(first_comm + static_cast<uint64_t>(previous_on_stream[c]));
      nodes.push_back(std::move(x));
    }
    models::ChakraNode opt =
        compute(first_comm + rows.size(), "optimizer", Time::zero(), step.optimizer);
    opt.data_deps.push_back(slices.size() - 1);
    for (int64_t last : last_on_stream) {
      if (last >= 0) opt.data_deps.push_back(first_comm + static_cast<uint64_t>(last));
    }
    nodes.push_back(std::move(opt));
  }
  return trace;
}

}  // namespace

models::ChakraTrace step_to_chakra(const models::StepResult& step) {
  if (step.engine == "event_driven" && step.parallelism == models::DataParallelism::Fsdp) {
    return fsdp_to_chakra(step);
  }
  if (step.engine != "event_driven" || step.parallelism != models::DataParallelism::Ddp ||
      step.rank_backward_end.empty()) {
    throw std::invalid_argument(
        "--chakra-out writes the event-driven DDP and FSDP steps; the closed form of model "
        "parallelism (TP/CP/PP) has no event graph to export; this step is " +
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
