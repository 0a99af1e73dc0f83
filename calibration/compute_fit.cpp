#include "calibration/compute_fit.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace syncsim::calibration {

namespace {

// The kernels of each op call that gave a shape, by call.
struct Call {
  const TraceKernel* first = nullptr;
  double duration_us = 0;
  bool gemm_kernel = false;
  bool attention_kernel = false;
};

std::map<int64_t, Call> calls_by_op(const ProfilerTrace& trace) {
  std::map<int64_t, Call> calls;
  for (const auto& k : trace.kernels) {
    if (k.shape_op < 0 || k.kind == KernelClass::Memory) continue;
    Call& c = calls[k.shape_op];
    if (c.first == nullptr) c.first = &k;
    c.duration_us += k.duration_us;
    c.gemm_kernel = c.gemm_kernel || k.kind == KernelClass::Gemm;
    c.attention_kernel = c.attention_kernel || k.kind == KernelClass::Attention;
  }
  return calls;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

std::vector<GemmSample> trace_gemm_samples(const ProfilerTrace& trace) {
  std::vector<GemmSample> out;
  for (const auto& [op, c] : calls_by_op(trace)) {
    if (!c.first->matmul || !c.gemm_kernel || !(c.duration_us > 0)) continue;
    const MatmulShape& s = *c.first->matmul;
    if (s.dtype.empty()) continue;
    GemmSample g;
    // A batched matmul is `batch` GEMMs of m x n x k at once, each of the same intensity: the
    // sample is one of them at the batch's throughput.
    g.m = s.m;
    g.n = s.n;
    g.k = s.k;
    g.dtype = s.dtype;
    g.tflops = s.flops() / (c.duration_us * 1e6);
    out.push_back(g);
  }
  return out;
}

double median_kernel_gap_us(const ProfilerTrace& trace, int* gaps) {
  std::map<int64_t, const TraceKernel*> last_on_stream;
  std::vector<double> v;
  for (const auto& k : trace.kernels) {
    if (k.kind == KernelClass::Nccl || k.kind == KernelClass::Memory) continue;
    const TraceKernel*& prev = last_on_stream[k.stream];
    if (prev != nullptr) {
      const double gap = k.start_us - prev->end_us();
      const bool queued = !k.launch_us || *k.launch_us < prev->end_us();
      if (gap >= 0 && queued) v.push_back(gap);
    }
    prev = &k;
  }
  if (gaps != nullptr) *gaps = static_cast<int>(v.size());
  return median(std::move(v));
}

ComputeFit fit_compute(const ProfilerTrace& trace, const PeakTflops& peak_tflops) {
  ComputeFit fit;
  fit.gemm_samples = trace_gemm_samples(trace);
  std::vector<std::string> dtypes;
  for (const auto& s : fit.gemm_samples) {
    if (std::find(dtypes.begin(), dtypes.end(), s.dtype) == dtypes.end()) dtypes.push_back(s.dtype);
  }
  for (const auto& d : dtypes) {
    std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
    for (const auto& s : fit.gemm_samples) {
      if (s.dtype == d) shapes.insert({s.m, s.n, s.k});
    }
    const double peak = peak_tflops(d);
    if (!(peak > 0)) {
      fit.notes.push_back("gemm " + d + ": no peak TFLOPS for " + d + " (give --peak " + d +
                          "=TFLOPS): not fitted");
      continue;
    }
    if (shapes.size() < 2) {
      fit.notes.push_back("gemm " + d + ": expected GEMMs of at least 2 distinct shapes, found " +
                          std::to_string(shapes.size()) + ": not fitted");
      continue;
    }
    try {
      fit.gemm.push_back(fit_gemm(fit.gemm_samples, d, peak));
    } catch (const FitError& e) {
      fit.notes.push_back(std::string(e.what()) + ": not fitted");
    }
  }
  if (fit.gemm_samples.empty()) {
    fit.notes.push_back(
        "gemm: no GEMM with a recorded shape (profile with record_shapes=True and CUDA "
        "activities): no efficiency curve");
  }

  std::map<std::string, std::pair<double, double>> attention;  // dtype -> (flops, us)
  std::map<std::string, int> attention_calls;
  for (const auto& [op, c] : calls_by_op(trace)) {
    if (!c.first->attention || !c.attention_kernel || !(c.duration_us > 0)) continue;
    const AttentionShape& s = *c.first->attention;
    auto& [flops, us] = attention[s.dtype];
    flops += s.flops();
    us += c.duration_us;
    ++attention_calls[s.dtype];
  }
  for (const auto& k : trace.kernels) {
    if (k.kind == KernelClass::Attention && !k.attention) ++fit.attention_calls_without_shape;
  }
  for (const auto& [dtype, fu] : attention) {
    AttentionEfficiency a;
    a.dtype = dtype.empty() ? "unknown" : dtype;
    a.calls = attention_calls[dtype];
    a.achieved_tflops = fu.first / (fu.second * 1e6);
    a.peak_tflops = dtype.empty() ? 0.0 : peak_tflops(dtype);
    if (!(a.peak_tflops > 0)) {
      fit.notes.push_back("attention " + a.dtype + ": no peak TFLOPS: efficiency unknown");
      continue;
    }
    a.efficiency = a.achieved_tflops / a.peak_tflops;
    if (a.efficiency > 1) {
      fit.notes.push_back("attention " + a.dtype + ": " + std::to_string(a.achieved_tflops) +
                          " TFLOPS achieved, above the peak of " + std::to_string(a.peak_tflops) +
                          ": not recorded (is the peak right?)");
      continue;
    }
    fit.attention.push_back(a);
  }
  if (fit.attention.empty() && fit.attention_calls_without_shape > 0) {
    fit.notes.push_back(
        "attention: " + std::to_string(fit.attention_calls_without_shape) +
        " attention kernels without a recorded shape and none with one: efficiency unknown");
  }
  fit.kernel_gap_us = median_kernel_gap_us(trace, &fit.kernel_gaps);
  return fit;
}

}  // namespace syncsim::calibration
