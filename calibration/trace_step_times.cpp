#include "calibration/trace_step_times.hpp"

#include <algorithm>

namespace syncsim::calibration {

namespace {

std::vector<TimeInterval> merged(std::vector<TimeInterval> v) {
  std::sort(v.begin(), v.end(),
            [](const TimeInterval& a, const TimeInterval& b) { return a.start < b.start; });
  std::vector<TimeInterval> out;
  for (const auto& i : v) {
    if (i.end <= i.start) continue;
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

bool is_compute(const TraceKernel& k) {
  return k.kind != KernelClass::Nccl && k.kind != KernelClass::Memory;
}

}  // namespace

double union_length(std::vector<TimeInterval> intervals) {
  double total = 0;
  for (const auto& i : merged(std::move(intervals))) total += i.end - i.start;
  return total;
}

double uncovered_length(std::vector<TimeInterval> covered, std::vector<TimeInterval> covering) {
  const auto a = merged(std::move(covered));
  const auto b = merged(std::move(covering));
  double total = 0;
  std::size_t j = 0;
  for (const auto& i : a) {
    double at = i.start;
    while (j < b.size() && b[j].end <= at) ++j;
    for (std::size_t c = j; c < b.size() && b[c].start < i.end; ++c) {
      if (b[c].start > at) total += b[c].start - at;
      at = std::max(at, b[c].end);
      if (at >= i.end) break;
    }
    if (at < i.end) total += i.end - at;
  }
  return total;
}

MeasuredSteps measure_steps(const ProfilerTrace& trace) {
  MeasuredSteps out;
  for (std::size_t s = 0; s < trace.steps.size(); ++s) {
    std::vector<TimeInterval> all, comm, compute, forward, backward, optimizer;
    double first = 0, last = 0, last_compute_end = -1;
    int kernels = 0;
    for (const auto& k : trace.kernels) {
      if (k.step != static_cast<int>(s)) continue;
      const TimeInterval i{k.start_us, k.end_us()};
      if (kernels == 0 || k.start_us < first) first = k.start_us;
      if (kernels == 0 || k.end_us() > last) last = k.end_us();
      ++kernels;
      all.push_back(i);
      if (k.kind == KernelClass::Nccl) {
        comm.push_back(i);
      } else if (is_compute(k)) {
        compute.push_back(i);
        if (k.phase == Phase::Optimizer) {
          optimizer.push_back(i);
        } else {
          (k.phase == Phase::Backward ? backward : forward).push_back(i);
          last_compute_end = std::max(last_compute_end, k.end_us());
        }
      }
    }
    if (kernels == 0) continue;
    MeasuredStep m;
    m.name = trace.steps[s].name;
    m.kernels = kernels;
    m.span_us = last - first;
    m.busy_us = union_length(all);
    m.forward_us = union_length(forward);
    m.backward_us = union_length(backward);
    m.optimizer_us = union_length(optimizer);
    m.comm_us = union_length(comm);
    m.exposed_comm_us = uncovered_length(comm, compute);
    if (last_compute_end >= 0) {
      std::vector<TimeInterval> after;
      for (const auto& c : comm) {
        if (c.end > last_compute_end) after.push_back({std::max(c.start, last_compute_end), c.end});
      }
      m.tail_us = uncovered_length(after, compute);
    }
    out.steps.push_back(m);
  }
  if (out.steps.empty()) {
    throw TraceError(trace.file + ": expected kernels launched inside a ProfilerStep, found none");
  }
  MeasuredStep& mean = out.mean;
  mean.name = "mean";
  const auto n = static_cast<double>(out.steps.size());
  for (const auto& m : out.steps) {
    mean.kernels += m.kernels;
    mean.span_us += m.span_us / n;
    mean.busy_us += m.busy_us / n;
    mean.forward_us += m.forward_us / n;
    mean.backward_us += m.backward_us / n;
    mean.optimizer_us += m.optimizer_us / n;
    mean.comm_us += m.comm_us / n;
    mean.exposed_comm_us += m.exposed_comm_us / n;
    mean.tail_us += m.tail_us / n;
  }
  mean.kernels = static_cast<int>(mean.kernels / static_cast<int>(out.steps.size()));
  return out;
}

}  // namespace syncsim::calibration
