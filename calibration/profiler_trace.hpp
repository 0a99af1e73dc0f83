#pragma once
// Reads a PyTorch profiler trace (torch.profiler's export_chrome_trace, Kineto's Chrome-trace JSON)
// and classifies its GPU kernels for the compute fit (calibration/compute_fit.hpp) and the measured
// step phases (calibration/trace_step_times.hpp).
//
// The format, as Kineto writes it (pytorch/kineto libkineto/src/output_json.cpp; a small real
// example: facebookresearch/HolisticTraceAnalysis tests/data/call_stack/backward_thread.json):
//   {"traceEvents": [ {"ph": "X", "cat": "kernel", "name": "...", "pid": DEVICE, "tid": STREAM,
//                      "ts": us, "dur": us, "args": {"device": 0, "stream": 7, "correlation": 42,
//                      "grid": [...], "block": [...]}},
//                     {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": P,
//                      "tid": T, "ts": us, "dur": us, "args": {"correlation": 42}},
//                     {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": P, "tid": T, ...
//                      "args": {"Input Dims": [[m, k], [k, n]], "Input type": ["c10::BFloat16",
//                      ...]}},
//                     {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", ...},
//                     {"ph": "s"/"f", "cat": "ac2g", "id": 42, ...}  (launch -> kernel arrows)
//   ], "deviceProperties": [{"name": "NVIDIA H100 80GB HBM3", ...}]}
// Older Kineto spells the categories "Kernel", "Runtime", "Operator", "Memcpy"; both are read.
//
// A kernel is linked to its launch by its `correlation` arg (the runtime event with the same one),
// or, without that arg, by the ac2g flow that ends on it. The launching CPU op is the innermost
// cpu_op around the launch on the launching thread; a matmul or attention op among its ancestors
// gives the kernel's shape (record_shapes=True).
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/recorded_op_shapes.hpp"

namespace syncsim::calibration {

// A trace that cannot be read. what() is "file: expected ..., found ..." (an input error, exit 2).
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class KernelClass : uint8_t { Gemm, Attention, Nccl, Elementwise, Optimizer, Memory, Other };
inline constexpr int kKernelClasses = 7;

// "gemm", "attention", "nccl", "elementwise", "optimizer", "memory", "other".
std::string_view kernel_class_name(KernelClass c);

// By kernel name (the rules are in docs/calibration.md):
//   nccl         ncclDevKernel_*, ncclKernel_* (any name with "nccl")
//   attention    flash_fwd*, flash_bwd*, flash_attn*, *fmha*, cuDNN's *sdpa* / *attention*
//   optimizer    *multi_tensor_apply*, *Adam* / *adam* as a word (not "hadamard")
//   gemm         *gemm* (sm90_xmma_gemm_*, ampere_bf16_s16816gemm*, cutlass*gemm*), nvjet_*,
//                *gemv*, cuBLAS' splitKreduce, Inductor's triton_tem_*mm*
//   elementwise  *elementwise*, *layer_norm*/*layernorm*, *rms_norm*/*rmsnorm*, vectorized_*,
//                triton_*, *softmax*, *reduce_kernel*
//   other        the rest
// Memory (memcpy, memset) is by the event's category, not its name.
KernelClass classify_kernel(std::string_view name);

enum class Phase : uint8_t { Forward, Backward, Optimizer };
std::string_view phase_name(Phase p);

struct TraceKernel {
  std::string name;
  KernelClass kind = KernelClass::Other;
  double start_us = 0;
  double duration_us = 0;
  int64_t device = 0;
  int64_t stream = 0;
  std::optional<double> launch_us;  // the launch call's start on the CPU, when linked
  std::string launch_op;            // innermost CPU op around the launch, empty when unknown
  // The op that gave the shape (an index private to one trace): the kernels of one op call share
  // it, so split-K GEMMs and multi-kernel attention backward are timed together.
  int64_t shape_op = -1;
  std::optional<MatmulShape> matmul;
  std::optional<AttentionShape> attention;
  Phase phase = Phase::Forward;
  int step = -1;  // index into ProfilerTrace::steps, -1 outside every step
  double end_us() const { return start_us + duration_us; }
};

struct TraceStep {
  std::string name;  // "ProfilerStep#3", or "(whole trace)" when the trace has no step annotation
  double start_us = 0;
  double end_us = 0;  // of the annotation (CPU side)
};

struct ProfilerTrace {
  std::string file;
  std::string gpu_name;  // deviceProperties' name of the analysed device, empty when absent
  int64_t device = 0;    // the device analysed (the one with the most kernels)
  std::vector<TraceStep> steps;
  std::vector<TraceKernel> kernels;  // the analysed device's, by start
  int64_t linked_launches = 0;       // kernels whose launch was found
  // How forward and backward were told apart: "annotations" (forward/backward user annotations),
  // "autograd" (autograd ops and threads), or "kernel order" (no launch linkage). An optimizer
  // annotation (torch.optim's "Optimizer.step#...") marks the optimizer under every rule.
  std::string phase_rule;
  std::vector<std::string> warnings;
};

// `file` is only used in messages.
ProfilerTrace parse_profiler_trace(const std::string& text, const std::string& file);
ProfilerTrace read_profiler_trace(const std::string& path);

// The phase a user annotation marks, if any: Optimizer for "Optimizer.step#..." and names with
// "optimizer" (not zero_grad), Backward for names with "backward", Forward for names with
// "forward" (e.g. "## forward ##").
std::optional<Phase> annotation_phase(std::string_view name);

}  // namespace syncsim::calibration
