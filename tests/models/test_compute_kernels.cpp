#include <doctest/doctest.h>

#include <cmath>

#include "models/attention_kernels.hpp"
#include "models/gpu.hpp"
#include "models/memory_bound_kernels.hpp"
#include "models/step_model.hpp"
#include "models/transformer.hpp"

using namespace syncsim;
using namespace syncsim::models;

namespace {
// XLA's measured BF16 GEMM throughput on sm_90 (H100), batch 1, in TFLOPS:
// openxla/xla xla/service/gpu/model/matmul_interpolator_data.h (kDefaultMatmulPTable, "sm_90",
// "bf16xbf16->bf16"), as vendored in tensorflow/tensorflow third_party/xla at 372d578.
struct MeasuredGemm {
  double m, n, k, tflops;
};
constexpr MeasuredGemm kXlaSm90[] = {
    {1024, 2048, 256, 139.5},  {256, 2048, 256, 41.8},    {4096, 512, 512, 238.8},
    {512, 256, 512, 21.8},     {256, 2048, 4096, 285.9},  {4096, 1024, 512, 343.7},
    {2048, 2048, 2048, 632.0}, {256, 512, 4096, 91.7},    {256, 1024, 256, 22.7},
    {4096, 4096, 256, 392.2},  {4096, 4096, 4096, 783.3}, {512, 4096, 1024, 373.3},
    {512, 256, 4096, 91.1},    {256, 1024, 4096, 172.3},  {4096, 2048, 512, 447.0},
    {2048, 256, 1024, 135.8},  {2048, 512, 2048, 347.7},  {1024, 256, 1024, 68.3},
    {4096, 256, 2048, 304.7},  {1024, 1024, 2048, 350.0}, {1024, 512, 2048, 220.0},
    {512, 2048, 1024, 232.6},  {4096, 512, 1024, 370.8},  {1024, 2048, 2048, 524.3},
    {2048, 1024, 2048, 523.3},
};
}  // namespace

TEST_CASE("gpu: the GEMM shape model against XLA's measured sm_90 table") {
  const GpuSpec h100 = *gpu_preset("h100");
  double sum = 0;
  double worst = 0;
  for (const MeasuredGemm& g : kXlaSm90) {
    const double predicted =
        2.0 * g.m * g.n * g.k / gemm_seconds(h100, DType::Bf16, g.m, g.n, g.k) / 1e12;
    const double error = predicted / g.tflops - 1;
    CAPTURE(g.m);
    CAPTURE(g.n);
    CAPTURE(g.k);
    CAPTURE(predicted);
    sum += std::abs(error);
    worst = std::max(worst, std::abs(error));
    // The shapes a training step's GEMMs have: within 10 %.
    if (g.m >= 2048 && g.n >= 2048 && g.k >= 1024) CHECK(std::abs(error) < 0.10);
  }
  const double mean = sum / std::size(kXlaSm90);
  CHECK(mean < 0.16);  // 15.0 % with split-K and the k-depth term; 24 % with waves alone
  CHECK(worst < 0.5);
}

TEST_CASE("gpu: GEMM ceilings are the published maximum achievable matmul FLOPS") {
  CHECK(gpu_preset("h100")->max_gemm_efficiency * 989 == doctest::Approx(794.5));
  CHECK(gpu_preset("a100")->max_gemm_efficiency * 312 == doctest::Approx(271.2));
  CHECK(gpu_preset("b200")->max_gemm_efficiency * 2250 == doctest::Approx(1745));
  CHECK(gpu_preset("h200")->max_gemm_efficiency == gpu_preset("h100")->max_gemm_efficiency);
}

TEST_CASE("attention kernels: the FlashAttention-3 paper's H100 rates, interpolated and scaled") {
  const GpuSpec h100 = *gpu_preset("h100");
  // Measured points come back exactly (causal forward, head dimension 128).
  CHECK(attention_flops_per_s(h100, AttentionKernel::Flash3, false, 8192) ==
        doctest::Approx(602e12));
  CHECK(attention_flops_per_s(h100, AttentionKernel::Cudnn, false, 512) == doctest::Approx(315e12));
  CHECK(attention_flops_per_s(h100, AttentionKernel::Flash2, false, 16384) ==
        doctest::Approx(335e12));
  // Halfway in log2 between 2k and 4k: halfway between the rates.
  CHECK(attention_flops_per_s(h100, AttentionKernel::Cudnn, false, 2048 * std::sqrt(2.0)) ==
        doctest::Approx((484e12 + 518e12) / 2));
  // Beyond the table the rate is held.
  CHECK(attention_flops_per_s(h100, AttentionKernel::Flash3, false, 131072) ==
        doctest::Approx(616e12));
  CHECK(attention_flops_per_s(h100, AttentionKernel::Flash3, false, 128) ==
        doctest::Approx(292e12));
  // Causal backward: the non-causal backward times the forward's causal / non-causal ratio.
  CHECK(attention_flops_per_s(h100, AttentionKernel::Flash3, true, 4096) ==
        doctest::Approx(542e12 * 579.0 / 638.0));
  // Another GPU: the same fraction of its BF16 peak.
  const GpuSpec b200 = *gpu_preset("b200");
  CHECK(attention_flops_per_s(b200, AttentionKernel::Cudnn, false, 8192) ==
        doctest::Approx(529e12 / 989 * 2250));
  // The kernels keep their order at training lengths.
  for (double s : {1024.0, 8192.0}) {
    CHECK(attention_flops_per_s(h100, AttentionKernel::Flash2, false, s) <
          attention_flops_per_s(h100, AttentionKernel::Cudnn, false, s));
  }
}

TEST_CASE("memory-bound kernels: a fused Llama block's bytes, counted by hand") {
  const TransformerShape m = *transformer_preset("llama3-8b");
  const double tokens = 4096;
  const MemoryBoundPass p = block_memory_bound(m, KernelFusion::Fused, false, tokens, 1, false);
  const double th = tokens * 4096;    // norms and residual adds
  const double rope = tokens * 5120;  // 32 query heads and 8 key heads of 128
  const double mlp = tokens * 14336;  // SwiGLU's output
  CHECK(p.forward.bytes == doctest::Approx(2 * 4 * th + 2 * 6 * th + 4 * rope + 6 * mlp));
  CHECK(p.backward.bytes == doctest::Approx(2 * 6 * th + 2 * 6 * th + 4 * rope + 10 * mlp));
  CHECK(p.forward.kernels == 7);
  // Tensor parallelism with sequence parallelism divides every term by TP.
  const MemoryBoundPass split = block_memory_bound(m, KernelFusion::Fused, false, tokens, 4, true);
  CHECK(split.forward.bytes == doctest::Approx(p.forward.bytes / 4));
  // FP8 adds the cast-transposes of the attention output and the activation forward.
  const MemoryBoundPass fp8 = block_memory_bound(m, KernelFusion::Fused, true, tokens, 1, false);
  CHECK(fp8.forward.bytes - p.forward.bytes == doctest::Approx(4 * (th + mlp)));
  // Eager moves several times the bytes of fused; compiled about fused's (it fuses each residual
  // add into the next norm, and copies GQA's repeated keys and values) in fewer launches; eager's
  // backward is twice its forward.
  const MemoryBoundPass eager = block_memory_bound(m, KernelFusion::Eager, false, tokens, 1, false);
  const MemoryBoundPass compiled =
      block_memory_bound(m, KernelFusion::Compiled, false, tokens, 1, false);
  CHECK(eager.forward.bytes > 2 * p.forward.bytes);
  CHECK(compiled.forward.bytes == doctest::Approx(p.forward.bytes).epsilon(0.1));
  CHECK(compiled.forward.kernels < eager.forward.kernels);
  CHECK(eager.backward.bytes == doctest::Approx(2 * eager.forward.bytes));
  // Time: bytes at the HBM rate plus a launch each.
  const GpuSpec h100 = *gpu_preset("h100");
  CHECK(p.forward.seconds(h100) ==
        doctest::Approx(p.forward.bytes / 3.35e12 + 7 * h100.kernel_launch_s));
}

TEST_CASE("step model: the framework's kernels order the step, fused fastest") {
  const TransformerShape m = *transformer_preset("llama3-8b");
  const GpuSpec h100 = *gpu_preset("h100");
  auto step = [&](KernelFusion f, AttentionKernel a) {
    ComputeParams p;
    p.kernels = f;
    p.attention_kernel = a;
    const ComputeTimes t = compute_times(m, h100, p);
    return (t.forward + t.backward).seconds();
  };
  const double fused = step(KernelFusion::Fused, AttentionKernel::Cudnn);
  const double compiled = step(KernelFusion::Compiled, AttentionKernel::Flash2);
  const double eager = step(KernelFusion::Eager, AttentionKernel::Flash2);
  CHECK(fused < compiled);
  CHECK(compiled < eager);
  // The attention kernel alone: FlashAttention-2 is slower than cuDNN on H100.
  CHECK(step(KernelFusion::Fused, AttentionKernel::Flash2) > fused);
  // The layer's pieces still sum to its times, backward's pointwise work included.
  ComputeParams p;
  p.kernels = KernelFusion::Eager;
  p.attention_kernel = AttentionKernel::Flash2;
  const LayerCompute lc = layer_compute(m, h100, p);
  CHECK(block_forward_classes(lc).total() == doctest::Approx(lc.layer_forward));
  CHECK(block_backward_classes(lc).total() == doctest::Approx(lc.layer_backward));
  CHECK(block_backward_classes(lc).recompute == doctest::Approx(0).epsilon(1e-12));
  CHECK(lc.elementwise_backward > lc.elementwise_forward);
}
