#pragma once
// The shapes a PyTorch profiler trace records for the ops that launch GEMM and attention kernels
// (torch.profiler record_shapes=True: "Input Dims", "Input type", "Concrete Inputs" in a cpu_op's
// args), and the FLOPs those shapes imply. calibration/profiler_trace.hpp links kernels to these
// ops; calibration/compute_fit.hpp turns shape and duration into efficiency.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace syncsim::calibration {

// One matmul as the launching op recorded it: batch x (m x k) * (k x n).
struct MatmulShape {
  int64_t batch = 1;
  int64_t m = 0, n = 0, k = 0;
  std::string dtype;  // bf16 | fp16 | fp8 | fp32, empty when the op's input type is another
  double flops() const;
};

// One scaled-dot-product attention call: queries x keys per (batch, head).
struct AttentionShape {
  int64_t batch = 0, heads = 0, queries = 0, keys = 0, head_dim = 0;
  bool backward = false;
  bool causal = false;
  std::string dtype;
  // FlashAttention's own count (Dao-AILab/flash-attention benchmarks/benchmark_flash_attention.py):
  // forward 4 b h s_q s_k d, halved when causal; backward 2.5 x forward (five matmuls for two).
  double flops() const;
};

// The matmul an aten op (mm, bmm, matmul, addmm, baddbmm, linear, _scaled_mm) recorded in its
// args; nullopt for another op or shapes that do not multiply.
std::optional<MatmulShape> matmul_shape(const std::string& op, const nlohmann::json& args);

// The attention an SDPA / flash-attention op (forward or backward) recorded in its args.
std::optional<AttentionShape> attention_shape(const std::string& op, const nlohmann::json& args);

}  // namespace syncsim::calibration
