#pragma once
// The compute model's parameters fitted from a profiler trace (calibration/profiler_trace.hpp):
//   - the GEMM efficiency curve e_max * I / (I + I_half) (alpha_beta_fit.hpp's fit_gemm) per
//     dtype, from every matmul op call whose shape the trace recorded: achieved TFLOPS = 2 b m n k
//     over the summed time of the kernels that call launched (split-K reductions included);
//   - attention efficiency: FlashAttention's FLOP count (AttentionShape::flops) over the summed
//     time of the attention calls with shapes, divided by the dtype's peak; unknown without shapes;
//   - the per-kernel overhead: the median gap between back-to-back compute kernels on one stream,
//     counting only pairs where the second was launched before the first ended (it waited in the
//     stream's queue, so the gap is the GPU's own launch latency, not the CPU's pace). Without
//     launch times every gap counts.
#include <functional>
#include <string>
#include <vector>

#include "calibration/alpha_beta_fit.hpp"
#include "calibration/profiler_trace.hpp"

namespace syncsim::calibration {

struct AttentionEfficiency {
  std::string dtype;
  double peak_tflops = 0;
  double achieved_tflops = 0;
  double efficiency = 0;  // achieved / peak
  int calls = 0;
};

struct ComputeFit {
  std::vector<GemmSample> gemm_samples;
  std::vector<GemmFit> gemm;                   // per dtype with a peak and enough shapes
  std::vector<AttentionEfficiency> attention;  // empty: unknown
  int attention_calls_without_shape = 0;
  double kernel_gap_us = 0;  // 0 with no gap measured
  int kernel_gaps = 0;
  std::vector<std::string> notes;  // what could not be fitted, and why
};

// A dtype's dense peak in TFLOPS; 0 when unknown (that dtype is not fitted, and a note says so).
using PeakTflops = std::function<double(const std::string& dtype)>;

// One sample per matmul op call with a recorded shape and a GEMM kernel.
std::vector<GemmSample> trace_gemm_samples(const ProfilerTrace& trace);
// The median gap described above; `gaps` receives the number of gaps it is the median of.
double median_kernel_gap_us(const ProfilerTrace& trace, int* gaps = nullptr);

ComputeFit fit_compute(const ProfilerTrace& trace, const PeakTflops& peak_tflops);

}  // namespace syncsim::calibration
