#pragma once
// Measured step phases of a profiler trace (calibration/profiler_trace.hpp), per ProfilerStep:
//   forward / backward / optimizer  GPU time of that phase's compute kernels (every kernel but
//                                   NCCL and memcpy/memset), as the union of their intervals over
//                                   all streams, so kernels running side by side count once;
//   comm                            the union of NCCL kernel intervals;
//   exposed comm                    NCCL time not overlapped by any compute kernel (any stream);
//   tail                            the exposed NCCL time after the step's last forward/backward
//                                   compute kernel ends (the model's T_tail: the last gradient
//                                   sync, which cannot start before backward ends);
//   span                            first kernel start to last kernel end; idle = span - busy.
#include <string>
#include <vector>

#include "calibration/profiler_trace.hpp"

namespace syncsim::calibration {

struct TimeInterval {
  double start = 0, end = 0;
};

// Length of the union of `intervals`.
double union_length(std::vector<TimeInterval> intervals);
// Length of the union of `covered` not inside the union of `covering`.
double uncovered_length(std::vector<TimeInterval> covered, std::vector<TimeInterval> covering);

struct MeasuredStep {
  std::string name;
  int kernels = 0;
  double span_us = 0;
  double busy_us = 0;  // union of every kernel
  double forward_us = 0;
  double backward_us = 0;
  double optimizer_us = 0;
  double comm_us = 0;
  double exposed_comm_us = 0;
  double tail_us = 0;
};

struct MeasuredSteps {
  std::vector<MeasuredStep> steps;  // the trace's steps that have kernels, in order
  MeasuredStep mean;                // over `steps`, named "mean"
};

// Throws TraceError when no step has a kernel.
MeasuredSteps measure_steps(const ProfilerTrace& trace);

}  // namespace syncsim::calibration
