#include "models/gpu.hpp"

#include <algorithm>
#include <cmath>

namespace syncsim::models {

namespace {

std::vector<GpuSpec> presets() {
  // Dense TFLOP/s; HBM and NVLink in bytes/s (NVLink per direction = half the datasheet's total).
  return {
      GpuSpec{.name = "a100",
              .bf16_tflops = 312,
              .fp16_tflops = 312,
              .fp8_tflops = 0,
              .tf32_tflops = 156,
              .hbm_bytes_per_s = 2.039e12,
              .nvlink_bytes_per_s = 300e9,
              .memory_bytes = 80e9},
      GpuSpec{.name = "h100",
              .bf16_tflops = 989,
              .fp16_tflops = 989,
              .fp8_tflops = 1979,
              .tf32_tflops = 494,
              .hbm_bytes_per_s = 3.35e12,
              .nvlink_bytes_per_s = 450e9,
              .memory_bytes = 80e9},
      GpuSpec{.name = "h200",
              .bf16_tflops = 989,
              .fp16_tflops = 989,
              .fp8_tflops = 1979,
              .tf32_tflops = 494,
              .hbm_bytes_per_s = 4.8e12,
              .nvlink_bytes_per_s = 450e9,
              .memory_bytes = 141e9},
      GpuSpec{.name = "b200",
              .bf16_tflops = 2250,
              .fp16_tflops = 2250,
              .fp8_tflops = 4500,
              .tf32_tflops = 1100,
              .hbm_bytes_per_s = 8e12,
              .nvlink_bytes_per_s = 900e9,
              .memory_bytes = 180e9},
  };
}

constexpr double kTile = 128.0;
constexpr double kSms = 132.0;  // H100 SXM; wave quantization only needs the order of magnitude

}  // namespace

std::optional<GpuSpec> gpu_preset(const std::string& name) {
  for (auto& g : presets()) {
    if (g.name == name) return g;
  }
  return std::nullopt;
}

std::vector<std::string> gpu_preset_names() {
  std::vector<std::string> names;
  for (const auto& g : presets()) names.push_back(g.name);
  return names;
}

double peak_flops(const GpuSpec& gpu, DType dtype) {
  switch (dtype) {
    case DType::Bf16:
      return gpu.bf16_tflops * 1e12;
    case DType::Fp16:
      return gpu.fp16_tflops * 1e12;
    case DType::Fp8:
      return gpu.fp8_tflops * 1e12;
    case DType::Tf32:
      return gpu.tf32_tflops * 1e12;
  }
  return 0;
}

double gemm_seconds(const GpuSpec& gpu, DType dtype, double m, double n, double k) {
  const double flops = 2.0 * m * n * k;
  const double tiles = std::ceil(m / kTile) * std::ceil(n / kTile);
  const double waves = std::ceil(tiles / kSms);
  const double wave_efficiency = tiles / (waves * kSms);
  const double element_bytes = dtype == DType::Fp8 ? 1.0 : dtype == DType::Tf32 ? 4.0 : 2.0;
  double efficiency = gpu.max_gemm_efficiency * wave_efficiency;
  if (gpu.gemm_intensity_half > 0) {
    const double intensity = flops / ((m * k + k * n + m * n) * element_bytes);
    efficiency = gpu.max_gemm_efficiency * intensity / (intensity + gpu.gemm_intensity_half);
  }
  const double compute = flops / (peak_flops(gpu, dtype) * efficiency);
  const double memory = (m * k + k * n + m * n) * element_bytes / gpu.hbm_bytes_per_s;
  return std::max(compute, memory) + gpu.kernel_launch_s;
}

}  // namespace syncsim::models
